"""Publishing the pipeline's messages: which task a stage needs, on which queue.

Tasks are looked up by *name* in the Celery app's registry, never imported: ``tasks`` imports
``pipeline`` and ``services``, and both may enqueue, so importing ``tasks`` here would close a
circle (tests/test_import_graph.py keeps it open). Eager mode (unit tests, ``--sync``) still
works: the registry returns the same task objects, and ``apply_async`` runs them in place.
"""

from __future__ import annotations

import logging

from celery import current_app
from django.conf import settings

from config.celery import task_by_name

from django.db import DatabaseError
from django.db.models import QuerySet

from annotation.models import PROPOSAL_RUN_ACTIVE, ProposalRun
from evaluation.models import ACTIVE_STATUSES, RUN_ACTIVE_STATUSES, HostedRun, Submission, SubmissionStatus

log = logging.getLogger(__name__)

TASKS = "evaluation.tasks."
STAGE_TASKS = {
    SubmissionStatus.QUEUED: TASKS + "submission_validate",
    SubmissionStatus.VALIDATING: TASKS + "submission_validate",
    SubmissionStatus.SCORING: TASKS + "submission_score",
    SubmissionStatus.JUDGING: TASKS + "submission_score",
}
# A short publish retry: an upload must not hang on a dead broker; the sweeper sends it at its next run.
_PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}


def _record_unsent(rows: QuerySet, what: str) -> None:
    """Mark ``rows`` (one submission's or run's, while active) as not sent (``enqueue_failed``): the sweeper's
    next run, the first after the broker is back, sends it."""
    try:
        rows.update(enqueue_failed=True)
    except DatabaseError:  # the database is away too: it will look stuck, and be sent then
        log.warning("%s: could not record the failed publish", what, exc_info=True)


def stage_task(status: str):  # noqa: ANN201 - a celery Task
    return task_by_name(STAGE_TASKS[status])


def submission_enqueue(*, submission_id: int, status: str, countdown: float | None = None,
                       **kwargs: object) -> bool:
    """Publish the task for the stage ``status`` is in; False if the broker is down, and then the row
    says so (``enqueue_failed``): the sweeper's next run, the first after the broker is back, sends it."""
    task = stage_task(status)
    try:
        task.apply_async(args=[submission_id], kwargs=kwargs or None, queue=settings.SUBMISSIONS_QUEUE,
                         countdown=countdown, retry=True, retry_policy=_PUBLISH_RETRY)
    except Exception as exc:  # kombu raises OperationalError, redis its own; all mean "not sent"
        log.warning("submission %s: could not publish %s (%s); the sweeper will send it", submission_id,
                    task.name, exc)
        _record_unsent(Submission.objects.filter(pk=submission_id, status__in=ACTIVE_STATUSES),
                       f"submission {submission_id}")
        return False
    return True


def results_changed_run(*, benchmark_id: int) -> None:
    """Run every derived kind's refresh here and now (settings.RESULTS_CHANGED_TASKS, by name), as a worker
    would: for commands (load_demo, the benches), never for a page."""
    for name in settings.RESULTS_CHANGED_TASKS:
        task_by_name(name).run(benchmark_id)


def results_changed_publish(*, benchmark_id: int) -> None:
    """Tell the apps that derive figures from a benchmark's public results (settings.RESULTS_CHANGED_TASKS,
    by name: evaluation/derived.py) that they changed. Called on commit of the bump. A broker that is down
    leaves the pages on their last build, marked as updating; the next change, or the sweeper's check of
    builds behind their version (``derived_sweep``), sends them again. Sent with a countdown
    (``settings.RESULTS_CHANGED_DELAY_SECONDS``): the changes of a burst are built by the first message due,
    which reads the latest version; the others find the build current."""
    for name in settings.RESULTS_CHANGED_TASKS:
        try:
            task_by_name(name).apply_async(args=[benchmark_id], queue=settings.SUBMISSIONS_QUEUE, retry=True,
                                           retry_policy=_PUBLISH_RETRY,
                                           countdown=settings.RESULTS_CHANGED_DELAY_SECONDS or None)
        except Exception as exc:  # noqa: BLE001 - as in submission_enqueue: "not sent", logged
            log.warning("benchmark %s: could not publish %s (%s); its readers will catch up", benchmark_id, name, exc)


def queue_depth(name: str) -> int | None:
    """Messages waiting on a queue (not those a worker holds), or None if the broker cannot say."""
    try:
        with current_app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            channel = conn.default_channel
            if conn.transport.driver_type == "redis":  # a queue is a list; an empty one has no key
                return int(channel.client.llen(name))
            return int(channel.queue_declare(queue=name, passive=True).message_count)
    except Exception:  # noqa: BLE001 - no such queue yet, a broker that is down, a transport without counts
        log.info("queue depth of %s unknown", name, exc_info=True)
        return None


RUN_TASK = TASKS + "run_execute"
PROPOSAL_RUN_TASK = TASKS + "proposal_run_execute"


def run_enqueue(*, run_id: int) -> bool:
    """Publish a hosted run on RUNS_QUEUE (its own worker: a long run never holds up scoring); False if
    the broker is down, and then the run says so (``enqueue_failed``): the sweeper's next run, the first
    after the broker is back, sends it, as for a submission."""
    task = task_by_name(RUN_TASK)
    try:
        task.apply_async(args=[run_id], queue=settings.RUNS_QUEUE, retry=True, retry_policy=_PUBLISH_RETRY)
    except Exception as exc:  # noqa: BLE001 - as in submission_enqueue: "not sent", logged
        log.warning("run %s: could not publish %s (%s); the sweeper will send it", run_id, task.name, exc)
        _record_unsent(HostedRun.objects.filter(pk=run_id, status__in=RUN_ACTIVE_STATUSES), f"run {run_id}")
        return False
    return True


def proposal_run_enqueue(*, run_id: int) -> bool:
    """Publish a proposal run (evaluation/proposal_runs.py) on RUNS_QUEUE, as a hosted run; False if the broker is
    down, and then the run says so (``enqueue_failed``) for the sweeper."""
    task = task_by_name(PROPOSAL_RUN_TASK)
    try:
        task.apply_async(args=[run_id], queue=settings.RUNS_QUEUE, retry=True, retry_policy=_PUBLISH_RETRY)
    except Exception as exc:  # noqa: BLE001 - as run_enqueue: "not sent", logged
        log.warning("proposal run %s: could not publish %s (%s); the sweeper will send it", run_id, task.name, exc)
        _record_unsent(ProposalRun.objects.filter(pk=run_id, status__in=PROPOSAL_RUN_ACTIVE), f"proposal run {run_id}")
        return False
    return True
