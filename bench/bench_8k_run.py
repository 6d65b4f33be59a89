"""A whole `run_model` run on HR-Bench-8K-shaped images (issue 35: "the run's peak memory on its 8K images
... under 1 GB per worker process"; docs/performance.md).

Generates --images images of --size pixels (default 4 of 7680 x 4320, HR-Bench 8K's shape) the way the
HR-Bench-shaped demo does (fixtures/releases/hrbench_demo.py: a busy picture, one small numbered tag that
decides the answer), as one VLMEvalKit TSV; imports it into a throwaway SQLite database (its own child
process: `import_benchmark` without --format, the VLMEvalKit reader and HR-Bench's profile), then runs
`run_model` in text, adaptive and blind mode against the simulated model (its own process; one zoom in
adaptive mode) with the command's defaults (4 pairs in flight, max_image_pixels 2048 x 2048). Each child
reports its peak resident memory (VmHWM, its own: a child's ru_maxrss would carry the parent's across exec),
its resident memory after Django's setup, CPU and wall time. Then what each mode answered right, read from
the prediction file against the TSV's answers (text and blind cannot read the tag; adaptive can).

    nice .venv/bin/python bench/bench_8k_run.py
    nice .venv/bin/python bench/bench_8k_run.py --images 8 --concurrency 8

Goal: under 1 GB per worker process. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from _proc import report, run_child, scratch_env, status_kb

VAR = scratch_env("bench-8k-")
SLUG = "hrbench-8k-bench"


def child(step: str, argv: list[str]) -> None:
    """One step in this process: ``import`` (TSV) or ``run`` (run_model's arguments after the slug)."""
    import django

    django.setup()
    from io import StringIO

    from django.core.management import call_command

    import evaluation.harness.loop  # noqa: F401  (the harness and the registry imported before the baseline)

    before_kb = status_kb("VmRSS")
    out = StringIO()
    start, cpu = time.perf_counter(), time.process_time()
    if step == "import":
        call_command("import_benchmark", argv[0], slug=SLUG, no_progress=True, stdout=out, stderr=out)
    else:
        call_command("run_model", SLUG, *argv, stdout=out)
    report({"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "load": os.getloadavg()[0], "peak_mb": status_kb("VmHWM") / 1024, "before_mb": before_kb / 1024,
            "output": out.getvalue().strip()[-600:]})


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--size", default="7680x4320", help="WIDTHxHEIGHT")
    parser.add_argument("--concurrency", type=int, default=4, help="run_model's (sample, mode) pairs in flight")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    assert len(size) == 2

    from fixtures.releases import hrbench_demo

    started = time.perf_counter()
    tsv = hrbench_demo.write(VAR / "release", n=args.images, size=(size[0], size[1]))
    print(f"wrote {tsv} ({args.images} images of {size[0]} x {size[1]}, {tsv.stat().st_size / 1e6:.1f} MB) "
          f"in {time.perf_counter() - started:.0f} s; VAR_DIR {VAR}")

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    imported = run_child(__file__, "import", str(tsv))

    from annotation.models import Benchmark
    from evaluation.harness.simulated import serving
    from evaluation.run_inputs import write_simulated_key

    benchmark = Benchmark.objects.get(slug=SLUG)
    key = write_simulated_key(benchmark, VAR / "key.jsonl")
    out = VAR / "predictions.jsonl"
    with serving(key, "--tool-calls", "1") as url:
        ran = run_child(__file__, "run", "--endpoint", url, "--model", "sim-8k", "--modes", "text,adaptive,blind",
                        "--concurrency", str(args.concurrency), "--out", str(out),
                        "--cache", str(VAR / "cache.sqlite3"), "--no-progress")
    for label, r in (("import_benchmark", imported), ("run_model", ran)):
        print(f"{label:17} {r['seconds']:6.1f} s  CPU {r['cpu_seconds']:6.1f} s  load {r['load']:.1f}  "
              f"peak {r['peak_mb']:6.0f} MB (after Django's setup {r['before_mb']:.0f} MB)")
    print("run_model said:", ran["output"].splitlines()[-1])
    sent: set[tuple[int, int]] = set()
    for line in (json.loads(x) for x in out.read_text().splitlines()):
        for sizes in line["run"].get("images_sent_sizes", []):
            sent.update(tuple(s) for s in sizes)
    print(f"image sizes sent to the model (width, height): {sorted(sent)}")

    from io import StringIO

    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("bench", "bench@example.org", "pw")
    printed = StringIO()
    call_command("submit", SLUG, str(out), "--model", "sim-8k", "--user", "bench", "--sync", stdout=printed)
    results = json.loads(printed.getvalue().split("\n", 1)[1])
    print("scored right (of", args.images, "):", ", ".join(
        f"{m} {results['modes'][m]['accuracy']['overall']['count']}" for m in ("text", "adaptive", "blind")))

if __name__ == "__main__":
    main()
