"""The Progress months' recount after a change (issue 37; docs/performance.md): on a database the leaderboard bench
built, the months of the 20 newest entries counted again from every point of them in Python (``summary_of(points)``,
the recount before) and by SQL (``month_summary``, the refresh's now); CPU and wall seconds of each, --runs times,
and whether they are equal. Opens the database read-only (it writes nothing; SQLite may add its -shm/-wal files).

    VAR_DIR=/tmp/h19-bench/n100000 .venv/bin/python bench/bench_progress_months.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
DB = Path(os.environ["VAR_DIR"]).resolve() / "db.sqlite3"
os.environ["DATABASE_URL"] = f"sqlite:///{DB}"
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
os.environ.pop("CELERY_BROKER_URL", None)

import django  # noqa: E402

django.setup()

from django.db import connections  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--benchmark", default="adaptmm-demo")
    args = parser.parse_args()
    settings = connections["default"].settings_dict
    settings["NAME"] = f"file:{DB}?mode=ro"
    settings["OPTIONS"] = {**settings.get("OPTIONS", {}), "uri": True}
    settings["OPTIONS"].pop("init_command", None)

    from annotation.models import Benchmark
    from leaderboard import progress_store as ps
    from leaderboard.models import BoardEntry

    b = Benchmark.objects.get(slug=args.benchmark)
    newest = list(BoardEntry.objects.filter(benchmark=b).order_by("-pk").values_list("submission_id", flat=True)[:20])
    months = ps.months_of(b, newest)

    def timed(f):  # noqa: ANN001, ANN202
        cpu, wall = time.process_time(), time.perf_counter()
        out = f()
        return out, time.process_time() - cpu, time.perf_counter() - wall

    print(f"months {sorted(months)}, entries {BoardEntry.objects.filter(benchmark=b).count():,}", flush=True)
    for _ in range(args.runs):
        before, b_cpu, b_wall = timed(lambda: ps.summary_of(ps.points(b, months)))
        now, n_cpu, n_wall = timed(lambda: {m: ps.month_summary(b, m) for m in sorted(months)})
        print(f"summary_of(points): {b_cpu:.3f} s CPU {b_wall:.3f} s wall | month_summary: {n_cpu:.3f} s CPU "
              f"{n_wall:.3f} s wall | equal {before == {m: cells for m, cells in now.items() if cells}}",
              flush=True)


if __name__ == "__main__":
    main()
