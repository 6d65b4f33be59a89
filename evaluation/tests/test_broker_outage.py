"""The broker going away under REAL worker processes: a Redis of the test's own (``redis-server`` on a
free port, nothing saved), stopped and started again by the test, with the workers laid out as
scripts/run and the compose file lay them out: the pipeline's worker (prefork) on its queue, the
sweeper's worker with beat on its own. The audit's drills (issue 27): the broker down at upload, the
broker down mid-run.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from rest_framework.test import APIClient

from config.celery import app as celery_app
from evaluation.models import Submission
from evaluation.tests.submission_helpers import good_file, upload
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

pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server to start a broker of its own"),
]


OUTAGE = float(os.environ.get("TEST_BROKER_OUTAGE_SECONDS", "25"))  # the audit's drill: Redis down 25 s at upload


def free_port() -> int:
    """A free port below Linux's ephemeral range (32768-60999): the Redis is stopped and started again on it, and
    meanwhile the suite's other processes open connections whose local ports come from that range."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(20_000, 32_000)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


class RedisServer:
    """A throwaway Redis on a free port, stopped (SIGTERM, nothing saved: its messages are lost, as in
    a crash) and started again on the same port."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.folder = folder
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = (self.folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        pytest.fail("redis-server did not start:\n" + (self.folder / "redis.log").read_text()[-2000:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def redis_broker(tmp_path, monkeypatch) -> Iterator[RedisServer]:
    """A Redis of the test's own, which this process's Celery app publishes to as well."""
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    old = celery_app.conf.broker_url  # read before the variable changes: Celery reads it before its own setting
    monkeypatch.setenv("CELERY_BROKER_URL", server.url)  # (CI sets it)
    celery_app.conf.broker_url = server.url
    celery_app._after_fork()  # drop the cached connection pools
    yield server
    celery_app.conf.broker_url = old
    celery_app._after_fork()
    server.stop()


# The recovery settings at their defaults (the fixture's are short): the sweep every 15 s bounds the wait.
DEFAULTS = {"SUBMISSION_SWEEP_SECONDS": "15", "SUBMISSION_HEARTBEAT_SECONDS": "10", "SUBMISSION_STUCK_SECONDS": "60",
            "SUBMISSION_QUEUED_RESEND_SECONDS": "300"}


def start_as_scripts_run(start_worker, url: str, **env: str) -> tuple[Worker, Worker]:  # noqa: F811
    """The pipeline's worker and the sweeper's (with beat), both prefork and under scripts/supervise, as
    scripts/run starts them."""
    env = {**DEFAULTS, "CELERY_BROKER_URL": url, "SUPERVISE_DELAY_SECONDS": "1", **env}
    pipeline = start_worker(queues=django_settings.SUBMISSIONS_QUEUE, pool="prefork", beat=False,
                            supervised=True, **env)
    sweeper = start_worker(queues=django_settings.SUBMISSIONS_SWEEP_QUEUE, pool="prefork",
                           supervised=True, **env)
    for w in (pipeline, sweeper):
        wait_for(lambda w=w: " ready." in w.log.read_text(), w, "the worker to be ready")
    return pipeline, sweeper


def test_a_submission_uploaded_while_the_broker_is_down_is_done_within_30_s_of_its_return(
        bench, owner, start_worker, redis_broker) -> None:  # noqa: F811
    pipeline, sweeper = start_as_scripts_run(start_worker, redis_broker.url)
    api = APIClient()
    api.force_authenticate(owner)
    redis_broker.stop()
    down = time.monotonic()
    answer = api.post(f"/api/v1/benchmarks/{bench.slug}/submissions/",
                      {"file": upload(good_file()), "model_name": "m1"}, format="multipart")
    assert answer.status_code == 202, answer.content  # the upload itself succeeds
    sub = Submission.objects.get(pk=answer.json()["id"])
    assert (sub.status, sub.enqueue_failed) == ("queued", True)
    time.sleep(max(0.0, OUTAGE - (time.monotonic() - down)))
    redis_broker.start()
    back = time.monotonic()
    wait_for(lambda: status_of(sub) == "done", pipeline, "done after the broker's return", timeout=60)
    took = time.monotonic() - back
    print(f"\nbroker down {OUTAGE:g} s at upload: done {took:.1f} s after its return")
    assert took <= 30, sweeper.output()
    assert_scored_once(sub)
    for w in (pipeline, sweeper):
        assert "exited with status" not in w.log.read_text(), w.output()  # neither stopped


def test_a_worker_rides_out_a_broker_outage_mid_run(bench, owner, start_worker, judge_server, redis_broker) -> None:  # noqa: F811
    server = judge_server(delay=0.5, flaky=False)  # a slow judge, one question per request: seconds of judging
    pipeline, sweeper = start_as_scripts_run(start_worker, redis_broker.url, **server.env, JUDGE_OPENAI_CONCURRENCY="1",
                                             JUDGE_OPENAI_BATCH="1")
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "judging" and server.calls >= 2, pipeline, "judging")
    redis_broker.stop()
    time.sleep(15)
    redis_broker.start()
    back = time.monotonic()
    wait_for(lambda: status_of(sub) == "done", pipeline, "done after the outage")
    assert_scored_once(sub)
    # The same worker processes, not restarted: they reconnect and take new work.
    after = create(bench, owner)
    wait_for(lambda: status_of(after) == "done", pipeline, "a submission made after the outage to be done")
    print(f"\nbroker down 15 s mid-run: the next submission done {time.monotonic() - back:.1f} s after its return")
    for w in (pipeline, sweeper):  # neither stopped (scripts/supervise would have started it again)
        assert "exited with status" not in w.log.read_text(), w.output()
        assert "Warm shutdown" not in w.log.read_text(), w.output()
        # They tried the broker every BROKER_RECONNECT_MAX_SECONDS (5) at most, not kombu's 2, 4, 6 ... 30 s.
        waits = [float(x) for x in re.findall(r"Trying again in ([\d.]+) seconds", w.log.read_text())]
        assert waits and max(waits) <= 5, waits


def celery_pid(worker: Worker) -> int:
    """The Celery worker's main process, the child of scripts/supervise."""
    assert worker.proc is not None
    out = subprocess.run(["pgrep", "-P", str(worker.proc.pid), "-f", "celery"], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else 0


def test_a_worker_that_exits_during_an_outage_is_started_again_and_scores_once_the_broker_is_back(
        bench, owner, start_worker, redis_broker) -> None:  # noqa: F811
    pipeline, sweeper = start_as_scripts_run(start_worker, redis_broker.url)
    first = celery_pid(pipeline)
    redis_broker.stop()
    os.kill(first, signal.SIGKILL)  # the pipeline's worker exits (here killed) while the broker is away
    sub = create(bench, owner)
    wait_for(lambda: celery_pid(pipeline) not in (0, first), pipeline, "scripts/supervise to start it again")
    time.sleep(3)
    redis_broker.start()
    back = time.monotonic()
    wait_for(lambda: status_of(sub) == "done", pipeline, "done by the restarted worker", timeout=60)
    print(f"\nworker exited during a broker outage: done {time.monotonic() - back:.1f} s after the broker's return")
    assert_scored_once(sub)
    assert "exited with status" in pipeline.log.read_text()
