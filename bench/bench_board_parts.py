"""Where the board's time goes on a database the leaderboard bench built (docs/performance.md, issue 37).

    VAR_DIR=/tmp/lb/n100000 .venv/bin/python bench/bench_board_parts.py first-build   # the board built whole, by part
    VAR_DIR=/tmp/lb/n100000 .venv/bin/python bench/bench_board_parts.py change newest  # or owner, burst: by part
    VAR_DIR=/tmp/lb/n100000 .venv/bin/python bench/bench_board_parts.py tabs [--runs 5] [--refresh-kinds]

``VAR_DIR`` is the folder of one size's database (``bench_leaderboard.py``'s VAR_DIR/n<size>), or
``DATABASE_URL=postgres://...`` a PostgreSQL database built the same way. ``first-build``
deletes the board's build state and runs ``board_refresh`` with each part timed (CPU and wall); ``change``
unpublishes a submission (the newest; a sample's cheapest member in the Oracle's state, ``owner``; or the 20
newest, ``burst``), refreshes, publishes it back and refreshes, each part timed; ``tabs`` requests every tab's
page 1 as an anonymous visitor, the cache cleared before each request, and prints the median wall and CPU times
(``--refresh-kinds``: the other derived kinds built first, as the workers would; the router pool is left out, as
the bench leaves it out above 2,000 entries).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
if not os.environ.get("DATABASE_URL", "").startswith("postgres"):  # else that PostgreSQL database
    os.environ["DATABASE_URL"] = f"sqlite:///{Path(os.environ['VAR_DIR']).resolve() / 'db.sqlite3'}"
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost,testserver"
os.environ["PAGE_RATE_LIMIT_ANON"] = os.environ["PAGE_RATE_LIMIT_USER"] = "off"

import django  # noqa: E402

django.setup()

from annotation.models import Benchmark  # noqa: E402
from leaderboard import services  # noqa: E402

PARTS = ("stale_submission_ids", "entries_sync", "ranks_build", "ranks_update", "tables_build", "tables_update",
         "pareto_refresh", "figures_present")


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            print(f"    {name}: {time.process_time() - cpu:.2f} s CPU, {time.perf_counter() - wall:.2f} s wall; {load()}",
                  flush=True)
    return run


def refresh(benchmark: Benchmark, label: str, full: bool = False) -> None:
    cpu, wall = time.process_time(), time.perf_counter()
    services.board_refresh(benchmark_id=benchmark.pk, full=full)
    print(f"  {label}: board_refresh {time.process_time() - cpu:.2f} s CPU, {time.perf_counter() - wall:.2f} s wall; "
          f"{load()}", flush=True)


def change(benchmark: Benchmark, which: str) -> None:
    from evaluation.models import Submission
    from evaluation.services import submission_set_public

    public = Submission.objects.filter(benchmark=benchmark, is_public=True).order_by("-pk")
    subs = list(public[:20]) if which == "burst" else [public.first()]
    if which == "owner":  # a sample's cheapest member: its leaving makes the Oracle read every member's vectors
        from leaderboard.models import ParetoState
        from leaderboard.pareto_store import Oracle

        state = ParetoState.objects.get(benchmark=benchmark, mode="adaptive", unit="usd")
        owners = Oracle(int(next(iter(state.picks["lengths"]))), bytes(state.oracle)).owners()
        subs = [public.filter(pk__in=owners).first()]
    services.board_refresh(benchmark_id=benchmark.pk)
    for shown in (False, True):
        for sub in subs:
            submission_set_public(submission=sub, public=shown)
        refresh(benchmark, f"{'publish' if shown else 'unpublish'} of {len(subs)} ({which}, #{subs[0].pk})")


def tabs(benchmark: Benchmark, runs: int, refresh_kinds: bool) -> None:
    from django.conf import settings
    from django.core.cache import cache
    from django.test import Client

    from config.celery import task_by_name
    from leaderboard.tabs import tab_url, tabs_for

    if refresh_kinds:
        for name in settings.RESULTS_CHANGED_TASKS:
            if name != "routers.pool_refresh":
                cpu = time.process_time()
                task_by_name(name).run(benchmark.pk)
                print(f"{name}: {time.process_time() - cpu:.1f} s CPU", flush=True)
    client = Client()
    client.get(tab_url(benchmark, "overview"))  # imports and templates loaded
    for tab in tabs_for(benchmark):
        wall, cpu = [], []
        for _ in range(runs):
            cache.clear()
            w, c = time.perf_counter(), time.process_time()
            response = client.get(tab_url(benchmark, tab.slug))
            wall.append(1000 * (time.perf_counter() - w))
            cpu.append(1000 * (time.process_time() - c))
            assert response.status_code == 200, (tab.slug, response.status_code)
        print(f"  {tab.slug:16} {len(response.content):>9,} bytes; uncached median {statistics.median(wall):8.1f} ms "
              f"wall, {statistics.median(cpu):8.1f} ms CPU over {runs}; {load()}", flush=True)


def main() -> None:
    benchmark = Benchmark.objects.get(slug="adaptmm-demo")
    command = sys.argv[1] if len(sys.argv) > 1 else "tabs"
    if command in ("first-build", "change"):
        for name in PARTS:
            setattr(services, name, timed(name, getattr(services, name)))
    if command == "first-build":
        from evaluation.models import DerivedState

        DerivedState.objects.filter(benchmark=benchmark, kind="board").delete()
        refresh(benchmark, "the board's first build", full=True)
    elif command == "change":
        change(benchmark, sys.argv[2] if len(sys.argv) > 2 else "newest")
    else:
        runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
        tabs(benchmark, runs, "--refresh-kinds" in sys.argv)


if __name__ == "__main__":
    main()
