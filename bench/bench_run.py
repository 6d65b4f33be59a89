"""The harness at scale (docs/runs.md, docs/performance.md): 1,000 samples in adaptive mode, up to 4
turns each (three tool calls, then the answer), against the simulated model in its own process
answering every request after --latency seconds (default 2.0), with --concurrency (default 16)
(sample, mode) pairs in flight. No database: the samples are small real images on disk, the tools
run through the registry, every request goes over HTTP.

    .venv/bin/python bench/bench_run.py                      # 1,000 x 4 turns, 2 s, 16 in flight
    .venv/bin/python bench/bench_run.py --samples 200 --latency 0.5
    .venv/bin/python bench/bench_run.py --samples 150 --latency 0.2 --fail-every 2:429:2   # 429s, Retry-After 2 s

The floor is the time the server alone needs: samples x turns x latency / concurrency
(1,000 x 4 x 2 s / 16 = 500 s). Prints the wall time, the ratio to the floor, the requests the
server answered, and a second run from the cache (no request). With ``--fail-every N:429:S`` the server
answers every N-th request with 429 and ``Retry-After: S``; the floor is then the clean floor plus the
time the Retry-After headers held every thread (the union of the pauses they asked for), and the
ratio says what the run spends beyond what the headers impose.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from evaluation.harness.cache import SqliteRequestCache  # noqa: E402
from evaluation.harness.client import Endpoint, Settings  # noqa: E402
from evaluation.harness.items import Medium, RunItem  # noqa: E402
from evaluation.harness.loop import Protocol  # noqa: E402
from evaluation.harness.runner import run  # noqa: E402
from evaluation.harness.simulated import serving  # noqa: E402
from evaluation.harness.tools import ADAPT_TOOLS  # noqa: E402


def samples(folder: Path, n: int) -> tuple[list[RunItem], Path]:
    items, key = [], []
    for i in range(n):
        image = np.full((240, 320, 3), (i * 7) % 200 + 30, np.uint8)
        cv2.putText(image, str(i), (40, 140), cv2.FONT_HERSHEY_SIMPLEX, 2, (255, 255, 255), 3)
        path = folder / f"{i}.png"
        cv2.imwrite(str(path), image)
        question = f"Which number is written on card {i}?"
        items.append(RunItem(uid=f"b{i:05d}", question=question, options=None, answer_type="number",
                             media=(Medium(ref="img0", path=str(path), width=320, height=240),)))
        key.append({"uid": f"b{i:05d}", "question": question, "options": None, "answer": str(i),
                    "answer_type": "number", "img0_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                    "width": 320, "height": 240, "toolchain": []})
    key_path = folder / "key.jsonl"
    key_path.write_text("".join(json.dumps(k) + "\n" for k in key))
    return items, key_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--fail-every", dest="fail_every", default="", help="N:STATUS[:RETRY_AFTER] (simulated.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        folder = Path(tmp)
        items, key = samples(folder, args.samples)
        log = folder / "log.jsonl"
        protocol = Protocol(family="generic", tools=ADAPT_TOOLS, max_turns=8)
        faults = ["--fail-every", args.fail_every] if args.fail_every else []
        with serving(key, "--delay", str(args.latency), "--tool-calls", str(args.turns - 1), *faults, log=log) as url:
            settings = Settings(model="sim-bench", base_url=url, timeout=60)
            endpoint = Endpoint(settings, cache=SqliteRequestCache(folder / "cache.sqlite3", owner="local:bench"))
            started = time.monotonic()
            lines, summary = run(items, ["adaptive"], endpoint, protocol, concurrency=args.concurrency,
                                 out=folder / "out.jsonl")
            wall = time.monotonic() - started
            answered = sum(1 for _ in log.open())
            endpoint.close()
            again = Endpoint(settings, cache=SqliteRequestCache(folder / "cache.sqlite3", owner="local:bench"))
            started = time.monotonic()
            _, replay = run(items, ["adaptive"], again, protocol, concurrency=args.concurrency)
            replay_wall = time.monotonic() - started
        floor = args.samples * args.turns * args.latency / args.concurrency + endpoint.gate.paused_seconds
        turns = sum(line["turns"] for line in lines)
        print(f"{args.samples} samples, {turns} turns ({turns / args.samples:.2f} a sample), latency "
              f"{args.latency} s, {args.concurrency} in flight")
        print(f"run: {wall:.1f} s; floor {floor:.1f} s (of which {endpoint.gate.paused_seconds:.1f} s of pauses the "
              f"headers asked for, {endpoint.counters.retries} requests asked again); ratio {wall / floor:.3f}")
        print(f"server answered {answered} requests; {summary.answered} answered lines, failures {summary.failures}")
        print(f"second run from the cache: {replay_wall:.1f} s, {replay.requests_sent} requests sent")


if __name__ == "__main__":
    main()
