"""Celery tasks of the pipeline. Each takes an id, and the stage it calls returns early unless the
submission's status allows the work, so a task run twice (late acks, re-queue on worker loss,
the sweeper) is harmless.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from evaluation import benchmark_cache, pipeline, services
from evaluation.judges import JudgeError

log = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def submission_validate(submission_id: int) -> None:
    _guarded(submission_id, "validating", lambda: pipeline.submission_validate(submission_id=submission_id))


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def submission_score(submission_id: int, judge_failures: int = 0) -> None:
    try:
        _guarded(submission_id, "scoring", lambda: pipeline.submission_score(submission_id=submission_id))
    except JudgeError as exc:
        # Retried by publishing a fresh message with a countdown rather than Task.retry, so the
        # count travels with the message and eager mode (tests, --sync) behaves like a worker.
        if judge_failures < settings.SUBMISSION_JUDGE_RETRIES:
            countdown = settings.SUBMISSION_JUDGE_RETRY_SECONDS * 2**judge_failures
            log.warning("submission %s: judge failed (%s); retry %s in %ss", submission_id, exc,
                        judge_failures + 1, countdown)
            # Keeps the sweeper off it while the retry waits; if the publish fails, the sweeper sends it.
            services.submission_heartbeat(submission_id=submission_id)
            submission_score.apply_async(args=[submission_id], kwargs={"judge_failures": judge_failures + 1},
                                         countdown=countdown, queue=settings.SUBMISSIONS_QUEUE)
            return
        services.submission_fail(
            submission_id=submission_id,
            reason=f"The judge kept failing ({judge_failures + 1} tries with backoff): {exc}. Nothing was "
                   f"scored; an administrator can retry with `manage.py score {submission_id}` once the "
                   "judge is back.",
        )


@shared_task(ignore_result=True)
def benchmark_cache_warm() -> None:
    """Prepare the recently used benchmarks in this pool process (sent by a starting worker)."""
    benchmark_cache.warm()


@shared_task(ignore_result=True)
def submissions_sweep() -> None:
    services.submissions_sweep()


def _guarded(submission_id: int, stage: str, work) -> None:  # noqa: ANN001
    """Run a stage; an unexpected error fails the submission with a reason instead of looping."""
    try:
        work()
    except JudgeError:
        raise
    except Exception as exc:
        log.exception("submission %s: %s crashed", submission_id, stage)
        services.submission_fail(
            submission_id=submission_id,
            reason=f"An internal error stopped {stage} ({type(exc).__name__}: {exc}). Your file is kept; "
                   "the administrators can see the error and re-score it.",
        )
