"""The pipeline against a REAL Celery worker process, the test database and the configured broker.

The worker is ``celery -A config worker`` started with the test database's URL and the same
broker (Redis in CI, the embedded filesystem transport otherwise), on a queue of its own so that
nothing else consumes its messages. It runs with the solo pool and in its own process group, so
SIGKILL stops every process of it at once, like an OOM kill or a lost machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connection

from config.celery import app as celery_app
from evaluation import services
from evaluation.models import PredictionResult, Submission
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
ROOT = Path(django_settings.BASE_DIR)
WAIT = 60.0  # seconds before a test gives up waiting for a state (a hang, not a slow pass)


def database_url() -> str:
    """The URL of the database this test process is using right now (the test database)."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    user = quote(db.get("USER") or "")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


class Worker:
    """``pool="prefork"`` runs the stage in a child process, as scripts/run and the compose file do;
    ``beat=False`` leaves the sweeper's schedule to another worker."""

    def __init__(self, queue: str, log: Path, env: dict[str, str], *, pool: str = "solo", beat: bool = True,
                 lean: bool = True, supervised: bool = False, name: str = "") -> None:
        self.queue = queue  # comma-separated, as -Q takes them
        self.log = log
        self.env = env
        self.pool = pool
        self.beat = beat
        self.lean = lean  # without gossip, mingle and heartbeat events, as scripts/run starts it; False: with them
        self.supervised = supervised  # under scripts/supervise, which starts it again when it exits
        self.name = name or f"{log.stem}@%h"
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.queue, "--pool", self.pool,
               "--loglevel", "INFO", "-n", self.name]
        if self.lean:
            cmd += ["--without-mingle", "--without-gossip", "--without-heartbeat"]
        if self.pool == "prefork":
            cmd += ["--concurrency", "1"]
        if self.beat:
            cmd += ["-B", "--schedule", str(self.log.with_suffix(".beat"))]
        return [str(ROOT / "scripts" / "supervise"), *cmd] if self.supervised else cmd

    def start(self) -> None:
        cmd = self.command()
        out = self.log.open("ab")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        # A warm shutdown waits for beat and the broker connection; the test is over, so don't.
        self.kill()

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@pytest.fixture
def start_worker(settings, tmp_path) -> Iterator[Callable[..., Worker]]:
    queue = f"test-submissions-{uuid.uuid4().hex[:8]}"
    sweep_queue = f"{queue}-sweeper"
    settings.SUBMISSIONS_QUEUE = queue
    settings.SUBMISSIONS_SWEEP_QUEUE = sweep_queue
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    workers: list[Worker] = []

    def start(*, queues: str = f"{queue},{sweep_queue}", pool: str = "solo", beat: bool = True, lean: bool = True,
              supervised: bool = False, **extra_env: str) -> Worker:
        env = dict(os.environ)
        env.update({
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "DATABASE_URL": database_url(),
            "SUBMISSIONS_QUEUE": queue,
            "SUBMISSIONS_SWEEP_QUEUE": sweep_queue,
            # The sweeper runs every second in the worker's beat; a running stage beats every second
            # and is called dead after 3 s of silence; an unclaimed queued one is re-sent after 3 s.
            # (TEST_SUBMISSION_* override them, to measure the recovery bounds at other settings.)
            "SUBMISSION_SWEEP_SECONDS": os.environ.get("TEST_SUBMISSION_SWEEP_SECONDS", "1"),
            "SUBMISSION_HEARTBEAT_SECONDS": os.environ.get("TEST_SUBMISSION_HEARTBEAT_SECONDS", "1"),
            "SUBMISSION_STUCK_SECONDS": os.environ.get("TEST_SUBMISSION_STUCK_SECONDS", "3"),
            "SUBMISSION_QUEUED_RESEND_SECONDS": "3",
            "SUBMISSION_JUDGE_RETRY_SECONDS": "1",
            "PYTHONUNBUFFERED": "1",
        })
        env.update(extra_env)
        worker = Worker(queues, tmp_path / f"worker-{len(workers)}.log", env, pool=pool, beat=beat, lean=lean,
                        supervised=supervised)
        worker.start()
        workers.append(worker)
        return worker

    yield start
    for w in workers:
        w.stop()
    celery_app.conf.task_always_eager = eager
    if celery_app.conf.broker_url.startswith("filesystem"):
        folder = Path(django_settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
        for q in (queue, sweep_queue):
            for stale in folder.glob(f"*.{q}.msg"):
                stale.unlink(missing_ok=True)


@pytest.fixture
def bench(tmp_path):
    return make_benchmark(tmp_path)


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("ada", "ada@example.org", "pw")


def wait_for(predicate: Callable[[], bool], worker: Worker, what: str, timeout: float = WAIT) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}; worker log:\n{worker.output()}")


def status_of(sub: Submission) -> str:
    return Submission.objects.values_list("status", flat=True).get(pk=sub.pk)


def create(bench, owner, content: bytes = b"") -> Submission:
    return services.submission_create(benchmark=bench, owner=owner, file=upload(content or good_file()),
                                      model_name="m1", enforce_limits=False)


def assert_scored_once(sub: Submission) -> None:
    sub.refresh_from_db()
    assert sub.status == "done", sub.failure_reason
    rows = PredictionResult.objects.filter(submission=sub)
    assert rows.count() == 12
    assert len(set(rows.values_list("sample_id", "mode"))) == 12
    assert sub.results["modes"]["text"]["accuracy"]["overall"]["count"] == 4  # s2 and s5 wrong


def test_a_submission_goes_from_queued_to_done_with_correct_results(bench, owner, start_worker) -> None:
    worker = start_worker()
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "done", worker, "done")
    assert_scored_once(sub)
    row = PredictionResult.objects.get(submission=sub, sample__uid="s2", mode="text")
    assert not row.correct and row.extracted == "99"


@contextlib.contextmanager
def broker_unreachable() -> Iterator[None]:
    """This process's Celery app publishes to a port where no broker listens (CELERY_BROKER_URL too:
    Celery reads it before its own setting, and CI sets it)."""
    old, old_env = celery_app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    celery_app.conf.broker_url = os.environ["CELERY_BROKER_URL"] = "redis://127.0.0.1:9/0"
    celery_app._after_fork()  # drop the cached connection pools
    try:
        yield
    finally:
        celery_app.conf.broker_url = old
        if old_env is None:
            del os.environ["CELERY_BROKER_URL"]
        else:
            os.environ["CELERY_BROKER_URL"] = old_env
        celery_app._after_fork()


def test_a_broker_outage_at_upload_leaves_it_queued_and_it_finishes_once_the_broker_is_back(
        bench, owner, start_worker) -> None:
    with broker_unreachable():
        sub = create(bench, owner)
    assert status_of(sub) == "queued"  # the upload itself succeeded
    assert Submission.objects.get(pk=sub.pk).enqueue_failed  # its message did not go
    worker = start_worker()  # the broker is back, with a sweeper
    wait_for(lambda: status_of(sub) == "done", worker, "done after the sweeper re-sent it")
    assert_scored_once(sub)


class JudgeServer:
    """A fake OpenAI-compatible chat-completions server in a process of its own
    (evaluation/tests/fake_judge.py) that fails every other call (HTTP 500), or none when not
    ``flaky``; ``calls``, ``failures`` and ``questions`` are what it has seen so far."""

    def __init__(self, delay: float = 0.0, flaky: bool = True, fail_after: int | None = None,
                 hold_after: int | None = None) -> None:
        cmd = [sys.executable, "-m", "evaluation.tests.fake_judge", "--delay", str(delay), *(["--flaky"] * flaky),
               *(["--fail-after", str(fail_after)] if fail_after is not None else []),
               *(["--hold-after", str(hold_after)] if hold_after is not None else [])]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "port N" once it listens
        if not line.startswith("port "):
            self.close()
            pytest.fail(f"the fake judge did not start: {line!r}")
        self.port = int(line.split()[1])

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as response:
            return json.loads(response.read())

    @property
    def calls(self) -> int:
        return int(self.stats()["calls"])

    @property
    def failures(self) -> int:
        return int(self.stats()["failures"])

    @property
    def held(self) -> int:
        """Calls waiting now for ``release`` (``hold_after``)."""
        return int(self.stats()["held"])

    def release(self) -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/release", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    @property
    def questions(self) -> list[str]:
        """Every question answered (batch or single), as canonical JSON."""
        return list(self.stats()["questions"])

    @property
    def env(self) -> dict[str, str]:
        return {"JUDGE_OPENAI_BASE_URL": f"http://127.0.0.1:{self.port}/v1",
                "JUDGE_OPENAI_API_KEY": "test", "JUDGE_OPENAI_MODEL": "fake-judge"}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def judge_server() -> Iterator[Callable[..., JudgeServer]]:
    servers: list[JudgeServer] = []

    def make(**kw: float | bool | int) -> JudgeServer:
        servers.append(JudgeServer(**kw))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_a_judge_that_fails_every_other_call_is_retried_and_the_submission_finishes(
        bench, owner, start_worker, judge_server) -> None:
    server = judge_server()
    worker = start_worker(**server.env)
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "done", worker, "done with a flaky judge")
    assert_scored_once(sub)
    assert server.failures >= 1 and server.calls > server.failures
    # The four wrong answers are numbers: the rule's verdict is final, no judge is asked.
    assert not PredictionResult.objects.filter(submission=sub).exclude(decided_by="rule").exists()
    adaptive = PredictionResult.objects.filter(submission=sub, mode="adaptive")
    assert [r.calls[0]["decided_by"] for r in adaptive] == ["judge:openai:fake-judge"] * 6


def test_a_worker_killed_while_scoring_is_restarted_and_the_submission_finishes_once(
        bench, owner, start_worker, judge_server) -> None:
    # A slow judge, one request at a time, so the kill lands in the middle of scoring.
    server = judge_server(delay=0.3)
    env = {**server.env, "JUDGE_OPENAI_CONCURRENCY": "1"}
    worker = start_worker(**env)
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "judging" and server.calls >= 3, worker, "judging")
    worker.kill()
    assert status_of(sub) == "judging"
    assert not PredictionResult.objects.filter(submission=sub).exists()
    calls_before = server.calls
    restarted = start_worker(**env)
    wait_for(lambda: status_of(sub) == "done", restarted, "done after the restart")
    assert server.calls > calls_before  # the restarted worker did the judging again
    assert_scored_once(sub)


def test_a_starting_worker_warms_the_benchmark_cache_for_the_first_submission(bench, owner, start_worker) -> None:
    earlier = create(bench, owner)  # submitted to before the worker starts: a benchmark in use
    Submission.objects.filter(pk=earlier.pk).update(status="failed")  # its queued message becomes a no-op
    worker = start_worker(SCORING_WARMUP="1")
    wait_for(lambda: f"benchmark cache warmed: {bench.slug}" in worker.log.read_text(), worker, "the warm-up")
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "done", worker, "done")
    assert_scored_once(sub)
    log = worker.log.read_text()
    # Prepared once, by the warm-up; the submission found it ready.
    assert len(re.findall(rf"benchmark {bench.slug}: prepared \d+ samples in", log)) == 1, worker.output()
    assert log.index(f"benchmark {bench.slug}: prepared samples from the cache") > log.index("benchmark cache warmed")
