"""The leaderboard's Celery task: rebuild a benchmark's board when its public results change.

Sent by name (settings.RESULTS_CHANGED_TASKS) on commit of ``evaluation.services.benchmark_results_bump``,
so evaluation never imports the leaderboard. Idempotent: a board already at the benchmark's
``results_version`` returns at once, so duplicates and re-deliveries cost one query.
"""

from __future__ import annotations

from celery import shared_task

from leaderboard.rank_update import ranks_fold_due
from leaderboard.services import board_refresh as board_refresh_service
from leaderboard.tabs import overview_warm


@shared_task(name="leaderboard.tasks.board_refresh", ignore_result=True, acks_late=True)
def board_refresh(benchmark_id: int) -> None:
    board_refresh_service(benchmark_id=benchmark_id)
    overview_warm(benchmark_id)  # the page readers read first, once per build (a cache get when it is there)


@shared_task(name="leaderboard.tasks.ranks_fold", ignore_result=True)
def ranks_fold() -> None:
    """The sweeper's fold of the boards' recorded rank shifts into their rows (settings.CELERY_BEAT_SCHEDULE, on the
    sweeper's queue): what a fold writes (most of a board, at times) is kept off the refresh after a change."""
    ranks_fold_due()
