"""A burst of changes costs the board's refresh once (evaluation.queueing.results_changed_publish sends each
refresh with a countdown, settings.RESULTS_CHANGED_DELAY_SECONDS): twenty changes within a second, each
sending its message on commit to a REAL Celery worker (evaluation's worker fixture), are built by one run of
the board's refresh task; the other nineteen find the board current. Without the countdown the same burst
built the board 17 times (PostgreSQL, Redis)."""

from __future__ import annotations

import re
import time

import pytest

from evaluation.derived import derived_read
from evaluation.services import submission_metadata_update
from evaluation.tests.test_worker_integration import start_worker, wait_for  # noqa: F401 - a fixture
from leaderboard.tests import helpers

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_twenty_changes_within_a_second_build_the_board_once(start_worker, settings, tmp_path) -> None:  # noqa: F811
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    subs = [helpers.submit(benchmark, spec, refresh=False) for spec in (helpers.ALPHA, helpers.BETA, helpers.GAMMA)]
    helpers.refreshed(benchmark)
    # The default is 2 s; twenty changes take more than a second on a loaded machine (a validation, a commit and
    # four messages each), and what is tested is a burst shorter than the delay.
    settings.RESULTS_CHANGED_DELAY_SECONDS = 15.0  # the twenty changes took over 5 s once on a loaded machine
    # no sweeper: it re-sends every kind's refresh while the board is behind, which would keep the worker busy
    worker = start_worker(beat=False)

    def runs(task: str = "leaderboard.tasks.board_refresh") -> int:
        return len(re.findall(rf"Task {re.escape(task)}\[[^]]+\] succeeded", worker.log.read_text()))

    def idle() -> bool:  # every task received has finished (the router pool's refresh queues a training too)
        log = worker.log.read_text()
        return log.count("] received") == log.count("] succeeded")

    # the three submissions' own messages (sent before the worker started, each kind's) run first: the burst
    # must find the worker idle
    wait_for(lambda: worker.log.exists() and all(runs(task) >= 3 for task in settings.RESULTS_CHANGED_TASKS)
             and idle(), worker, "the setup's messages run")

    def builds() -> int:  # evaluation.derived.derived_refresh logs each build
        return len(re.findall(r"benchmark \d+: board built for results version", worker.log.read_text()))

    before = builds()
    # the board's refresh alone is sent (the other kinds' builds would keep the worker busy during the burst)
    settings.RESULTS_CHANGED_TASKS = ("leaderboard.tasks.board_refresh",)
    submission_metadata_update(submission=subs[0], organisation="Lab 0")  # commits; sends on commit
    start = time.monotonic()  # after the first (its imports and first queries take a while on a loaded machine)
    for i in range(1, 20):  # one every 50 ms: without the countdown, each would reach an idle worker
        time.sleep(max(0.0, start + i / 20 - time.monotonic()))
        submission_metadata_update(submission=subs[i % 3], organisation=f"Lab {i}")
    assert time.monotonic() - start < settings.RESULTS_CHANGED_DELAY_SECONDS

    wait_for(lambda: runs() >= 23, worker, "the twenty messages run")
    benchmark.refresh_from_db()
    assert not derived_read(benchmark, "board", payload=False).updating
    assert builds() - before == 1, f"{builds() - before} builds for a burst of 20"
