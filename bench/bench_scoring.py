"""Scoring throughput at VL-RouterBench scale: 30,540 samples x 3 modes.

Builds a synthetic benchmark and prediction file (fixed seed), then times, from the file's
bytes, (a) merely decoding every line with orjson and (b) decoding + scoring to the final
aggregates (bootstrap intervals included) with the offline judge on every question, the tool
registry's validator and name resolver (``annotation.imagetools``; a stand-in when it is not
importable, and the output says which) and the benchmark's tool set.

The machine is shared: each figure is the median of ``--repeat`` runs (min and max shown), the
ratio is taken run by run (parse and score back to back), and the load average is printed.

    .venv/bin/python bench/bench_scoring.py [--samples 30540] [--repeat 5] [--validator auto]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
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
                        step["tool"] = {"name": tool, "args": tool_args(tool, x, y, rng)}
                    steps.append(step)
                pred["steps"] = steps
            lines.append(orjson.dumps(pred))
    return b"\n".join(lines) + b"\n"


def tool_args(tool: str, x: int, y: int, rng: random.Random) -> dict:
    """Arguments a model would send (valid for the registry's schemas): boxes and lines at
    the sample's region, so they differ from sample to sample, as in a real file."""
    if tool in ("zoom_in", "crop"):
        return {"bbox": [max(0, x - 10), max(0, y - 5), x + 100, y + 70]}
    if tool == "draw_line":
        return {"x1": x, "y1": y + 30, "x2": x + 120, "y2": y + 30}
    if tool == "adjust_contrast":
        return {"alpha": rng.choice([1.2, 1.5, 1.8])}
    return {"angle": 90}


NEEDS = {"zoom_in": "bbox", "crop": "bbox", "rotate": "angle", "adjust_contrast": "alpha",
         "draw_line": "x1"}


def fake_validator(name: str, args: dict) -> list[str]:
    """Stand-in for annotation.imagetools.validate_args: checks the one required argument."""
    need = NEEDS.get(name)
    return [f"missing argument '{need}'"] if need and need not in args else []


def tool_hooks(choice: str) -> tuple[str, Callable | None, Callable[[str, dict], list[str]]]:
    """(description, name resolver, argument validator): the registry's when importable."""
    if choice != "stand-in":
        try:
            from annotation.imagetools import resolve_tool_name, validate_args
        except ImportError:
            if choice == "real":
                raise
        else:
            return "annotation.imagetools.validate_args (the real registry)", resolve_tool_name, \
                validate_args
    return "stand-in (one required-argument check; annotation.imagetools not used)", None, \
        fake_validator


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def med(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=30_540)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--validator", choices=["auto", "real", "stand-in"], default="auto")
    opts = ap.parse_args()
    load_before = os.getloadavg()
    rng = random.Random(7)
    samples = make_samples(opts.samples, rng)
    data = make_file(samples, rng)
    n_pred = data.count(b"\n")
    which, resolve, validator = tool_hooks(opts.validator)
    tools = frozenset((resolve(t) if resolve else None) or t for t in TOOLS)

    t0 = time.perf_counter()
    bench = PreparedBenchmark(samples, resolve)
    prep = time.perf_counter() - t0

    loads = orjson.loads

    def parse() -> object:
        return [loads(line) for line in data.splitlines()]

    def parse_nogc() -> object:
        gc.disable()  # the strictest baseline: decoding alone, without cyclic-GC pauses
        try:
            return parse()
        finally:
            gc.enable()

    def score(check: Callable[[str, dict], list[str]] = validator) -> object:
        return score_submission(
            bench, (loads(line) for line in data.splitlines()), judge=OfflineJudge(),
            tool_validator=check, benchmark_tools=tools, prices=(0.5, 1.5), resolve_tool=resolve)

    cold = timed(score)  # first run in the process (the judge's key-step words not yet known)
    report = score()
    parses, parses_nogc, scores, ratios = [], [], [], []
    for _ in range(opts.repeat):
        p = timed(parse)
        parses_nogc.append(timed(parse_nogc))
        t = timed(score)
        parses.append(p)
        scores.append(t)
        ratios.append(t / p)

    # Diagnostic run (not timed above): how much of a run is spent in the validator itself.
    spent = [0.0, 0]

    def counted(name: str, args: dict) -> list[str]:
        t = time.perf_counter()
        try:
            return validator(name, args)
        finally:
            spent[0] += time.perf_counter() - t
            spent[1] += 1

    score(counted)
    load_after = os.getloadavg()

    total = statistics.median(scores)
    adaptive = report.modes["adaptive"]  # type: ignore[attr-defined]
    print(f"file: {len(data) / 1e6:.1f} MB, {n_pred} predictions, {opts.samples} samples")
    print(f"tool validator: {which}")
    print(f"load average: {load_before[0]:.2f} before, {load_after[0]:.2f} after "
          f"({os.cpu_count()} CPUs); {opts.repeat} runs, medians")
    print(f"prepare benchmark (once per benchmark): {prep:.3f} s")
    print(f"orjson parse only:   {med(parses)}")
    print(f"orjson parse only, GC paused: {med(parses_nogc)}")
    print(f"parse + score:       {med(scores)}  -> {n_pred / total:,.0f} predictions/s "
          f"(first, cold run: {cold:.3f} s)")
    print(f"ratio to parse-only: {statistics.median(ratios):.2f} (run by run; to the GC-paused "
          f"parse: {total / statistics.median(parses_nogc):.2f})")
    print(f"in the tool validator: {spent[0]:.3f} s for {spent[1]} distinct calls "
          f"({1e6 * spent[0] / max(1, spent[1]):.1f} us each); scoring without it: "
          f"{n_pred / max(1e-9, total - spent[0]):,.0f} predictions/s")
    print(f"adaptive accuracy {adaptive.accuracy.overall.percent:.2f} % "
          f"(n={adaptive.accuracy.overall.n}), tool_eff {adaptive.process.tool_eff.percent:.1f} % "
          f"(n={adaptive.process.tool_eff.n}), kcov n={adaptive.process.kcov.n}, "
          f"MCC {report.mode_selection.mcc:.3f}")  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
