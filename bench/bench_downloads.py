"""Building a benchmark's downloads at VL-RouterBench's size: 30,540 samples (docs/performance.md).

Builds a scratch SQLite database and private storage under VAR_DIR (a fresh temporary folder unless
given): one benchmark of --samples samples (default 30,540; 20 % dev, 80 % test; every third a
multiple-choice question), each with its own small JPEG (--side px, noise so it does not compress
away), an approved annotation with a region, a transform, two key steps and a two-call chain.
Then, for each split and kind (zip, tsv, parquet), one child process runs the writer the build task
runs (annotation.downloads.writers) into a temporary file and reports: wall time, the process's
peak resident memory (VmHWM) and its resident memory just before the build (Django, pyarrow and the
models imported), so the difference is what the build itself held. The floor printed beside them
is the time a child takes to read every image of the split from storage and nothing else.

    .venv/bin/python bench/bench_downloads.py [--samples 30540] [--side 96] [--kinds zip,tsv,parquet]
    VAR_DIR=/tmp/dl-bench .venv/bin/python bench/bench_downloads.py   # keep (and reuse) the scratch data

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-downloads-"))
os.environ["DATABASE_URL"] = f"sqlite:///{Path(os.environ['VAR_DIR']).resolve() / 'db.sqlite3'}"
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
RESULT = "BENCH-RESULT "
SLUG = "routerbench-size"


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _setup() -> None:
    import django

    django.setup()


def generate(n: int, side: int) -> None:
    """The scratch benchmark, written with bulk inserts (an import would validate every image: not what is measured)."""
    import hashlib
    import io
    import random

    from django.core.management import call_command
    from PIL import Image

    call_command("migrate", verbosity=0)
    from annotation.models import (
        Annotation,
        AnnotationStatus,
        Benchmark,
        Category,
        Domain,
        KeyStep,
        ReferenceToolCall,
        Region,
        Sample,
        SampleMedia,
        sample_media_storage,
    )

    if Sample.objects.filter(benchmark__slug=SLUG).count() == n:
        print(f"reusing the {n:,} samples under {os.environ['VAR_DIR']}", flush=True)
        return
    Benchmark.objects.filter(slug=SLUG).delete()
    started = time.perf_counter()
    benchmark = Benchmark.objects.create(slug=SLUG, name="RouterBench-sized", version="1.0")
    categories = []
    for d in range(5):
        domain = Domain.objects.create(benchmark=benchmark, slug=f"d{d}", name=f"Domain {d}", position=d)
        categories += [Category.objects.create(domain=domain, slug=f"d{d}c{c}", name=f"Category {c}", position=c)
                       for c in range(4)]
    storage = sample_media_storage()
    root = Path(storage.path(f"benchmarks/{SLUG}"))
    rng = random.Random(5)
    samples = []
    for i in range(n):
        image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=80)
        data = buffer.getvalue()
        sha = hashlib.sha256(data).hexdigest()
        name = f"benchmarks/{SLUG}/{sha[:2]}/{sha}.jpg"
        (root / sha[:2]).mkdir(parents=True, exist_ok=True)
        (root / sha[:2] / f"{sha}.jpg").write_bytes(data)
        choice = i % 3 == 0
        samples.append(Sample(
            benchmark=benchmark, category=categories[i % len(categories)], uid=f"rb-{i:06d}", image=name,
            image_sha256=sha, width=side, height=side, question=f"Question {i}: what does the picture show?",
            options={"A": "a cat", "B": "a dog", "C": "a car", "D": "a tree"} if choice else None,
            answer="B" if choice else str(i), answer_type="choice" if choice else "number",
            split="dev" if i % 5 == 0 else "test", position=i, source="bench", meta={"n": i}))
        if (i + 1) % 5000 == 0:
            print(f"  {i + 1:,} images", flush=True)
    Sample.objects.bulk_create(samples, batch_size=2000)
    samples = list(Sample.objects.filter(benchmark=benchmark).order_by("position"))
    SampleMedia.objects.bulk_create([SampleMedia(sample=s, position=0, file=s.image.name, sha256=s.image_sha256,
                                                 width=side, height=side) for s in samples], batch_size=2000)
    Annotation.objects.bulk_create([Annotation(sample=s, status=AnnotationStatus.APPROVED,
                                               transform=[{"op": "rotate", "angle": 90}]) for s in samples],
                                   batch_size=2000)
    annotations = list(Annotation.objects.filter(sample__benchmark=benchmark))
    Region.objects.bulk_create([Region(annotation=a, position=0, x1=4, y1=4, x2=side - 4, y2=side // 2)
                                for a in annotations], batch_size=2000)
    KeyStep.objects.bulk_create([KeyStep(annotation=a, position=p, text=f"Step {p} of sample {a.sample_id}.")
                                 for a in annotations for p in range(2)], batch_size=2000)
    chain = [{"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1"},
             {"tool": "zoom_in", "args": {"bbox": [4, 4, side - 4, side // 2]}, "input": "img1", "output": "img2"}]
    ReferenceToolCall.objects.bulk_create([row for a in annotations for row in ReferenceToolCall.rows_for(a, chain)],
                                          batch_size=2000)
    print(f"generated {n:,} samples in {time.perf_counter() - started:.0f} s under {os.environ['VAR_DIR']}", flush=True)


def child(split: str, kind: str) -> None:
    """One build (or, kind "read", the floor: every image of the split read from storage) in this process."""
    _setup()
    from annotation.downloads.selectors import GOLD_SPLITS, download_key
    from annotation.downloads.writers import WRITERS
    from annotation.media import read_file
    from annotation.models import Benchmark, Sample

    benchmark = Benchmark.objects.get(slug=SLUG)
    key = download_key(benchmark)
    baseline = _status_kb("VmRSS")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=os.environ["VAR_DIR"]) as tmp:
        out = Path(tmp) / f"{split}.{kind}"
        if kind == "read":
            names = Sample.objects.filter(benchmark=benchmark, split=split).values_list("image", flat=True)
            sizes = [len(read_file(name)) for name in names.iterator(chunk_size=2000)]
            count, size = len(sizes), sum(sizes)
        else:
            count = WRITERS[kind](benchmark=benchmark, split=split, out=out, gold=split in GOLD_SPLITS, key=key)
            size = out.stat().st_size
    seconds = time.perf_counter() - started
    print(RESULT + json.dumps({"split": split, "kind": kind, "samples": count, "bytes": size, "seconds": seconds,
                               "baseline_mb": baseline / 1024, "peak_mb": _status_kb("VmHWM") / 1024}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=30_540)
    parser.add_argument("--side", type=int, default=96)
    parser.add_argument("--kinds", default="zip,tsv,parquet")
    parser.add_argument("--child", nargs=2, metavar=("SPLIT", "KIND"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    _setup()
    generate(args.samples, args.side)
    rows = []
    for split in ("dev", "test"):
        for kind in ["read", *args.kinds.split(",")]:
            proc = subprocess.run([sys.executable, __file__, "--child", split, kind], env=os.environ.copy(),
                                  capture_output=True, text=True, check=True)
            result = next(json.loads(line[len(RESULT):]) for line in proc.stdout.splitlines()
                          if line.startswith(RESULT))
            rows.append(result)
            print(f"{split:>4} {kind:<8} {result['samples']:>7,} samples {result['bytes'] / 1e6:>8.1f} MB "
                  f"{result['seconds']:>7.1f} s  peak RSS {result['peak_mb']:>6.0f} MB "
                  f"(+{result['peak_mb'] - result['baseline_mb']:.0f} MB over {result['baseline_mb']:.0f} MB before)",
                  flush=True)


if __name__ == "__main__":
    main()
