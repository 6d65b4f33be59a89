"""Eight anonymous clients hammering the public tabs (issue 28): does another visitor's cached page stay fast?

Reuses a database built by ``bench_leaderboard.py`` (its VAR_DIR/n<size>), migrates it, runs every derived
refresh once (as the worker would), and serves it with gunicorn (``config.settings.base``, 2 sync workers,
the page rate limit off: the clients share one address, and the limit would answer them 429 cheaply).
Then, for --duration seconds, --clients threads GET random public tabs, each with a random unknown
parameter half the time, while one more "visitor" reads the cached overview every 100 ms. Prints that
visitor's median and worst time, and the hammering clients' request count.

    VAR_DIR=/tmp/lb-bench .venv/bin/python bench/bench_leaderboard.py --submissions 1000   # builds n1000
    .venv/bin/python bench/bench_hammer.py --var-dir /tmp/lb-bench/n1000 [--clients 8 --duration 20]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABS = ["", "domains/", "mode-selection/", "process/", "toolchains/", "cost/", "progress/", "routers/",
        "guessability/"]


def get(url: str) -> float:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            response.read()
    except urllib.error.HTTPError as error:
        error.read()
    return 1000 * (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var-dir", required=True)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0)
    args = parser.parse_args()
    var = Path(args.var_dir).resolve()
    env = {**os.environ, "VAR_DIR": str(var), "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "config.settings.base", "ALLOWED_HOSTS": "127.0.0.1,localhost",
           "PAGE_RATE_LIMIT_ANON": "off", "PAGE_RATE_LIMIT_USER": "off", "PYTHONWARNINGS": "ignore"}
    for name in ("REDIS_URL", "CACHE_URL"):
        env.pop(name, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    refresh = ("from annotation.models import Benchmark; from evaluation.queueing import results_changed_run; "
               "[results_changed_run(benchmark_id=b.pk) for b in Benchmark.objects.all()]")
    subprocess.run([sys.executable, "manage.py", "shell", "-c", refresh], cwd=ROOT, env=env, check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
                               f"127.0.0.1:{port}", "--workers", "2", "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}/b/adaptmm-demo/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                get(base)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        for _ in range(4):  # every worker's cache holds the visitor's page
            get(base)
        stop = time.monotonic() + args.duration
        counts = [0] * args.clients

        def hammer(i: int) -> None:
            rng = random.Random(i)
            while time.monotonic() < stop:
                tab = rng.choice(TABS)
                query = f"?x={rng.getrandbits(64):x}" if rng.random() < 0.5 else ""
                get(f"{base}{tab}{query}")
                counts[i] += 1

        threads = [threading.Thread(target=hammer, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        visitor: list[float] = []
        while time.monotonic() < stop:
            visitor.append(get(base))
            time.sleep(0.1)
        for t in threads:
            t.join()
        print(f"{args.clients} clients for {args.duration:.0f} s: {sum(counts)} requests; the visitor's cached "
              f"overview: median {statistics.median(visitor):.1f} ms, worst {max(visitor):.1f} ms over {len(visitor)} "
              f"reads; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


if __name__ == "__main__":
    main()
