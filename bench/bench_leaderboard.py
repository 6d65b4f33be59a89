"""The leaderboard's overview page with 1,000 finished public submissions.

Builds, in a fresh SQLite database under a temporary VAR_DIR: the demo benchmark (151 samples),
one simulated submission scored through the real pipeline, and 999 copies of it (each with its
453 prediction rows and its own prices, weights and accuracies, so sorting has work to do).
Then it measures, for GET /b/adaptmm-demo/ (the overview, 50 rows a page, sorted by adaptive
accuracy, with paired tests between neighbours):

1. the one-off build of the derived board entries (leaderboard.services.entries_sync);
2. median server time through Django's handler (test client), uncached: the cache cleared
   before each request, so selectors, neighbour tests and template all run;
3. median server time, cached (the fragment served from the per-benchmark cache);
4. requests per second under concurrent load on localhost: a pre-forked WSGI server (one
   process per core, the standard library's wsgiref) and an asyncio client keeping C
   connections busy for D seconds, all on this machine.

    .venv/bin/python bench/bench_leaderboard.py [--submissions 1000] [--concurrency 16] [--duration 10]
    VAR_DIR=/tmp/lb-bench .venv/bin/python bench/bench_leaderboard.py   # keep (and reuse) the built database
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-leaderboard-"))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
os.environ.pop("REDIS_URL", None)
os.environ.pop("CACHE_URL", None)

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

URL = "/b/adaptmm-demo/"


def build(n: int) -> None:
    import copy

    import orjson
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile
    from django.utils import timezone

    from annotation.demo import demo_benchmark_load
    from annotation.models import Benchmark
    from evaluation import selectors, services
    from evaluation.models import PredictionResult, Submission
    from evaluation.simulator import Profile, simulate

    if Submission.objects.filter(benchmark__slug="adaptmm-demo").count() >= n:
        return  # VAR_DIR given and already built: reuse it
    demo_benchmark_load()
    benchmark = Benchmark.objects.get(slug="adaptmm-demo")
    owner = get_user_model().objects.create_user("bench", is_staff=True)
    samples, _ = selectors.scoring_samples(benchmark=benchmark)
    content = b"".join(orjson.dumps(x) + b"\n" for x in simulate(samples, Profile(seed=7)))
    template = services.submission_create(
        benchmark=benchmark, owner=owner, file=ContentFile(content, name="sim.jsonl"), model_name="Template",
        is_public=True, enforce_limits=False, enqueue=False, price_input_per_mtok=1.0, price_output_per_mtok=4.0)
    template = services.submission_process_sync(submission=template)
    rng = random.Random(1)
    now = timezone.now()
    subs = []
    for i in range(n - 1):
        results = copy.deepcopy(template.results)
        for mode in results["modes"].values():  # spread the accuracies so the order means something
            overall = mode["accuracy"]["overall"]
            overall["count"] = max(0, min(overall["n"], overall["count"] + rng.randint(-30, 30)))
            overall["value"] = overall["count"] / overall["n"]
            overall["percent"] = 100 * overall["value"]
        subs.append(Submission(
            benchmark=benchmark, owner=owner, model_name=f"Model {i:04d}", organisation=f"Org {i % 37}",
            weights=rng.choice(["open", "closed", ""]), is_public=True, is_demo=True, status="done", results=results,
            file=template.file.name, price_input_per_mtok=rng.uniform(0.05, 5), price_output_per_mtok=4.0,
            finished_at=now, scored_at=now))
    subs = Submission.objects.bulk_create(subs, batch_size=500)
    rows = list(PredictionResult.objects.filter(submission=template).values())
    batch = []
    for sub in subs:
        batch += [PredictionResult(**{**r, "id": None, "submission_id": sub.pk}) for r in rows]
        if len(batch) >= 20_000:
            PredictionResult.objects.bulk_create(batch, batch_size=2000)
            batch = []
    PredictionResult.objects.bulk_create(batch, batch_size=2000)


def median_ms(client: Client, runs: int, *, uncached: bool) -> float:
    times = []
    for _ in range(runs):
        if uncached:
            cache.clear()
        start = time.perf_counter()
        response = client.get(URL)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    return statistics.median(times)


def serve(sock: socket.socket) -> None:
    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = WSGIServer(("127.0.0.1", 0), Quiet, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    server.server_address = sock.getsockname()
    server.server_name, server.server_port = "127.0.0.1", sock.getsockname()[1]
    server.setup_environ()
    server.set_app(get_wsgi_application())
    server.serve_forever()


async def load(port: int, concurrency: int, duration: float) -> tuple[int, int]:
    done = errors = 0
    stop = time.perf_counter() + duration
    request = f"GET {URL} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode()

    async def worker() -> None:
        nonlocal done, errors
        while time.perf_counter() < stop:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            data = await reader.read()
            writer.close()
            if data.startswith(b"HTTP/1.0 200") or data.startswith(b"HTTP/1.1 200"):
                done += 1
            else:
                errors += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done, errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    from annotation.models import Benchmark
    from leaderboard.services import entries_sync

    call_command("migrate", verbosity=0)
    t = time.perf_counter()
    build(args.submissions)
    print(f"built {args.submissions} submissions in {time.perf_counter() - t:.1f} s")
    benchmark = Benchmark.objects.get(slug="adaptmm-demo")
    t = time.perf_counter()
    written = entries_sync(benchmark)
    print(f"board entries built once: {written} in {time.perf_counter() - t:.2f} s")
    client = Client()
    median_ms(client, 3, uncached=True)  # warm up imports and templates
    print(f"overview, uncached: median {median_ms(client, 31, uncached=True):.1f} ms over 31 requests")
    client.get(URL)
    print(f"overview, cached:   median {median_ms(client, 301, uncached=False):.2f} ms over 301 requests")

    from django.db import connections

    connections.close_all()  # each forked worker opens its own connection
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    port = sock.getsockname()[1]
    pids = []
    for _ in range(args.workers):
        pid = os.fork()
        if pid == 0:
            serve(sock)
            os._exit(0)
        pids.append(pid)
    try:
        asyncio.run(load(port, 4, 2.0))  # warm every worker's cache
        done, errors = asyncio.run(load(port, args.concurrency, args.duration))
        print(f"concurrent load: {done / args.duration:.0f} requests/s ({done} in {args.duration:.0f} s, "
              f"{errors} errors) with {args.workers} wsgiref worker processes and {args.concurrency} connections")
    finally:
        for pid in pids:
            os.kill(pid, 15)
            os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
