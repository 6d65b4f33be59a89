"""The leaderboard's overview page with 1,000 and with 10,000 finished public submissions.

Runs itself once per size (``--sizes 1000,10000``, each in its own process and database under
VAR_DIR/n<size>) and prints the figures side by side with their ratio: a cached page must cost
the same whatever the size. Each run builds, in a SQLite database: the demo benchmark (151
samples), one simulated submission scored through the real pipeline (the template), and N - 1 copies
of it written in bulk (``build``: a submission and its board entry each, a few thousand a statement,
not through the pipeline; each copy's per-sample vectors are the template's with a share of its answers
redrawn at a skill of its own, and its results' accuracies and MCC follow them, so sorting, neighbour
tests and rank intervals have work to do; its own price and weights). Prediction rows are written for the
first --prediction-rows copies only (20: a re-score rebuilds an entry from them). The copies' rows are written by
executemany from a prototype's prepared values (``Rows``): 100,000 entries build in 160 s (55 s of CPU) at load
7-10 on the shared 2-core machine (docs/performance.md). With ``--database-url postgres://...`` the same rows go to
PostgreSQL by ``COPY``, and the database is vacuumed and analysed after the build and before the measurements
(``vacuum``: this machine's server runs without autovacuum); the refresh's and the pages' figures then give the
server backend's CPU time beside this process's (``backend_cpu``), and ``--queries`` the refresh's costliest SQL.
Then it measures, for GET /b/adaptmm-demo/ (the overview, 50 rows a page, sorted by adaptive
accuracy, with paired tests between neighbours):

1. the one-off build of the board (leaderboard.services.board_refresh: the whole board's ranks, tie groups,
   rank intervals and neighbour tests and the wide tabs' index; the entries are written by the bulk build);
2. median server time through Django's handler (test client), uncached: the cache cleared
   before each request, so selectors, neighbour tests and template all run;
3. median server time, cached (the fragment served from the per-benchmark cache);
   (2 and 3 are repeated --repeat times; the figure is the median of the runs' medians)
4. requests per second under concurrent load on localhost: gunicorn (``config.wsgi``, the
   bench's settings ``config.settings.base``, --workers processes, --threads threads each: the
   gthread worker when above 1) and a load generator keeping --concurrency keep-alive connections
   busy for --duration seconds, --repeat times: ``wrk`` (Debian's package) when it is installed,
   else a small asyncio HTTP/1.1 client in this process. Client and server share this machine's
   cores; the CPU each used per request is printed too, so the figure can be read against load;
5. every other tab of the benchmark (/b/adaptmm-demo/<tab>/, page 1 as an anonymous visitor sees it): its
   size in bytes and its median uncached time (--tab-runs requests, the cache cleared before each). The
   wide tabs are paged 50 rows a page like the overview, so their size must not grow with the board;
6. (``--only refresh``) the worker's cost of a change: the board's refresh task after one unpublish, and after
   a burst of 20 within a second sent to one worker that honours the messages' countdown (``refresh_costs``);
7. (``--only wide-pages``) each wide tab's uncached page 1, middle page and last page, in every sort the Tools
   tab offers: median CPU and wall time, and the CPU time of reading the page's range of the tab's stored order
   (``wide_tab_pages``).

    .venv/bin/python bench/bench_leaderboard.py [--sizes 1000,10000] [--concurrency 16] [--duration 10]
        [--workers 2] [--threads 1] [--repeat 3] [--client wrk|python]
    VAR_DIR=/tmp/lb-bench .venv/bin/python bench/bench_leaderboard.py   # keep (and reuse) the built databases
    VAR_DIR=/tmp/lb-bench .venv/bin/python bench/bench_leaderboard.py --only after-change,tabs  # some parts only
    .venv/bin/python bench/bench_leaderboard.py --submissions 1000      # one size only
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-leaderboard-"))
CHILD = "--one" in sys.argv  # one size, in this process; without it the script runs one child per size
RESULT = "BENCH-RESULT "


def parent() -> None:
    import json

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--submissions", type=int, default=None, help="one size only")
    known, passthrough = parser.parse_known_args()
    sizes = [known.submissions] if known.submissions else [int(x) for x in known.sizes.split(",")]
    base = Path(os.environ["VAR_DIR"])
    results = {}
    for n in sizes:
        (base / f"n{n}").mkdir(parents=True, exist_ok=True)
        print(f"=== {n:,} submissions (VAR_DIR={base / f'n{n}'}) ===", flush=True)
        proc = subprocess.Popen([sys.executable, __file__, "--one", "--submissions", str(n), *passthrough],
                                env={**os.environ, "VAR_DIR": str(base / f"n{n}")}, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith(RESULT):
                results[n] = json.loads(line[len(RESULT):])
            else:
                print(line, end="", flush=True)
        if proc.wait():
            raise SystemExit(f"the run with {n} submissions failed")
    if len(results) < 2:
        return
    first, last = sizes[0], sizes[-1]
    rows = [("read after a change, no worker, max (ms)", "after_idle_ms"),
            ("read after a change, refresh running, max (ms)", "after_busy_ms"), ("board build (s)", "build_s"),
            ("board rebuild per change (s)", "rebuild_s"), ("refresh after one change, CPU (s)", ("refresh", "one_cpu_s")),
            ("refresh after a burst of 20, CPU (s)", ("refresh", "burst_cpu_s")),
            ("overview, uncached, median (ms)", "uncached_ms"),
            ("overview, cached, test client (ms)", "cached_ms"), ("requests/s, cached, gunicorn", "rps"),
            ("server CPU per cached request (ms)", "cpu_ms"), ("page size (bytes)", "bytes")]
    for slug in results[first].get("tabs", {}):
        rows += [(f"{slug} tab, page size (bytes)", ("tabs", slug, 0)), (f"{slug} tab, uncached (ms)", ("tabs", slug, 1))]
    print(f"\n{'figure':38} {first:>12,} {last:>12,} {'ratio':>8}")
    for label, k in rows:
        if isinstance(k, tuple) and len(k) == 2:
            a, b = (results[n].get(k[0], {}).get(k[1], 0.0) for n in (first, last))
        elif isinstance(k, tuple):
            a, b = (results[n][k[0]].get(k[1], [0, 0])[k[2]] for n in (first, last))
        else:
            a, b = results[first][k], results[last][k]
        print(f"{label:38} {a:>12.2f} {b:>12.2f} {b / a if a else float('nan'):>8.2f}")
    after = max(results[last]["after_idle_ms"], results[last]["after_busy_ms"])
    print(f"target at {last:,}: read after a change <= 50 ms, max of 20 with and without a worker: {after:.1f} ms "
          f"({'met' if after <= 50 else 'MISSED'})")
    print(f"targets at {last:,}: cached requests/s >= 80 % of the {first:,} figure "
          f"({'met' if results[last]['rps'] >= 0.8 * results[first]['rps'] else 'MISSED'}); uncached median <= 50 ms "
          f"({'met' if results[last]['uncached_ms'] <= 50 else 'MISSED'}); load average at the end "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if not CHILD:
    if __name__ == "__main__":
        parent()
    raise SystemExit(0)
# The database through DATABASE_URL, as deployed: config.settings.base then keeps connections open
# (conn_max_age=60), where its URL-less SQLite default opens one per request (--db-per-request).
PER_REQUEST = "--db-per-request" in sys.argv
if "--database-url" in sys.argv:  # another database (PostgreSQL), emptied by nothing here: give each size its own
    os.environ["DATABASE_URL"] = sys.argv[sys.argv.index("--database-url") + 1]
elif not PER_REQUEST:
    os.environ["DATABASE_URL"] = f"sqlite:///{Path(os.environ['VAR_DIR']).resolve() / 'db.sqlite3'}"
else:
    os.environ.pop("DATABASE_URL", None)
SETTINGS = "config.settings.base"
os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
os.environ.pop("REDIS_URL", None)
os.environ.pop("CACHE_URL", None)
if "--cache-url" in sys.argv:  # a cache shared by every process (Redis, as deployed); else the local memory
    os.environ["CACHE_URL"] = sys.argv[sys.argv.index("--cache-url") + 1]
# The figures are the pages' own cost: the rate limit (config/rate_limit.py) would answer the load 429.
os.environ["PAGE_RATE_LIMIT_ANON"] = os.environ["PAGE_RATE_LIMIT_USER"] = "off"

import django  # noqa: E402

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

URL = "/b/adaptmm-demo/"


def build(n: int, prediction_rows: int = 20) -> None:
    """The demo benchmark, one simulated submission scored through the real pipeline (the template), then
    n - 1 copies of it written in bulk, a few thousand rows a statement: each copy a Submission and its
    BoardEntry, whose per-sample vectors are the template's with a share of the answers redrawn (a skill of
    its own per copy), so accuracies, MCC, neighbour tests and rank intervals have real work to do; its
    results' overall accuracies and MCC follow its vectors. Prediction rows are written for the first
    ``prediction_rows`` copies only (a re-score rebuilds an entry from them): at 100,000 copies they would be
    45 million rows, which nothing measured here reads."""
    import numpy as np
    import orjson
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile
    from django.db import transaction
    from django.utils import timezone

    from annotation.demo import demo_benchmark_load
    from annotation.models import Benchmark
    from evaluation import pipeline, selectors, services
    from evaluation.metrics.mode_selection import EPSILON
    from evaluation.models import PredictionResult, Submission
    from evaluation.simulator import Profile, simulate
    from leaderboard.models import BoardEntry
    from leaderboard.services import entries_sync, entry_copies, sample_frame

    if Submission.objects.filter(benchmark__slug="adaptmm-demo").count() >= n:
        services.benchmark_results_bump(benchmark_id=Benchmark.objects.get(slug="adaptmm-demo").pk)
        return  # VAR_DIR given and already built: reuse it (built again below, as after a finish)
    demo_benchmark_load()
    benchmark = Benchmark.objects.get(slug="adaptmm-demo")
    owner = get_user_model().objects.create_user("bench", is_staff=True)
    samples, _ = selectors.scoring_samples(benchmark=benchmark)
    content = b"".join(orjson.dumps(x) + b"\n" for x in simulate(samples, Profile(seed=7)))
    template = services.submission_create(
        benchmark=benchmark, owner=owner, file=ContentFile(content, name="sim.jsonl"), model_name="Template",
        is_public=True, enforce_limits=False, enqueue=False, price_input_per_mtok=1.0, price_output_per_mtok=4.0)
    template = pipeline.submission_process_sync(submission=template)
    entries_sync(benchmark, [template.pk])
    entry = BoardEntry.objects.filter(submission=template).values().get()
    for name in ("id", "submission_id", "built_at"):
        entry.pop(name)
    frame = sample_frame(benchmark)
    modes = [m for m in ("text", "adaptive", "oracle") if entry["correct"].get(m)]
    base = {m: np.frombuffer(entry["correct"][m].encode("ascii"), dtype=np.uint8) for m in modes}
    invoked_base = np.frombuffer(entry["invoked"].encode("ascii"), dtype=np.uint8) if entry["invoked"] else None
    ONE, ZERO, DASH = ord("1"), ord("0"), ord("-")
    rng = np.random.default_rng(1)
    prices = random.Random(1)
    pred_rows = list(PredictionResult.objects.filter(submission=template).values())
    now = timezone.now()
    chunk = 2000
    # every copy's row is its prototype's but for the fields named per copy (Rows: prepared once, written by
    # executemany; bulk_create's per-field preparation and the standard library's JSON encoder were most of the build)
    submission_rows = Rows(Submission(
        benchmark=benchmark, owner=owner, model_name="Model", is_public=True, is_demo=True, status="done",
        results=template.results, file=template.file.name, price_output_per_mtok=4.0, finished_at=now, scored_at=now,
        heartbeat_at=now, digest=template.digest, digest_dev=template.digest_dev, provenance=template.provenance))
    entry_rows = Rows(BoardEntry(submission_id=template.pk, **entry))
    for start in range(0, n - 1, chunk):
        k = min(chunk, n - 1 - start)
        # per copy, a share of its decided answers redrawn at a skill of its own
        share, skill = rng.uniform(0.05, 0.6, size=(k, 1)), rng.uniform(0.1, 0.95, size=(k, 1))
        bits = {}
        for m in modes:
            decided = (base[m] == ONE) | (base[m] == ZERO)
            redraw = decided & (rng.random((k, base[m].size)) < share)
            new = np.where(rng.random((k, base[m].size)) < skill, ONE, ZERO).astype(np.uint8)
            bits[m] = np.where(redraw, new, base[m]).astype(np.uint8)
        if invoked_base is not None:
            flip = (invoked_base != DASH) & (rng.random((k, invoked_base.size)) < share / 2)
            invoked = np.where(flip, np.where(invoked_base == ONE, ZERO, ONE), invoked_base).astype(np.uint8)
        subs, extra = [], []
        for j in range(k):
            i = start + j
            results = {**template.results, "modes": dict(template.results["modes"])}
            fields = dict(entry)
            correct = {m: bits[m][j].tobytes().decode("ascii") for m in modes}
            for m in modes:
                node = dict(results["modes"][m]["accuracy"]["overall"])
                count = int((bits[m][j] == ONE).sum())
                delta = count / node["n"] - node["value"]
                interval = node.get("interval") or {}
                node.update(count=count, value=count / node["n"], percent=100 * count / node["n"])
                if interval.get("low") is not None:
                    node["interval"] = {**interval, "low": max(0.0, interval["low"] + delta),
                                        "high": min(1.0, interval["high"] + delta)}
                mode = dict(results["modes"][m])
                mode["accuracy"] = {**mode["accuracy"], "overall": node}
                results["modes"][m] = mode
                fields[f"{m}_acc"] = node["percent"]
                if fields[f"{m}_lo"] is not None:
                    fields[f"{m}_lo"] = max(0.0, fields[f"{m}_lo"] + 100 * delta)
                    fields[f"{m}_hi"] = min(100.0, fields[f"{m}_hi"] + 100 * delta)
            if invoked_base is not None and "text" in bits:
                text, inv = bits["text"][j], invoked[j]
                has = (text != DASH) & (text != ord("?")) & (inv != DASH)
                right, used = text == ONE, inv == ONE
                tp, fp = int((has & ~right & used).sum()), int((has & right & used).sum())
                tn, fn = int((has & right & ~used).sum()), int((has & ~right & ~used).sum())
                mcc = (tp * tn - fp * fn) / (float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5 + EPSILON)
                if results.get("mode_selection"):
                    shift = mcc - (results["mode_selection"].get("mcc") or 0.0)
                    results["mode_selection"] = {**results["mode_selection"], "mcc": mcc}
                    if fields["mcc_lo"] is not None:
                        fields["mcc_lo"], fields["mcc_hi"] = fields["mcc_lo"] + shift, fields["mcc_hi"] + shift
                    fields["mcc"] = mcc
                fields["invoked"] = inv.tobytes().decode("ascii")
            price = prices.uniform(0.05, 5)
            if fields["cost"] is not None:
                fields["cost"] = entry["cost"] * (price + 4.0) / 5.0  # the template's at $1 + $4 a Mtok
            weights = prices.choice(["open", "closed", ""])
            # the entry's copies of its submission's first finish (none: its finish) and weights, its headline accuracy
            fields.update(correct=correct, scored_at=now, heartbeat_at=now, finished_at=now,
                          **entry_copies(None, now, weights), headline_acc=fields.get(f"{entry['headline_mode']}_acc"))
            subs.append(submission_rows.row(
                model_name=f"Model {i:06d}", organisation=f"Org {i % 37}", weights=weights,
                results=results, price_input_per_mtok=price))
            extra.append(fields)
        with transaction.atomic():
            ids = submission_rows.insert(subs)
            entry_rows.insert([entry_rows.row(submission_id=pk, **f) for pk, f in zip(ids, extra)])
            rows = []
            for j, pk in enumerate(ids):
                if start + j >= prediction_rows:
                    break
                for r in pred_rows:  # the template's rows, right or wrong as the copy's vector says
                    bit = extra[j]["correct"].get(r["mode"], "")
                    pos = frame.order.get(r["sample_id"])
                    ok = r["correct"] if pos is None or not bit or bit[pos] not in "01" else bit[pos] == "1"
                    rows.append(PredictionResult(**{**r, "id": None, "submission_id": pk, "correct": ok}))
            PredictionResult.objects.bulk_create(rows, batch_size=2000)
        print(f"  {start + k:,} of {n - 1:,} copies written; {load_average()}", flush=True)
    services.benchmark_results_bump(benchmark_id=benchmark.pk)  # as a finishing submission does


class Rows:
    """Rows of one model, each its prototype's but for some fields, written in bulk: the prototype's values are
    prepared for the database once, a copy's own values as they come (JSON by orjson). On SQLite by
    ``executemany``; on PostgreSQL by ``COPY ... FROM STDIN`` (psycopg's ``copy``, text format: a JSON value is
    its orjson text, the column's input parses it); elsewhere, ``bulk_create``. The ids are read back as those
    above the table's largest before the write, in order (the bench is the database's only writer)."""

    def __init__(self, proto: Any) -> None:
        from django.db import connection
        from django.db.models import AutoField, JSONField

        self.model, self.connection = type(proto), connection
        self.fields = [f for f in self.model._meta.concrete_fields if not isinstance(f, AutoField)]
        self.by_name = {f.attname: f for f in self.fields}
        self.json = {f.attname for f in self.fields if isinstance(f, JSONField)}
        self.proto = {f.attname: getattr(proto, f.attname) for f in self.fields}
        self.base = {f.attname: f.get_db_prep_save(f.pre_save(proto, True), connection) for f in self.fields}
        if connection.vendor == "postgresql":  # COPY's text: the prototype's JSON as orjson's text, once
            import orjson

            self.base.update({name: orjson.dumps(self.proto[name]).decode() for name in self.json
                              if self.proto[name] is not None})
        self.prepared: dict[int, Any] = {}  # a value shared by every copy (a date), prepared once
        table, quote = self.model._meta.db_table, connection.ops.quote_name
        self.sql = (f"INSERT INTO {quote(table)} ({', '.join(quote(f.column) for f in self.fields)}) "
                    f"VALUES ({', '.join(['%s'] * len(self.fields))})")
        self.table = quote(table)
        self.copy_sql = f"COPY {quote(table)} ({', '.join(quote(f.column) for f in self.fields)}) FROM STDIN"

    def row(self, **values: Any) -> Any:
        import orjson

        if self.connection.vendor not in ("sqlite", "postgresql"):
            return self.model(**{**self.proto, **values})
        out = dict(self.base)
        for name, value in values.items():
            if value is self.proto.get(name):
                continue
            if name in self.json:
                out[name] = orjson.dumps(value).decode()
            elif value is None or isinstance(value, bool | int | float | str):
                out[name] = self.by_name[name].get_db_prep_save(value, self.connection)
            else:
                key = id(value)
                if key not in self.prepared:
                    self.prepared[key] = (value, self.by_name[name].get_db_prep_save(value, self.connection))
                out[name] = self.prepared[key][1]
        return tuple(out[f.attname] for f in self.fields)

    def insert(self, rows: list[Any]) -> list[int]:
        """Write the rows (in one transaction, the caller's) and return their ids in order."""
        if self.connection.vendor not in ("sqlite", "postgresql"):
            return [o.pk for o in self.model.objects.bulk_create(rows, batch_size=500)]
        with self.connection.cursor() as cursor:
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {self.table}")
            last = cursor.fetchone()[0]
            if self.connection.vendor == "sqlite":
                cursor.executemany(self.sql, rows)
            else:
                with cursor.cursor.copy(self.copy_sql) as copy:  # psycopg's cursor under Django's wrapper
                    for row in rows:
                        copy.write_row(row)
            cursor.execute(f"SELECT id FROM {self.table} WHERE id > %s ORDER BY id", [last])
            ids = [r[0] for r in cursor.fetchall()]
        assert len(ids) == len(rows), (len(ids), len(rows))
        return ids


WORKER = """
import os, sys
sys.path.insert(0, {root!r})
import django
django.setup()
from leaderboard.tasks import board_refresh
print("started", flush=True)
board_refresh.run({pk})
"""


def after_change_ms(client: Client, benchmark, worker_kind: str = "thread") -> tuple[list[float], list[float]]:  # noqa: ANN001
    """The first read of the overview after each of 20 changes (a submission unpublished, then published
    again, through the service, committed): with no worker (the refresh's message waits in the broker;
    the page serves the last build, the row filtered at read time), then with the board's refresh task
    running beside the read: in another thread of this process (``worker_kind`` "thread": it shares the
    interpreter's lock with the read) or in another process, as a Celery worker is ("process": the read
    starts once the worker has started the task)."""
    import threading

    from django.db import connections

    from evaluation.models import Submission
    from evaluation.services import submission_set_public
    from leaderboard.tasks import board_refresh

    sub = Submission.objects.filter(benchmark=benchmark, is_public=True).order_by("-pk").first()
    client.get(URL)  # a visitor has read the current build (its first read is the uncached figure above)
    idle, busy = [], []
    for worker, out in ((False, idle), (True, busy)):
        for i in range(20):
            submission_set_public(submission=sub, public=bool(i % 2))
            # the worker's task (the build, then the overview's default page of the new build into the cache)
            refresh: Any = threading.Thread(target=lambda: (board_refresh.run(benchmark.pk), connections.close_all()))
            if worker and worker_kind == "process":
                refresh = subprocess.Popen([sys.executable, "-c", WORKER.format(root=str(ROOT), pk=benchmark.pk)],
                                           stdout=subprocess.PIPE, text=True)
                assert refresh.stdout is not None and refresh.stdout.readline().strip() == "started"
                time.sleep(0.005)  # the task has begun
            elif worker:
                refresh.start()
                time.sleep(0.005)  # the refresh has begun its transaction
            t = time.perf_counter()
            response = client.get(URL)
            out.append(1000 * (time.perf_counter() - t))
            assert response.status_code == 200
            if worker and worker_kind == "process":
                assert refresh.wait() == 0
            elif worker:
                refresh.join()
        submission_set_public(submission=sub, public=True)
    board_refresh.run(benchmark.pk)
    return idle, busy


@contextlib.contextmanager
def refresh_parts() -> Iterator[dict[str, float]]:
    """The board's refresh task timed by part (CPU of this thread): the functions it calls wrapped while inside.
    "rest" (filled by the caller) is the task's time less theirs: the "gone" query, the build's state saved."""
    from leaderboard import services, tasks

    names = {"stale": (services, "stale_submission_ids"), "entries": (services, "entries_sync"),
             "ranks": (services, "ranks_update"), "ranks_build": (services, "ranks_build"),
             "tabs": (services, "tables_update"), "tabs_build": (services, "tables_build"),
             "present": (services, "figures_present"), "warm page": (tasks, "overview_warm")}
    spent = dict.fromkeys(names, 0.0)
    saved = {part: getattr(module, name) for part, (module, name) in names.items()}

    def timed(part: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            c = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[part] += time.thread_time() - c
        return run

    for part, (module, name) in names.items():
        setattr(module, name, timed(part, saved[part]))
    try:
        yield spent
    finally:
        for part, (module, name) in names.items():
            setattr(module, name, saved[part])


@contextlib.contextmanager
def statements(top: int) -> Iterator[None]:
    """With ``top``: each SQL statement run on this thread's connection inside the block timed (wall time of its
    execute, the database's work and the wait for it, which on PostgreSQL the thread's CPU leaves out), then the
    ``top`` costliest statement texts printed with their count and total time."""
    if not top:
        yield
        return
    from django.db import connection

    spent: dict[str, list[float]] = {}

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            got = spent.setdefault(sql, [0, 0.0])
            got[0] += 1
            got[1] += time.perf_counter() - t

    with connection.execute_wrapper(timed):
        yield
    total = sum(t for _, t in spent.values())
    print(f"  SQL: {sum(n for n, _ in spent.values())} statements, {total:.3f} s wall in their execute; the costliest:")
    for sql, (n, t) in sorted(spent.items(), key=lambda x: -x[1][1])[:top]:
        print(f"    {t:7.3f} s {n:>5}x  {' '.join(sql.split())[:400]}")


def refresh_costs(benchmark: Any, burst: int = 20, within: float = 1.0, profile: str = "",
                  queries: int = 0) -> dict[str, float]:
    """The worker's cost of a change: the board's refresh task after one unpublish (wall and CPU time), then after
    ``burst`` unpublishes within ``within`` seconds, each sending its message as on commit to one worker (a thread
    of this process draining a queue in order, as a Celery worker with concurrency 1 does, each message run once
    its countdown, settings.RESULTS_CHANGED_DELAY_SECONDS, has passed): the worker's CPU time
    over the burst, its wall time until drained, and how many of its runs built (the others found the board
    current). SQLite runs in this process, so the worker thread's CPU time is the refresh's whole work. The
    submissions are published again afterwards and the board rebuilt (not measured). ``profile``: a path where the
    one-change refresh's cProfile statistics are written (the figures then include the profiler's overhead), and
    its 25 costliest functions by cumulative time are printed; the burst's worker runs likewise, to ``profile``.burst.
    On PostgreSQL the worker's CPU leaves out the server's: the CPU time of the connection's backend process is
    read from /proc and printed beside it (``backend_cpu``). ``queries``: the one-change refresh's costliest SQL
    statements by wall time are printed, this many (``statements``)."""
    import cProfile
    import pstats
    import queue
    import threading

    from django.conf import settings
    from django.db import connections

    from evaluation.derived import derived_read
    from evaluation.models import Submission
    from evaluation.services import submission_set_public
    from leaderboard.tasks import board_refresh

    subs = list(Submission.objects.filter(benchmark=benchmark, is_public=True).order_by("-pk")[:burst])
    out: dict[str, float] = {}
    submission_set_public(submission=subs[0], public=False)
    profiler = cProfile.Profile() if profile else None
    with refresh_parts() as parts, backend_cpu() as server, statements(queries):
        t, c = time.perf_counter(), time.thread_time()
        if profiler is not None:
            profiler.enable()
        board_refresh.run(benchmark.pk)
        if profiler is not None:
            profiler.disable()
        out["one_wall_s"], out["one_cpu_s"] = time.perf_counter() - t, time.thread_time() - c
    if server["s"] is not None:
        out["one_server_cpu_s"] = server["s"]
    if profiler is not None:
        profiler.dump_stats(profile)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    print(f"refresh after one change (the task): {out['one_wall_s']:.2f} s wall, {out['one_cpu_s']:.2f} s CPU"
          + (f" (+ the PostgreSQL backend's {server['s']:.2f} s)" if server["s"] is not None else "")
          + f"; {load_average()}", flush=True)
    parts["rest"] = out["one_cpu_s"] - sum(parts.values())
    print("  by part, CPU (s): " + ", ".join(f"{k} {v:.3f}" for k, v in parts.items()), flush=True)
    out.update({f"one_{k}_cpu_s": v for k, v in parts.items()})
    submission_set_public(submission=subs[0], public=True)
    board_refresh.run(benchmark.pk)

    messages: queue.Queue = queue.Queue()
    spent: dict[str, Any] = {"cpu": 0.0, "builds": 0, "runs": 0, "server": 0.0}

    def worker() -> None:
        while (message := messages.get()) is not None:
            due, pk = message  # sent with a countdown (settings.RESULTS_CHANGED_DELAY_SECONDS), as on commit
            time.sleep(max(0.0, due - time.monotonic()))
            before = derived_read(benchmark, "board", payload=False).built_at
            c = time.thread_time()
            with backend_cpu() as server:
                if burst_profiler is not None:
                    burst_profiler.enable()
                board_refresh.run(pk)
                if burst_profiler is not None:
                    burst_profiler.disable()
            spent["cpu"] += time.thread_time() - c
            spent["server"] = None if server["s"] is None or spent["server"] is None else spent["server"] + server["s"]
            spent["runs"] += 1
            spent["builds"] += derived_read(benchmark, "board", payload=False).built_at != before
        connections.close_all()

    burst_profiler = cProfile.Profile() if profile else None
    thread = threading.Thread(target=worker)
    with refresh_parts() as burst_parts:
        thread.start()
        t = time.perf_counter()
        for i, sub in enumerate(subs):
            submission_set_public(submission=sub, public=False)
            messages.put((time.monotonic() + settings.RESULTS_CHANGED_DELAY_SECONDS, benchmark.pk))  # on commit
            time.sleep(max(0.0, t + within * (i + 1) / len(subs) - time.perf_counter()))
        changes_s = time.perf_counter() - t
        messages.put(None)
        thread.join()
    out.update(burst_cpu_s=spent["cpu"], burst_wall_s=time.perf_counter() - t, burst_builds=spent["builds"])
    if spent["server"] is not None:
        out["burst_server_cpu_s"] = spent["server"]
    print(f"refresh after a burst of {len(subs)} changes ({changes_s:.2f} s to make them): worker CPU "
          f"{spent['cpu']:.2f} s"
          + (f" (+ the PostgreSQL backend's {spent['server']:.2f} s)" if spent["server"] is not None else "")
          + f" over {spent['runs']} runs, of which {spent['builds']} built; drained "
          f"{out['burst_wall_s']:.2f} s after the first change; {load_average()}", flush=True)
    if burst_profiler is not None:
        burst_profiler.dump_stats(profile + ".burst")
        pstats.Stats(burst_profiler).sort_stats("cumulative").print_stats(30)
    burst_parts["rest"] = spent["cpu"] - sum(burst_parts.values())
    print("  by part, CPU (s): " + ", ".join(f"{k} {v:.3f}" for k, v in burst_parts.items()), flush=True)
    out.update({f"burst_{k}_cpu_s": v for k, v in burst_parts.items()})
    for sub in subs:
        submission_set_public(submission=sub, public=True)
    board_refresh.run(benchmark.pk)
    # What the sweeper pays once every COMPACT_AFTER shifts of an ordering: the shifts folded into the rows.
    from leaderboard.models import RankShift
    from leaderboard.rank_update import COMPACT_AFTER, ranks_compact

    shifts = RankShift.objects.filter(benchmark=benchmark).count()
    t, c = time.perf_counter(), time.thread_time()
    written = ranks_compact(benchmark)
    out["compact_wall_s"], out["compact_cpu_s"] = time.perf_counter() - t, time.thread_time() - c
    print(f"the ranks' {shifts} recorded shifts folded into the rows (ranks_compact; the sweeper does it when an "
          f"ordering has {COMPACT_AFTER}): {written:,} rows written, {out['compact_wall_s']:.2f} s wall, "
          f"{out['compact_cpu_s']:.2f} s CPU; {load_average()}", flush=True)
    return out


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


def tab_figures(benchmark, runs: int) -> dict[str, list[float]]:  # noqa: ANN001
    """{tab: [page 1's size in bytes, median uncached ms]} for every tab but the overview (measured above)."""
    from leaderboard.tabs import tab_url, tabs_for

    out = {}
    client = Client()
    for tab in tabs_for(benchmark):
        if tab.slug == "overview":
            continue
        url = tab_url(benchmark, tab.slug)
        times, cpu = [], []
        with backend_cpu() as server:
            for _ in range(runs):
                cache.clear()
                start, c = time.perf_counter(), time.process_time()
                response = client.get(url)
                times.append((time.perf_counter() - start) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                assert response.status_code == 200, (url, response.status_code)
        out[tab.slug] = [float(len(response.content)), statistics.median(times), statistics.median(cpu)]
        served = ""
        if server["s"] is not None:  # the server's CPU, a mean: /proc counts it in 10 ms ticks
            out[tab.slug].append(1000 * server["s"] / runs)
            served = f", PostgreSQL backend's CPU mean {out[tab.slug][3]:6.1f} ms"
        print(f"  {tab.slug:16} page 1: {len(response.content):>10,} bytes, uncached median {out[tab.slug][1]:8.1f} ms "
              f"over {runs} (CPU median {out[tab.slug][2]:6.1f} ms{served}); {load_average()}", flush=True)
    return out


def wide_tab_pages(benchmark, runs: int) -> None:  # noqa: ANN001
    """Every wide tab's uncached page (leaderboard.wide_tabs: a range of its stored order, then its own rows'
    results) at page 1, the middle page and the last, in every sort the Tools tab offers: the median over ``runs``
    requests of the CPU time (SQLite runs in this process: the page's whole work) and the wall time, and the
    CPU time of the index read alone (``wide_tabs._page_keys``, the order's range)."""
    from leaderboard import selectors, wide_tabs
    from leaderboard.tabs import tab_url
    from leaderboard.tools_tab import COLUMNS

    keys_cpu: list[float] = []
    page_keys = wide_tabs._page_keys

    def timed(*args: Any) -> Any:
        t = time.process_time()
        out = page_keys(*args)
        keys_cpu.append(time.process_time() - t)
        return out

    wide_tabs._page_keys = timed
    client = Client()
    worst = 0.0
    for tab in wide_tabs.INDEXED:
        index = selectors.board_table_index(benchmark, tab)
        if index is None:
            print(f"  {tab}: no index in the board's build")
            continue
        last = max(1, -(-index["count"] // 50))
        sorts = [""] + ([f"sort={key}&desc={d}&" for _, key, _, _ in COLUMNS for d in ("1", "0")]
                        if tab in wide_tabs.SORTED else [])
        for sort in sorts:
            for page in sorted({1, last // 2 + 1, last}):
                url = f"{tab_url(benchmark, tab)}?{sort}page={page}"
                cpu, wall, keys_cpu[:] = [], [], []
                for _ in range(runs):
                    cache.clear()
                    t, w = time.process_time(), time.perf_counter()
                    response = client.get(url)
                    cpu.append(1000 * (time.process_time() - t))
                    wall.append(1000 * (time.perf_counter() - w))
                    assert response.status_code == 200, (url, response.status_code)
                worst = max(worst, statistics.median(cpu))
                print(f"  {tab:15} {sort or 'default ':28} page {page:>5} of {last}: CPU {statistics.median(cpu):6.1f} ms, "
                      f"wall {statistics.median(wall):6.1f} ms, index read {1000 * statistics.median(keys_cpu):5.1f} ms CPU",
                      flush=True)
    wide_tabs._page_keys = page_keys
    print(f"wide tabs' uncached pages: worst median CPU {worst:.1f} ms; {load_average()}")


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def vacuum(why: str) -> None:
    """On PostgreSQL, ``VACUUM ANALYZE`` of the bench's database, timed: this machine's server runs with autovacuum
    off (/etc/postgresql/15/main/conf.d/90-ci.conf, a CI setting), so without it the planner has no statistics of
    the bulk-written tables and every UPDATE's dead rows stay in the tables and their indexes; a deployment's
    autovacuum would have done it within a minute of the writes. Nothing on SQLite."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    t = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(f"VACUUM ANALYZE ({why}): {time.perf_counter() - t:.1f} s; {load_average()}", flush=True)


def backend_pid() -> int | None:
    """The PostgreSQL backend process serving this thread's connection (the server runs on this machine), or None
    on SQLite (it runs in this process, in the thread's own CPU time)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@contextlib.contextmanager
def backend_cpu() -> Iterator[dict[str, float | None]]:
    """{"s": the CPU time (user + system, from /proc, 10 ms ticks) the PostgreSQL backend of this thread's connection
    spent inside the block}: the server's share of the work, which the thread's CPU time leaves out. None on SQLite,
    or when the block's connection was closed (another backend after it)."""
    pid = backend_pid()
    out: dict[str, float | None] = {"s": None}
    before = cpu_seconds([pid]) if pid is not None else 0.0
    yield out
    if pid is not None and backend_pid() == pid:
        out["s"] = cpu_seconds([pid]) - before



def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of running processes, from /proc (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def worker_pids(master: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    out.append(int(entry.name))
            except (FileNotFoundError, IndexError, ValueError):
                continue
    return out


def start_gunicorn(port: int, workers: int, threads: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
           "--workers", str(workers), "--log-level", "warning", "--chdir", str(ROOT)]
    if threads > 1:
        cmd += ["--worker-class", "gthread", "--threads", str(threads)]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": SETTINGS, "PYTHONWARNINGS": "ignore"}
    server = subprocess.Popen(cmd, env=env, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{URL}", timeout=5) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    server.send_signal(signal.SIGQUIT)
    raise RuntimeError("gunicorn did not answer within 60 s")


async def python_load(port: int, concurrency: int, duration: float) -> tuple[int, int]:
    """HTTP/1.1 keep-alive GETs on ``concurrency`` connections for ``duration`` seconds (reconnects
    when the server closes, as gunicorn's sync worker does after every response)."""
    done = errors = 0
    stop = time.perf_counter() + duration
    request = f"GET {URL} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()

    async def worker() -> None:
        nonlocal done, errors
        reader = writer = None
        while time.perf_counter() < stop:
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()
                reader = writer = None
                continue
            lines = head.decode("latin-1").lower().split("\r\n")
            length = next(int(h.split(":", 1)[1]) for h in lines if h.startswith("content-length:"))
            await reader.readexactly(length)
            if lines[0].split()[1] == "200":
                done += 1
            else:
                errors += 1
            if "connection: close" in lines:
                writer.close()
                reader = writer = None
        if writer is not None:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done, errors


def wrk_load(port: int, concurrency: int, duration: float) -> tuple[int, int]:
    out = subprocess.run(["wrk", "-t1", f"-c{concurrency}", f"-d{duration:g}s", f"http://127.0.0.1:{port}{URL}"],
                         capture_output=True, text=True, check=True).stdout
    done = int(out.split(" requests in ")[0].split()[-1])
    bad = sum(int(line.split(":")[1]) for line in out.splitlines() if line.strip().startswith("Non-2xx"))
    socket_errors = sum(int(x) for line in out.splitlines() if "Socket errors" in line
                        for x in line.replace(",", " ").split() if x.isdigit())
    return done - bad, bad + socket_errors


def throughput(args: argparse.Namespace) -> tuple[list[float], list[float]]:
    client = args.client or ("wrk" if shutil.which("wrk") else "python")
    port = free_port()
    server = start_gunicorn(port, args.workers, args.threads)
    kind = f"{args.threads} threads each (gthread)" if args.threads > 1 else "sync"
    rates, cpu = [], []
    try:
        pids = worker_pids(server.pid)
        for _ in range(3):  # every worker builds and caches the page before the measurement
            python_load_run = asyncio.run(python_load(port, 2 * args.workers * max(1, args.threads), 1.0))
            assert python_load_run[1] == 0, "errors while warming up"
        for run in range(args.repeat):
            before_server = cpu_seconds(pids)
            before_client = time.process_time() + sum(os.times()[2:4])
            start_load = load_average()
            t = time.perf_counter()
            if client == "wrk":
                done, errors = wrk_load(port, args.concurrency, args.duration)
            else:
                done, errors = asyncio.run(python_load(port, args.concurrency, args.duration))
            elapsed = time.perf_counter() - t
            server_cpu = cpu_seconds(pids) - before_server
            client_cpu = time.process_time() + sum(os.times()[2:4]) - before_client
            rate = done / args.duration
            rates.append(rate)
            cpu.append(1000 * server_cpu / max(done, 1))
            print(f"  run {run + 1}: {rate:.0f} requests/s ({done} in {args.duration:g} s, {errors} errors); "
                  f"CPU per request: server {1000 * server_cpu / max(done, 1):.2f} ms, "
                  f"client {1000 * client_cpu / max(done, 1):.2f} ms; {elapsed:.1f} s wall; "
                  f"{start_load} -> {load_average().split()[-3]}")
    finally:
        server.terminate()  # graceful: the load generator has closed its connections
        try:
            server.wait(timeout=35)
        except subprocess.TimeoutExpired:
            server.send_signal(signal.SIGQUIT)
            server.wait(timeout=10)
    print(f"concurrent load: median {statistics.median(rates):.0f} requests/s over {args.repeat} runs, gunicorn "
          f"{args.workers} workers ({kind}), {args.concurrency} keep-alive connections from {client}, "
          f"client and server on the same {os.cpu_count()} cores; database connections "
          f"{'opened per request' if args.db_per_request else 'kept (DATABASE_URL, conn_max_age=60)'}")
    return rates, cpu


def refresh_with_and_without(benchmark: Any, tab: str, repeat: int) -> None:
    """The board's refresh with the index of ``tab`` and without it, alternately ``repeat`` times each in this
    process (the same database and cache state, so the load of the shared machine falls on both alike)."""
    from evaluation.services import benchmark_results_bump
    from leaderboard import wide_tabs
    from leaderboard.services import board_refresh

    every = tuple(wide_tabs.TAB_PARTS)
    times: dict[str, list[float]] = {"with": [], "without": []}
    cpu: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(repeat):
        for label in ("without", "with"):
            wide_tabs.INDEXED = every if label == "with" else tuple(t for t in every if t != tab)
            benchmark_results_bump(benchmark_id=benchmark.pk)
            t, c = time.perf_counter(), time.process_time()
            board_refresh(benchmark_id=benchmark.pk)
            times[label].append(time.perf_counter() - t)
            cpu[label].append(time.process_time() - c)
    wide_tabs.INDEXED = every
    # The process's CPU time as well as the wall time: SQLite runs in this process, so the CPU time is the
    # refresh's whole work, and on a loaded shared machine it varies far less than the wall time.
    for what, got in (("wall", times), ("CPU", cpu)):
        a, b = statistics.median(got["without"]), statistics.median(got["with"])
        print(f"board refresh per change, {what} time, median of {repeat}: without the {tab} tab {a:.2f} s, with it "
              f"{b:.2f} s ({100 * (b / a - 1):+.1f} %); each without: " + " ".join(f"{x:.2f}" for x in got["without"])
              + "; each with: " + " ".join(f"{x:.2f}" for x in got["with"]) + f"; {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--threads", type=int, default=1)  # sync workers measured best on 2 cores (gthread: GIL hand-offs)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--client", choices=("wrk", "python"), default=None)
    parser.add_argument("--db-per-request", action="store_true",
                        help="SQLite without DATABASE_URL: a new connection (and a cold page cache) per request")
    parser.add_argument("--tab-runs", type=int, default=3, help="uncached requests per tab (5. above)")
    parser.add_argument("--routers-pool-max", type=int, default=2000,
                        help="build the router pool (a candidate model per entry) up to this many entries")
    parser.add_argument("--only", default="", help="comma-separated parts to run after the build: "
                        "overview (uncached and cached), after-change, refresh (the worker's cost of one change and "
                        "of a burst of 20), tabs, throughput (default: all); wide-pages (each wide tab's first, middle "
                        "and last page in every sort, CPU and wall time: not in the default); refresh-tab (with "
                        "--without-tab: the refresh alternately with and without that tab's index)")
    parser.add_argument("--worker", choices=("thread", "process"), default="thread",
                        help="where the refresh runs beside the reads after a change (a Celery worker is a process)")
    parser.add_argument("--cache-url", default=None, help="a shared cache (redis://...); default: local memory")
    parser.add_argument("--without-tab", default="", help="leave this wide tab (tools, ...) out of the board's "
                        "refresh, to measure what its index costs the refresh (docs/performance.md)")
    parser.add_argument("--prediction-rows", type=int, default=20,
                        help="copies given prediction rows (a re-score rebuilds an entry from them); the others "
                        "have their submission, results and board entry only")
    parser.add_argument("--profile", default="", help="with refresh: write the one-change refresh's cProfile "
                        "statistics to this path and print its costliest functions")
    parser.add_argument("--queries", type=int, default=0, help="with refresh: print this many of the one-change "
                        "refresh's costliest SQL statements (wall time of each execute, summed by statement text)")
    parser.add_argument("--database-url", default=None, help="run against this database (postgres://...) instead "
                        "of VAR_DIR's SQLite file; reused as the SQLite file is (one size per database)")
    parser.add_argument("--no-vacuum", action="store_true", help="on PostgreSQL, no VACUUM ANALYZE after the build "
                        "and before the measurements (this machine's server runs without autovacuum: ``vacuum``)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from annotation.models import Benchmark
    from leaderboard import wide_tabs
    from leaderboard.services import board_refresh

    if args.without_tab:
        wide_tabs.INDEXED = tuple(t for t in wide_tabs.INDEXED if t != args.without_tab)
        print(f"the refresh builds no index for the {args.without_tab} tab")

    call_command("migrate", verbosity=0)
    t = time.perf_counter()
    build(args.submissions, args.prediction_rows)
    print(f"built {args.submissions} submissions in {time.perf_counter() - t:.1f} s")
    if not args.no_vacuum:
        vacuum("after the bulk build")
    benchmark = Benchmark.objects.get(slug="adaptmm-demo")
    t = time.perf_counter()
    board_refresh(benchmark_id=benchmark.pk)
    build_s = time.perf_counter() - t
    print(f"board built (entries, ranks, intervals, neighbour tests): {build_s:.2f} s")
    from evaluation.services import benchmark_results_bump

    benchmark_results_bump(benchmark_id=benchmark.pk)  # what the task does after a finish: no entry moved,
    t = time.perf_counter()  # every rank and interval again, the MCC tests of unchanged pairs kept
    board_refresh(benchmark_id=benchmark.pk)
    rebuild_s = time.perf_counter() - t
    print(f"board rebuilt after a change (the task's work per finish, entries aside): {rebuild_s:.2f} s")
    if not args.no_vacuum:
        vacuum("after the board's build, before the measurements")
    print(f"Python {sys.version.split()[0]}, {load_average()}")
    parts = set(args.only.split(",")) if args.only else {"overview", "after-change", "refresh", "tabs", "throughput"}
    if "refresh-tab" in parts and args.without_tab:
        refresh_with_and_without(benchmark, args.without_tab, args.repeat)
    client = Client()
    median_ms(client, 3, uncached=True)  # warm up imports and templates
    uncached, cached = [0.0], [0.0]
    if "overview" in parts:
        uncached, cached = [], []
        for run in range(args.repeat):
            c = time.process_time()
            with backend_cpu() as server:
                uncached.append(median_ms(client, 31, uncached=True))
            cpu_ms = 1000 * (time.process_time() - c) / 31
            served = "" if server["s"] is None else f" + the PostgreSQL backend's {1000 * server['s'] / 31:.1f} ms"
            client.get(URL)
            cached.append(median_ms(client, 301, uncached=False))
            print(f"  run {run + 1}: uncached median {uncached[-1]:.1f} ms over 31 requests (CPU mean {cpu_ms:.1f} ms"
                  f"{served}), cached median {cached[-1]:.2f} ms over 301; {load_average()}")
        print(f"overview, uncached: median {statistics.median(uncached):.1f} ms (runs {min(uncached):.1f}-"
              f"{max(uncached):.1f})")
        print(f"overview, cached:   median {statistics.median(cached):.2f} ms (runs {min(cached):.2f}-{max(cached):.2f})")

    page_bytes = len(client.get(URL).content)
    after_idle, after_busy = [0.0], [0.0]
    if "after-change" in parts:
        after_idle, after_busy = after_change_ms(client, benchmark, args.worker)
        print(f"overview just after a publish or unpublish, max of 20 reads: no worker {max(after_idle):.1f} ms "
              f"(median {statistics.median(after_idle):.1f}); refresh running beside it {max(after_busy):.1f} ms "
              f"(median {statistics.median(after_busy):.1f}); {load_average()}")
        print("  no worker, each read (ms): " + " ".join(f"{x:.1f}" for x in after_idle))
        print("  refresh beside it, each read (ms): " + " ".join(f"{x:.1f}" for x in after_busy))
    refresh: dict[str, float] = {}
    if "refresh" in parts:
        refresh = refresh_costs(benchmark, profile=args.profile, queries=args.queries)
    tabs: dict[str, list[float]] = {}
    if "tabs" in parts:
        from config.celery import task_by_name
        from django.conf import settings

        # every derived kind's build, as the workers would (the board's is current already); the router pool's
        # build grows with the square of the pool (a row per candidate model, each scored over the pool), so
        # it is left out above --routers-pool-max entries: the Routers tab then shows its last build (none).
        for name in settings.RESULTS_CHANGED_TASKS:
            if name == "routers.pool_refresh" and args.submissions > args.routers_pool_max:
                print(f"{name}: skipped at {args.submissions:,} entries (--routers-pool-max {args.routers_pool_max:,})")
                continue
            t = time.perf_counter()
            task_by_name(name).run(benchmark.pk)
            print(f"{name}: {time.perf_counter() - t:.1f} s", flush=True)
        print("the other tabs, page 1 as an anonymous visitor sees it:")
        tabs = tab_figures(benchmark, args.tab_runs)
    if "wide-pages" in parts:
        print("the wide tabs' pages, first, middle and last, every sort, uncached:")
        wide_tab_pages(benchmark, args.tab_runs)
    rates, cpu = [0.0], [0.0]
    if "throughput" in parts:
        from django.db import connections

        connections.close_all()
        rates, cpu = throughput(args)
    import json

    print(RESULT + json.dumps({"after_idle_ms": max(after_idle), "after_busy_ms": max(after_busy),
                               "build_s": build_s, "rebuild_s": rebuild_s, "uncached_ms": statistics.median(uncached),
                               "cached_ms": statistics.median(cached), "rps": statistics.median(rates),
                               "cpu_ms": statistics.median(cpu), "bytes": page_bytes, "tabs": tabs, "refresh": refresh}),
          flush=True)


if __name__ == "__main__":
    main()
