"""Importing a VLMEvalKit TSV at VL-RouterBench's size: 30,540 rows (docs/performance.md).

Writes (once, then reuses) a VLMEvalKit dataset TSV under VAR_DIR: --rows rows (default 30,540),
each with its own JPEG of about 50 KB (smooth colour plus noise, 448x336, so it neither compresses
away nor repeats), base64 in the `image` column as VLMEvalKit ships them; two rows in three are
multiple choice (columns A-D), the rest free text; `category` and `l2-category` spread over 14 x 3.
Then, each in a child process so its peak memory is its own: a first import into an empty
database (`import_benchmark --format vlmevalkit`'s service, annotation.services.benchmark_import),
and a re-import of the same file, nothing changed. Each reports the wall time, rows per second and
the child's CPU time (user and system: on a shared machine the wall time is mostly the other processes'),
the one-minute load average when it ended, and its peak resident memory (VmHWM), with its resident memory
before the import (Django and the models imported) beside it.

    .venv/bin/python bench/bench_import.py [--rows 30540]
    VAR_DIR=/tmp/import-bench .venv/bin/python bench/bench_import.py   # keep (and reuse) the TSV and database
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_import .venv/bin/python bench/bench_import.py

Goals (issue 24): a first import of at least 2,000 rows/s; a re-import with no change in at most 20 %
of the first import's time. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-import-"))
VAR = Path(os.environ["VAR_DIR"]).resolve()
VAR.mkdir(parents=True, exist_ok=True)
os.environ.setdefault("DATABASE_URL", f"sqlite:///{VAR / 'db.sqlite3'}")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")  # the downloads' build task is only published, never run
RESULT = "BENCH-RESULT "
SLUG = "routerbench-size"
DATASETS = ["MMStar", "ChartQA_TEST", "DocVQA_VAL", "AI2D_TEST", "OCRBench", "MathVista_MINI", "RealWorldQA",
            "MMMU_DEV_VAL", "TextVQA_VAL", "InfoVQA_VAL", "HallusionBench", "MathVision_MINI", "MathVerse_MINI",
            "MMBench_DEV_EN_V11"]  # categories; three task groups as the domains


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def write_tsv(path: Path, rows: int) -> None:
    import cv2
    import numpy as np

    rng = np.random.default_rng(42)
    noise = rng.integers(-18, 18, (336, 448, 3)).astype(np.int16)
    tmp = path.with_suffix(".part")
    with tmp.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["index", "image", "question", "A", "B", "C", "D", "answer", "category", "l2-category", "split"])
        for i in range(rows):
            base = cv2.resize(rng.integers(0, 255, (24, 32, 3), dtype=np.uint8), (448, 336), interpolation=cv2.INTER_CUBIC)
            pixels = np.clip(base.astype(np.int16) + np.roll(noise, i * 7, axis=1), 0, 255).astype(np.uint8)
            ok, jpeg = cv2.imencode(".jpg", pixels, [cv2.IMWRITE_JPEG_QUALITY, 88])
            assert ok
            choice = i % 3 != 2
            options = [f"option {k} of row {i}" for k in range(4)] if choice else ["", "", "", ""]
            answer = "ABCD"[i % 4] if choice else str(i % 97)
            dataset = DATASETS[i % len(DATASETS)]
            group = ("General", "STEM", "Charts & OCR")[i % len(DATASETS) % 3]
            writer.writerow([i, base64.b64encode(jpeg.tobytes()).decode("ascii"),
                             f"Row {i}: what does the picture show?", *options, answer, dataset, group,
                             "dev" if i % 10 == 0 else "test"])
    tmp.rename(path)


def child(path: Path, slug: str) -> None:
    import django

    django.setup()
    from annotation.services import benchmark_import

    before_kb = _status_kb("VmRSS")
    start, cpu_start = time.perf_counter(), time.process_time()
    summary = benchmark_import(path=path, slug=slug, format="vlmevalkit")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    print(RESULT + json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "load": os.getloadavg()[0],
                               "created": summary.created, "updated": summary.updated,
                               "unchanged": summary.unchanged, "peak_mb": _status_kb("VmHWM") / 1024,
                               "before_mb": before_kb / 1024}))


def run_child(path: Path, slug: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", str(path), "--slug", slug], capture_output=True,
                          text=True, check=False)
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(proc.returncode)
    line = next(x for x in proc.stdout.splitlines() if x.startswith(RESULT))
    return json.loads(line[len(RESULT):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, default=30_540)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--slug", default=SLUG, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.slug)
        return
    tsv = VAR / f"vlmevalkit-{args.rows}.tsv"
    if not tsv.exists():
        started = time.perf_counter()
        write_tsv(tsv, args.rows)
        print(f"wrote {tsv} ({tsv.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - started:.0f} s")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    slug = f"{SLUG}-{time.strftime('%Y%m%d%H%M%S')}"  # a new benchmark: the first import creates every sample
    print(f"database: {os.environ['DATABASE_URL'].split('@')[-1]}; {args.rows:,} rows, {tsv.stat().st_size / 1e9:.2f} GB")
    first = run_child(tsv, slug)
    again = run_child(tsv, slug)
    for label, r in (("first import", first), ("re-import, unchanged", again)):
        print(f"{label:22} {r['seconds']:7.1f} s  {args.rows / r['seconds']:7.0f} rows/s  CPU {r['cpu_seconds']:6.1f} s "
              f"({args.rows / r['cpu_seconds']:5.0f} rows per CPU s)  load {r['load']:.1f}  peak {r['peak_mb']:6.0f} MB "
              f"(before the import {r['before_mb']:.0f} MB)  created {r['created']}, updated {r['updated']}, "
              f"unchanged {r['unchanged']}")
    print(f"re-import / first import: {again['seconds'] / first['seconds']:.0%} of the wall time, "
          f"{again['cpu_seconds'] / first['cpu_seconds']:.0%} of the CPU time  (goals: >= 2,000 rows/s; <= 20 %)")


if __name__ == "__main__":
    main()
