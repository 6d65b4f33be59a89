"""Scoring throughput at VL-RouterBench scale: 30,540 samples x 3 modes.

Builds a synthetic benchmark and prediction file (fixed seed), then times, from the file's
bytes, (a) merely decoding every line with orjson and (b) decoding + scoring to the final
aggregates with the offline judge, a stand-in tool validator and a fixed tool set.

    .venv/bin/python bench/bench_scoring.py [--samples 30540] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time
from collections.abc import Callable

import orjson

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evaluation.judges import OfflineJudge  # noqa: E402
from evaluation.metrics import PreparedBenchmark, score_submission  # noqa: E402

DOMAINS = {"real_world": ["counting", "attribute"], "ocr": ["table", "document"],
           "gui": ["icon", "layout"], "knowledge": ["chart", "science"], "math": ["geometry", "plot"]}
TOOLS = ["zoom_in", "rotate", "crop", "adjust_contrast", "draw_line"]
WORDS = ("read the value in the table row find total column label rotate image upright zoom "
         "into region compare bars count objects left right top bottom answer is").split()


def make_samples(n: int, rng: random.Random) -> list[dict]:
    out = []
    for i in range(n):
        domain = rng.choice(list(DOMAINS))
        kind = rng.choice(["choice", "number", "text"])
        x, y = rng.randint(0, 800), rng.randint(0, 800)
        sample = {
            "uid": f"s{i:06d}", "domain": domain, "category": rng.choice(DOMAINS[domain]),
            "answer_type": kind, "aux_line": rng.random() < 0.05,
            "regions": [[x, y, x + 120, y + 60]],
            "transform": [{"op": "rotate", "angle": 90}] if rng.random() < 0.3 else [],
            "key_steps": [" ".join(rng.choices(WORDS, k=6)) for _ in range(3)],
            "toolchain": [{"tool": "zoom_in", "args": {"bbox": [x, y, x + 120, y + 60]}}],
        }
        if kind == "choice":
            sample["options"] = {"A": "red", "B": "blue", "C": "green", "D": "black"}
            sample["answer"] = rng.choice("ABCD")
        elif kind == "number":
            sample["answer"] = str(rng.randint(1, 50_000))
        else:
            sample["answer"] = " ".join(rng.choices(WORDS, k=2))
        out.append(sample)
    return out


def make_file(samples: list[dict], rng: random.Random) -> bytes:
    lines = []
    for s in samples:
        for mode in ("text", "adaptive", "oracle"):
            right = rng.random() < 0.6
            ans = s["answer"] if right else "42 units"
            pred: dict = {"sample_id": s["uid"], "mode": mode, "answer": f"<answer>{ans}</answer>",
                          "usage": {"input_tokens": rng.randint(300, 3000),
                                    "output_tokens": rng.randint(20, 400)},
                          "latency_ms": rng.randint(200, 9000)}
            if mode == "adaptive":
                steps = []
                for _ in range(rng.randint(1, 4)):
                    step: dict = {"thought": " ".join(rng.choices(WORDS, k=10))}
                    if rng.random() < 0.5:
                        tool = rng.choice(TOOLS)
                        x, y = s["regions"][0][:2]
                        args = {"bbox": [x - 10, y - 5, x + 100, y + 70]} if tool in (
                            "zoom_in", "crop") else {"angle": 90}
                        step["tool"] = {"name": tool, "args": args}
                    steps.append(step)
                pred["steps"] = steps
            lines.append(orjson.dumps(pred))
    return b"\n".join(lines) + b"\n"


def fake_validator(name: str, args: dict) -> list[str]:
    """Stand-in for annotation.imagetools.validate_args: checks the one required argument."""
    need = "bbox" if name in ("zoom_in", "crop") else "angle" if name == "rotate" else None
    return [f"missing argument '{need}'"] if need and need not in args else []


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=30_540)
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    rng = random.Random(7)
    samples = make_samples(opts.samples, rng)
    data = make_file(samples, rng)
    n_pred = data.count(b"\n")

    t0 = time.perf_counter()
    bench = PreparedBenchmark(samples)
    prep = time.perf_counter() - t0

    loads = orjson.loads
    parse = best_of(opts.repeat, lambda: [loads(line) for line in data.splitlines()])
    gc.disable()  # the strictest baseline: decoding alone, without cyclic-GC pauses
    parse_nogc = best_of(opts.repeat, lambda: [loads(line) for line in data.splitlines()])
    gc.enable()

    def score() -> object:
        return score_submission(
            bench, (loads(line) for line in data.splitlines()), judge=OfflineJudge(),
            tool_validator=fake_validator, benchmark_tools=frozenset(TOOLS), prices=(0.5, 1.5))

    report = score()  # warm-up, and the figures printed below
    total = best_of(opts.repeat, score)
    adaptive = report.modes["adaptive"]  # type: ignore[attr-defined]
    print(f"file: {len(data) / 1e6:.1f} MB, {n_pred} predictions, {opts.samples} samples")
    print(f"prepare benchmark (once per benchmark): {prep:.3f} s")
    print(f"orjson parse only:   {parse:.3f} s  ({n_pred / parse:,.0f} lines/s)")
    print(f"parse + score:       {total:.3f} s  ({n_pred / total:,.0f} predictions/s)")
    print(f"orjson parse only, GC paused: {parse_nogc:.3f} s")
    print(f"ratio to parse-only: {total / parse:.2f} (to the GC-paused parse: "
          f"{total / parse_nogc:.2f})")
    print(f"adaptive accuracy {adaptive.accuracy.overall.percent:.2f} % "
          f"(n={adaptive.accuracy.overall.n}), tool_eff n={adaptive.process.tool_eff.n}, "
          f"kcov n={adaptive.process.kcov.n}, MCC {report.mode_selection.mcc:.3f}")  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
