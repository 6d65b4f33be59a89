"""The submission pipeline end to end: API POST -> done, with a real Celery worker process.

Two files: the demo benchmark's simulated file (fixtures/demo, 3 modes) and a synthetic
VL-RouterBench-scale one (30,540 samples x 3 modes = 91,620 lines, from bench_scoring.py's
generator). For each: the benchmark is written to a fresh database, a worker
(`celery -A config worker --pool solo`) is started and warmed up, the file is POSTed to
/api/v1/benchmarks/<slug>/submissions/ through Django's test client, and the clock stops when the
submission's row says `done`. The worker's peak resident memory is its VmHWM from /proc.

    .venv/bin/python bench/bench_pipeline.py                 # SQLite + filesystem broker, in a temp dir
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_scratch CELERY_BROKER_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/bench_pipeline.py             # a SCRATCH PostgreSQL database: it is flushed

Options: --samples N (default 30540), --skip-demo, --skip-large, --cold-cache (touch the benchmark
after the warm-up, so the worker's prepared-benchmark cache misses and the timed submission reads
the samples again, as the first submission to a benchmark after an edit does), --restart SECONDS
(after the warm-up submission, start a fresh worker and POST that many seconds later: the first
submission after a deploy; the new worker warms its cache in the background unless
SCORING_WARMUP=0 is set, see evaluation/benchmark_cache.py).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
VAR = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
os.environ.setdefault("VAR_DIR", str(VAR))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
os.environ["PAGE_RATE_LIMIT_ANON"] = os.environ["PAGE_RATE_LIMIT_USER"] = "off"  # the bench polls pages
os.environ.setdefault("DEBUG", "0")  # as in production: no per-query logging in the worker
QUEUE = f"bench-{uuid.uuid4().hex[:6]}"
os.environ["SUBMISSIONS_QUEUE"] = QUEUE

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.files.base import ContentFile  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from annotation.models import (  # noqa: E402
    Annotation, Benchmark, Category, Domain, KeyStep, ReferenceToolCall, Region, Sample,
)
from evaluation.models import Submission  # noqa: E402


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    return os.environ["DATABASE_URL"]


def synthetic_benchmark(n: int) -> tuple[str, bytes]:
    """bench_scoring's synthetic samples, written with bulk inserts; returns (slug, prediction file)."""
    from bench_scoring import make_file, make_samples

    rng = random.Random(7)
    samples = make_samples(n, rng)
    data = make_file(samples, rng)
    bench = Benchmark.objects.create(slug="router-scale", name="Synthetic 30k")
    cats: dict[tuple[str, str], Category] = {}
    for d in sorted({s["domain"] for s in samples}):
        dom = Domain.objects.create(benchmark=bench, slug=d, name=d)
        for c in sorted({s["category"] for s in samples if s["domain"] == d}):
            cats[(d, c)] = Category.objects.create(domain=dom, slug=c, name=c)
    rows = Sample.objects.bulk_create([
        Sample(benchmark=bench, category=cats[(s["domain"], s["category"])], uid=s["uid"], image="bench/x.png",
               image_sha256="0" * 64, width=1000, height=1000, question="q", options=s.get("options"),
               answer=s["answer"], answer_type=s["answer_type"], aux_line=s["aux_line"], position=i)
        for i, s in enumerate(samples)], batch_size=2000)
    anns = Annotation.objects.bulk_create([
        Annotation(sample=r, status="approved", transform=s["transform"]) for r, s in zip(rows, samples)],
        batch_size=2000)
    Region.objects.bulk_create([Region(annotation=a, position=0, x1=s["regions"][0][0], y1=s["regions"][0][1],
                                       x2=s["regions"][0][2], y2=s["regions"][0][3])
                                for a, s in zip(anns, samples)], batch_size=2000)
    KeyStep.objects.bulk_create([KeyStep(annotation=a, position=i, text=t) for a, s in zip(anns, samples)
                                 for i, t in enumerate(s["key_steps"])], batch_size=2000)
    ReferenceToolCall.objects.bulk_create([
        ReferenceToolCall(annotation=a, position=i, tool=c["tool"], args=c["args"], output_ref=f"img{i + 1}")
        for a, s in zip(anns, samples) for i, c in enumerate(s["toolchain"])], batch_size=2000)
    return bench.slug, data


def demo_benchmark() -> tuple[str, bytes]:
    import orjson

    from annotation.demo import demo_benchmark_load
    from evaluation.demo import DEMO_MODELS
    from evaluation.selectors import scoring_samples
    from evaluation.simulator import simulate

    demo_benchmark_load()
    bench = Benchmark.objects.get(slug="adaptmm-demo")
    samples, _ = scoring_samples(benchmark=bench)
    return bench.slug, b"".join(orjson.dumps(x) + b"\n" for x in simulate(samples, DEMO_MODELS[0].profile))


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_worker() -> subprocess.Popen:
    env = dict(os.environ, DATABASE_URL=database_url())
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", QUEUE, "--pool", "solo",
         "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=(VAR / "worker.log").open("wb"))


def run(client: Client, slug: str, data: bytes, label: str, cold: bool = False,
        restart: float | None = None) -> None:
    worker = start_worker()
    try:
        # Warm-up: the worker's imports and first connection are not part of a submission's time.
        warm = client.post(f"/api/v1/benchmarks/{slug}/submissions/",
                           {"file": ContentFile(data[: data.index(b"\n") + 1], name="w.jsonl"),
                            "model_name": "warm-up"})
        wait(warm.json()["id"], 120)
        if cold:
            Benchmark.objects.get(slug=slug).save()  # a new updated_at: the worker's cache misses
        if restart is not None:
            worker.kill()
            worker.wait()
            worker = start_worker()  # a fresh process: an empty cache, warmed in the background
            time.sleep(restart)
        base = peak_rss_mb(worker.pid)
        t0 = time.perf_counter()
        resp = client.post(f"/api/v1/benchmarks/{slug}/submissions/",
                           {"file": ContentFile(data, name="p.jsonl"), "model_name": label})
        t_post = time.perf_counter() - t0
        sub = wait(resp.json()["id"], 600)
        total = time.perf_counter() - t0
        peak = peak_rss_mb(worker.pid)
    finally:
        worker.kill()
        worker.wait()
    print(f"{label}: {sub.n_predictions:,} predictions, {len(data) / 1e6:.1f} MB; POST answered in {t_post:.2f} s; "
          f"POST -> done {total:.2f} s; worker peak RSS {peak:.0f} MB (after warm-up {base:.0f} MB); "
          f"status {sub.status} {sub.failure_reason[:200]}")


def wait(pk: int, timeout: float) -> Submission:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sub = Submission.objects.get(pk=pk)
        if sub.is_final:
            return sub
        time.sleep(0.05)
    raise SystemExit(f"submission {pk} not final after {timeout} s; see {VAR / 'worker.log'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=30_540)
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--cold-cache", action="store_true")
    ap.add_argument("--restart", type=float, default=None, metavar="SECONDS")
    opts = ap.parse_args()
    call_command("migrate", verbosity=0)
    if connection.vendor != "sqlite":
        call_command("flush", interactive=False, verbosity=0)
    staff = get_user_model().objects.create_user("bench", is_staff=True)  # exempt from the daily limits
    client = Client(SERVER_NAME="localhost")  # an ALLOWED_HOSTS name
    client.force_login(staff)
    print(f"database {connection.vendor}, broker {os.environ.get('CELERY_BROKER_URL', 'filesystem')}, "
          f"VAR_DIR {VAR}")
    if not opts.skip_demo:
        run(client, *demo_benchmark(), label="demo file")
    if not opts.skip_large:
        t0 = time.perf_counter()
        slug, data = synthetic_benchmark(opts.samples)
        print(f"(synthetic benchmark of {opts.samples:,} samples written in {time.perf_counter() - t0:.1f} s)")
        label = f"{opts.samples:,} x 3 file" + (" (cold cache)" if opts.cold_cache else "")
        if opts.restart is not None:
            warmup = os.environ.get("SCORING_WARMUP", "1") not in ("0", "false", "no", "off")
            label += f" (fresh worker, POST after {opts.restart:g} s, warm-up {'on' if warmup else 'off'})"
        run(client, slug, data, label=label, cold=opts.cold_cache, restart=opts.restart)


if __name__ == "__main__":
    main()
