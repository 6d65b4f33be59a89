"""Celery tasks of the pipeline. Each takes an id, and the stage it calls returns early unless the
submission's status and claim allow the work, so a task run twice (late acks, re-queue on worker
loss, the sweeper, a duplicate delivery) is harmless.

Imports run one way: tasks -> pipeline -> services (-> queueing, which finds tasks by name).
The tasks send the next stage and the retries; a stage returns instead (one that ends a
submission sends, through services and on commit, the results-changed tasks and the owner's email).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import close_old_connections
from django.db.utils import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerError

from evaluation import agentx_figures, benchmark_cache, hosted_runs, pipeline, proposal_runs, services
from evaluation.guessability import guessability_build
from evaluation.judges import JudgeError
from evaluation.models import SubmissionStatus
from evaluation.queueing import submission_enqueue
from evaluation.worker_beats import Beater

log = logging.getLogger(__name__)


def _connection_errors() -> tuple[type[BaseException], ...]:
    """A lost database or broker connection: worth a retry, never the submission's fault. psycopg's
    own errors are listed too, for the COPY that goes to the driver directly."""
    errors: list[type[BaseException]] = [OperationalError, InterfaceError, BrokerError, ConnectionError]
    try:
        import psycopg
    except ImportError:  # SQLite-only installs
        pass
    else:
        errors += [psycopg.OperationalError, psycopg.InterfaceError]
    return tuple(errors)


CONNECTION_ERRORS = _connection_errors()


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def submission_validate(submission_id: int, claim: str = "", retries: int = 0) -> None:
    token = claim or pipeline.new_claim_token()
    done = _guarded(submission_id, "validating", token, retries, submission_validate,
                    lambda: pipeline.submission_validate(submission_id=submission_id, token=token))
    if done:  # validated, now ``scoring``: send the scoring stage (if not sent, the sweeper sends it)
        submission_enqueue(submission_id=submission_id, status=SubmissionStatus.SCORING)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def submission_score(submission_id: int, judge_failures: int = 0, claim: str = "", retries: int = 0) -> None:
    token = claim or pipeline.new_claim_token()
    try:
        _guarded(submission_id, "scoring", token, retries, submission_score,
                 lambda: pipeline.submission_score(submission_id=submission_id, token=token),
                 judge_failures=judge_failures)
    except JudgeError as exc:
        # Retried by publishing a fresh message with a countdown rather than Task.retry, so the
        # count travels with the message and eager mode (tests, --sync) behaves like a worker.
        if judge_failures < settings.SUBMISSION_JUDGE_RETRIES:
            countdown = settings.SUBMISSION_JUDGE_RETRY_SECONDS * 2**judge_failures
            log.warning("submission %s: judge failed (%s); retry %s in %ss", submission_id, exc,
                        judge_failures + 1, countdown)
            # The retry keeps this delivery's claim; if the publish fails, the sweeper sends it.
            pipeline.submission_hold(submission_id=submission_id, token=token, seconds=countdown)
            submission_score.apply_async(
                args=[submission_id], kwargs={"judge_failures": judge_failures + 1, "claim": token},
                countdown=countdown, queue=settings.SUBMISSIONS_QUEUE)
            return
        services.submission_fail(
            submission_id=submission_id,
            reason=f"The judge kept failing ({judge_failures + 1} {'tries' if judge_failures else 'try'} with backoff): {exc}. "
                   f"{exc.judged_share()} Nothing was scored; an administrator can retry with "
                   f"`manage.py score {submission_id}` once the judge is back.",
        )


@shared_task(ignore_result=True)
def benchmark_cache_warm() -> None:
    """Prepare the recently used benchmarks in this pool process (sent by a starting worker)."""
    benchmark_cache.warm()


@worker_ready.connect
def _warm_benchmark_cache(sender: object = None, **_: object) -> None:
    """A starting worker asks each of its pool processes to prepare the recently used benchmarks
    (evaluation/benchmark_cache.py): one task per process on the pipeline's queue; with fair
    scheduling a busy process leaves the next one to the other. A failed send is logged only.
    Connected here, where the worker imports its tasks before it is ready (config.celery imports no app)."""
    if not settings.SCORING_WARMUP:
        return
    processes = getattr(getattr(sender, "controller", None), "concurrency", None) or 1
    try:
        for _ in range(processes):
            benchmark_cache_warm.apply_async(queue=settings.SUBMISSIONS_QUEUE)
    except Exception:  # the broker is down: the first submissions prepare their benchmarks themselves
        log.warning("could not send the benchmark cache warm-up", exc_info=True)


_beaters: list[Beater] = []


@worker_ready.connect
def _start_worker_beat(sender: object = None, **_: object) -> None:
    """A ready worker records its heartbeat for each queue it consumes, until it stops
    (evaluation/worker_beats.py): the pages say when no worker serves the pipeline's queue."""
    consumer = getattr(sender, "task_consumer", None)  # sender: the worker's Consumer
    queues = sorted({q.name for q in getattr(consumer, "queues", ())}) or [settings.SUBMISSIONS_QUEUE]
    beater = Beater(str(getattr(sender, "hostname", "") or "worker"), queues)
    beater.start()
    _beaters.append(beater)


@worker_shutdown.connect
def _stop_worker_beat(**_: object) -> None:
    while _beaters:
        _beaters.pop().stop()


@shared_task(name="evaluation.tasks.benchmark_rescore", ignore_result=True)
def benchmark_rescore(benchmark_id: int) -> None:
    """A benchmark's scoring profile changed (settings.SCORING_CHANGED_TASKS): re-score its submissions.
    Safe twice: a submission already back in the pipeline is left alone."""
    sent = services.benchmark_rescore(benchmark_id=benchmark_id)
    log.info("benchmark %s: scoring profile changed; %s submissions re-scored", benchmark_id, sent)


@shared_task(name="evaluation.tasks.guessability_refresh", ignore_result=True, acks_late=True)
def guessability_refresh(benchmark_id: int) -> None:
    """The derived kind "guessability" (settings.RESULTS_CHANGED_TASKS): flags and the tab's tables."""
    guessability_build(benchmark_id=benchmark_id)


@shared_task(name="evaluation.tasks.agentx_refresh", ignore_result=True, acks_late=True)
def agentx_refresh(benchmark_id: int) -> None:
    """The derived kind "agentx" (settings.RESULTS_CHANGED_TASKS): Agent-X's figures of the board's rows."""
    agentx_figures.agentx_refresh(benchmark_id=benchmark_id)


@shared_task(ignore_result=True)
def submissions_sweep() -> None:
    services.submissions_sweep()


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             time_limit=settings.RUNS_TASK_TIME_LIMIT, soft_time_limit=None)
def run_execute(run_id: int) -> None:
    """A hosted run (evaluation/hosted_runs.py), on RUNS_QUEUE. A second delivery while the first is
    alive does nothing; one after its worker died takes the run over and resumes from the cache. Its time
    limit is its own (RUNS_TASK_TIME_LIMIT, not the pipeline's CELERY_TASK_TIME_LIMIT): a long run is
    bounded by its patience and its budget, not cut while it makes progress."""
    try:
        hosted_runs.run_execute(run_id=run_id)
    except CONNECTION_ERRORS:
        close_old_connections()
        log.warning("run %s: lost its database connection; the sweeper will send it again", run_id, exc_info=True)
    except Exception as exc:  # noqa: BLE001 - a run never stays unfinished: it fails with the reason
        log.exception("run %s crashed", run_id)
        hosted_runs.run_fail(run_id=run_id, reason=f"An internal error stopped the run ({type(exc).__name__}: "
                                                   f"{exc}). The answers so far are kept in the cache.")


@shared_task(ignore_result=True)
def runs_sweep() -> None:
    hosted_runs.runs_sweep()
    proposal_runs.proposal_runs_sweep()


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             time_limit=settings.RUNS_TASK_TIME_LIMIT, soft_time_limit=None)
def proposal_run_execute(run_id: int) -> None:
    """A proposal run (evaluation/proposal_runs.py), on RUNS_QUEUE, delivered and resumed as a hosted run."""
    try:
        proposal_runs.proposal_run_execute(run_id=run_id)
    except CONNECTION_ERRORS:
        close_old_connections()
        log.warning("proposal run %s: lost its database connection; the sweeper will send it again", run_id,
                    exc_info=True)
    except Exception as exc:  # noqa: BLE001 - a run never stays unfinished: it fails with the reason
        log.exception("proposal run %s crashed", run_id)
        proposal_runs.proposal_run_fail(run_id=run_id, reason=f"An internal error stopped the run "
                                                              f"({type(exc).__name__}: {exc}).")


def _guarded(submission_id: int, stage: str, token: str, retries: int, task, work: Callable[[], object],
             **kwargs: object) -> object:  # noqa: ANN001
    """Run a stage. A lost connection sends the same delivery again after a backoff (it keeps its
    claim and its attempt); any other unexpected error fails the submission with a reason."""
    try:
        return work()
    except JudgeError:
        raise
    except CONNECTION_ERRORS as exc:
        close_old_connections()  # the broken one goes; the retry opens a fresh one
        if retries >= settings.SUBMISSION_TRANSIENT_RETRIES:
            log.error("submission %s: %s lost its connection %s times (%s); the sweeper will send it again",
                      submission_id, stage, retries + 1, exc)
            return None
        countdown = settings.SUBMISSION_TRANSIENT_RETRY_SECONDS * 2**retries
        log.warning("submission %s: %s lost its connection (%s: %s); retry %s in %ss", submission_id, stage,
                    type(exc).__name__, exc, retries + 1, countdown)
        try:
            task.apply_async(args=[submission_id], kwargs={**kwargs, "claim": token, "retries": retries + 1},
                             countdown=countdown, queue=settings.SUBMISSIONS_QUEUE)
        except Exception:  # noqa: BLE001 - the broker too: the claim goes stale, the sweeper sends it
            log.warning("submission %s: could not send the retry; the sweeper will", submission_id, exc_info=True)
        return None
    except Exception as exc:
        log.exception("submission %s: %s crashed", submission_id, stage)
        services.submission_fail(
            submission_id=submission_id,
            reason=f"An internal error stopped {stage} ({type(exc).__name__}: {exc}). Your file is kept; "
                   "the administrators can see the error and re-score it.",
        )
        return None
