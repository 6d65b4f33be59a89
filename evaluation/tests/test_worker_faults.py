"""Faults injected into REAL worker processes, with the test database and the configured broker
(PostgreSQL and Redis in CI): a worker killed mid-stage, the database connections cut mid-stage,
a stage delivered twice, no worker on the pipeline's queue. Each says how long recovery took;
docs/submissions.md ("Recovery bounds") quotes these figures.

The workers run with short recovery settings (test_worker_integration.start_worker: heartbeat
1 s, stuck after 3 s, sweep every 1 s), so each test takes seconds, not minutes.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from evaluation.models import Submission, SweepRun
from evaluation.tests.test_worker_integration import (  # noqa: F401 - fixtures
    Worker,
    assert_scored_once,
    bench,
    create,
    judge_server,
    owner,
    start_worker,
    status_of,
    wait_for,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def stuck_seconds() -> float:
    return float(os.environ.get("TEST_SUBMISSION_STUCK_SECONDS", "3"))


def sweep_seconds() -> float:
    return float(os.environ.get("TEST_SUBMISSION_SWEEP_SECONDS", "1"))


def holder(sub: Submission) -> str:
    return Submission.objects.values_list("claim_token", flat=True).get(pk=sub.pk)


def held_by(sub: Submission, worker: Worker) -> bool:
    return f":{worker.proc.pid}:" in holder(sub)


def send_stage(task_name: str, sub: Submission, queue: str = "") -> None:
    from config.celery import app

    app.loader.import_default_modules()
    app.tasks[task_name].apply_async(args=[sub.pk], queue=queue or django_settings.SUBMISSIONS_QUEUE)


def test_a_worker_killed_mid_stage_is_replaced_by_another_within_the_bound(
        bench, owner, start_worker, judge_server) -> None:
    server = judge_server(delay=0.15, flaky=False)  # a slow judge, one request at a time: seconds of judging
    env = {**server.env, "JUDGE_OPENAI_CONCURRENCY": "1"}
    first, second = start_worker(**env), start_worker(**env)
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "judging" and server.calls >= 3, first, "judging")
    victim, survivor = (first, second) if held_by(sub, first) else (second, first)
    assert held_by(sub, victim)
    victim.kill()
    killed = time.monotonic()
    wait_for(lambda: held_by(sub, survivor), survivor, "the other worker to take the stage over",
             timeout=stuck_seconds() + 2 * sweep_seconds() + 30)
    taken_over = time.monotonic() - killed
    wait_for(lambda: status_of(sub) == "done", survivor, "done by the other worker")
    done = time.monotonic() - killed
    print(f"\nkill: taken over after {taken_over:.1f} s, done {done:.1f} s after the kill "
          f"(stuck {stuck_seconds():g} s, sweep {sweep_seconds():g} s)")
    # The claim goes stale SUBMISSION_STUCK_SECONDS after the last heartbeat; the next sweep sends it.
    assert taken_over <= stuck_seconds() + 2 * sweep_seconds() + 3
    assert_scored_once(sub)
    assert "crashed" not in survivor.log.read_text()
    print(f"judge calls {server.calls}")


def test_a_database_disconnect_mid_stage_is_retried_and_the_submission_still_finishes(
        bench, owner, start_worker, judge_server) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("cuts the worker's connections with pg_terminate_backend")
    server = judge_server(delay=0.15, flaky=False)
    # The sweeper would not step in for two minutes: only the retry can finish it in time.
    worker = start_worker(**server.env, JUDGE_OPENAI_CONCURRENCY="1", SUBMISSION_STUCK_SECONDS="120")
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "judging" and server.calls >= 3, worker, "judging")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        assert cursor.fetchone()[0] >= 1  # the worker's connections (stage, heartbeat, progress)
    cut = time.monotonic()
    wait_for(lambda: status_of(sub) == "done", worker, "done after the disconnect")
    print(f"\ndatabase disconnect: done {time.monotonic() - cut:.1f} s after the cut")
    assert_scored_once(sub)
    log = worker.log.read_text()
    assert "scoring lost its connection" in log and "crashed" not in log


def test_a_stage_delivered_twice_runs_once_and_the_second_delivery_returns_quietly(
        bench, owner, start_worker, judge_server) -> None:
    # The judge answers two calls, then holds the next until the test releases it: the stage stays
    # mid-judging, without a progress report, for as long as the test needs (longer than
    # SUBMISSION_STUCK_SECONDS, 3 s), however slow the machine. Only the claim's heartbeat thread keeps
    # the sweeper and the second delivery off it.
    server = judge_server(delay=0.05, flaky=False, hold_after=2)
    env = {**server.env, "JUDGE_OPENAI_CONCURRENCY": "1"}
    # Each worker also serves a queue of its own, so the second delivery goes to the idle one for sure
    # (on the shared queue the busy worker's consumer could take it, and the test would wait for nothing).
    shared = f"{django_settings.SUBMISSIONS_QUEUE},{django_settings.SUBMISSIONS_SWEEP_QUEUE}"
    own = {name: f"{django_settings.SUBMISSIONS_QUEUE}-{name}" for name in ("first", "second")}
    first = start_worker(queues=f"{shared},{own['first']}", **env)
    second = start_worker(queues=f"{shared},{own['second']}", **env)
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "judging" and server.held >= 1, first, "judging, held by the judge")
    busy, idle = (first, second) if held_by(sub, first) else (second, first)
    idle_queue = own["second"] if idle is second else own["first"]
    time.sleep(stuck_seconds() + 1)  # past the stuck bound: a claim without a heartbeat would now be taken
    send_stage("evaluation.tasks.submission_score", sub, queue=idle_queue)  # the same stage again, while it runs
    wait_for(lambda: "already claimed" in idle.log.read_text(), idle, "the second delivery")
    assert status_of(sub) == "judging" and held_by(sub, busy)
    server.release()
    holders = set()

    def finished() -> bool:
        token = holder(sub)  # read once: the claim is cleared when the stage finishes, maybe between two reads
        holders.add(token.split(":")[1] if token else "")
        return status_of(sub) == "done"

    wait_for(finished, busy, "done")
    assert holders <= {str(busy.proc.pid), ""}, holders  # never taken from the worker running it
    assert_scored_once(sub)
    for w in (first, second):
        log = w.log.read_text()
        assert "crashed" not in log and "Traceback" not in log, w.output()


def test_the_sweeper_runs_on_its_own_queue_when_no_worker_serves_the_pipeline(
        bench, owner, start_worker, settings) -> None:
    waiting = create(bench, owner)  # its message waits on the pipeline's queue: nobody serves it
    dead = create(bench, owner)
    Submission.objects.filter(pk=dead.pk).update(
        status="validating", attempts=django_settings.SUBMISSION_MAX_ATTEMPTS, claim_token="gone:1:x",
        heartbeat_at=timezone.now() - timedelta(minutes=10))
    sweeper = start_worker(queues=settings.SUBMISSIONS_SWEEP_QUEUE)  # the sweeper's queue only
    wait_for(lambda: status_of(dead) == "failed", sweeper, "the sweeper to fail the worn-out submission")
    dead.refresh_from_db()
    assert "validating stage was started 3 times" in dead.failure_reason
    wait_for(lambda: SweepRun.objects.filter(ran_at__gt=timezone.now() - timedelta(seconds=30)).exists(),
             sweeper, "the sweeper's last run to be recorded")
    assert status_of(waiting) == "queued"
    pipeline_worker = start_worker(queues=settings.SUBMISSIONS_QUEUE)
    wait_for(lambda: status_of(waiting) == "done", pipeline_worker, "done once a pipeline worker is up")
    assert_scored_once(waiting)
