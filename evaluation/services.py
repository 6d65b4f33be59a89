"""Writes of the evaluation app: creating, publishing and deleting submissions, and the sweeper.

The pipeline's stages (validate, score) live in ``evaluation.pipeline``; tasks call them. This
module imports neither (the direction is tasks -> pipeline -> services); it publishes messages
through ``evaluation.queueing``, which finds the tasks by name.
Errors a person can act on are exceptions carrying a message; views decide the HTTP status.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.contrib.auth import get_user_model
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import Benchmark
from annotation.selectors import benchmark_scorable
from evaluation import selectors
from evaluation.derived import derived_behind
from evaluation.models import (ACTIVE_STATUSES, FINAL_STATUSES, Provenance, ResultsChange, Submission, SubmissionStatus,
                               SweepRun)
from evaluation.queueing import results_changed_publish, submission_enqueue

log = logging.getLogger(__name__)


class SubmissionRejected(Exception):
    """An upload refused before a submission exists; ``code`` tells the view which kind."""

    code = "invalid"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def results_only_message(benchmark: Benchmark) -> str:
    """Why a benchmark entry that holds only a paper's reported results (no samples) takes no predictions."""
    return (f"{benchmark.name} holds only the results its authors reported: it has no samples, so it cannot "
            "score predictions. Choose a benchmark with samples.")


class FileTooLarge(SubmissionRejected):
    code = "too_large"


class QuotaExceeded(SubmissionRejected):
    code = "quota"


class TooManyActive(SubmissionRejected):
    code = "busy"


class StorageUnavailable(SubmissionRejected):
    """The file store or the database failed while storing an upload; nothing was kept. Retry later."""

    code = "unavailable"


class PublishRefused(Exception):
    """Only a scored (``done``) submission may be made public."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


METADATA_FIELDS = (
    "organisation", "model_url", "paper_url", "weights", "parameters_billions", "license", "release_date",
    "price_input_per_mtok", "price_output_per_mtok", "description",
)
# What the owner may change after the upload without a re-score. Not the prices: the scorer turned them
# into the stored costs, so changing them means scoring again (a new submission).
EDITABLE_METADATA = (
    "model_name", "organisation", "model_url", "paper_url", "weights", "parameters_billions", "license",
    "release_date", "description",
)


def _human(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n / 2**10:.0f} KB" if n >= 2**10 else f"{n} bytes"


def size_limit_message(size: int | str) -> str:
    """``size`` may be a placeholder string (the upload page's script fills in the file's size)."""
    limit = settings.SUBMISSION_MAX_FILE_BYTES
    size = f"{size:,}" if isinstance(size, int) else size
    return (f"The file is too large: {size} bytes, over the limit of {limit:,} bytes ({_human(limit)}) "
            "for a prediction file. Split it by mode into several submissions, or drop the optional "
            "'response' field.")


def submission_limits_check(*, owner: Any, benchmark: Benchmark, size: int | None) -> None:
    """Raise the first limit the upload breaks. Staff are exempt from quota and concurrency caps."""
    limit = settings.SUBMISSION_MAX_FILE_BYTES
    if size is not None and size > limit:
        raise FileTooLarge(size_limit_message(size))
    if owner.is_staff:
        return
    per_day = settings.SUBMISSIONS_PER_DAY
    if selectors.submissions_counted_today(user=owner, benchmark=benchmark) >= per_day:
        raise QuotaExceeded(
            f"You have made {per_day} submissions to '{benchmark.slug}' in the last 24 hours, the daily "
            "limit. Failed submissions do not count; try again later."
        )
    cap = settings.SUBMISSIONS_MAX_ACTIVE_PER_USER
    if selectors.active_submissions_count(user=owner) >= cap:
        raise TooManyActive(
            f"You already have {cap} submissions being scored; wait until one of them is done or failed."
        )


def submission_create(
    *,
    benchmark: Benchmark,
    owner: Any,
    file: File,
    model_name: str,
    is_public: bool = False,
    is_demo: bool = False,
    enforce_limits: bool = True,
    enqueue: bool = True,
    file_format: str = "jsonl",
    run_record: dict | None = None,
    full_pipeline: bool = False,
    **metadata: Any,
) -> Submission:
    """Store the upload and its metadata as a ``queued`` submission, then send it to the queue.

    A file in an author's format (``file_format``, evaluation.converters) is stored as it came in
    ``source_file``; the validation stage converts it into ``file`` (in the worker: a large table
    must not hold the web request).

    If the broker cannot be reached the submission stays ``queued`` and the sweeper sends it
    later; the upload itself never fails for that reason.

    ``run_record`` is given by a hosted run only (evaluation/hosted_runs.py): the submission's
    provenance is then "run", never for an upload.
    """
    unknown = set(metadata) - set(METADATA_FIELDS)
    if unknown:
        raise TypeError(f"unknown metadata: {sorted(unknown)}")
    if not benchmark_scorable(benchmark):
        raise SubmissionRejected(results_only_message(benchmark))
    if enforce_limits:
        submission_limits_check(owner=owner, benchmark=benchmark, size=file.size)
    submission = Submission(
        benchmark=benchmark,
        owner=owner,
        model_name=(model_name or "").strip(),
        is_public=is_public,
        is_demo=is_demo,
        original_name=Path(file.name or "predictions.jsonl").name[:255],
        file_size=file.size or 0,
        format=file_format,
        provenance=Provenance.RUN if run_record is not None else Provenance.FILE,
        run_record=run_record,
        full_pipeline=full_pipeline,
        **{k: v for k, v in metadata.items() if v is not None},
    )
    submission.full_clean(exclude=["file", "source_file"])
    # Our format is stored as ``file``; an author's as it came, in ``source_file``, until converted.
    stored = submission.file if file_format == "jsonl" else submission.source_file
    suffix = ".jsonl" if file_format == "jsonl" else f"-{file_format}{Path(submission.original_name).suffix[:10]}"
    try:
        stored.save(f"{benchmark.slug}{suffix}", file, save=False)
    except OSError as exc:
        log.exception("submission upload by %s: the file could not be stored", owner)
        raise StorageUnavailable(unavailable_message("the file store", exc)) from exc
    try:
        with transaction.atomic():
            if enforce_limits and not owner.is_staff:
                # The limits again, now under a lock on the owner's row: the check above runs in
                # parallel for eight simultaneous uploads, and each would see room for itself.
                owner_lock(owner)
                submission_limits_check(owner=owner, benchmark=benchmark, size=file.size)
            submission.save()
            if enqueue:
                pk = submission.pk
                transaction.on_commit(lambda: submission_enqueue(submission_id=pk, status=SubmissionStatus.QUEUED))
    except BaseException as exc:
        _delete_quietly(stored)  # no file without its row
        if isinstance(exc, (OperationalError, InterfaceError)):
            log.exception("submission upload by %s: the database refused the insert", owner)
            raise StorageUnavailable(unavailable_message("the database")) from exc
        raise
    return submission


def owner_lock(owner: Any) -> None:
    """Hold the owner's uploads back until this transaction ends. PostgreSQL: a lock on the user's row.
    SQLite has no row locks (Django drops FOR UPDATE there): a write that changes nothing takes its
    single writer lock first, so the counts read next are current, and a racing upload waits for them."""
    users = get_user_model().objects.filter(pk=owner.pk)
    if connection.features.has_select_for_update:
        users.select_for_update().exists()
    else:
        users.update(last_login=F("last_login"))


def disk_full(exc: BaseException | None) -> bool:
    """Whether an error is a full disk (or a full quota): the platform's problem, never the file's."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def unavailable_message(what: str, exc: BaseException | None = None) -> str:
    """Why an upload was not kept; names a full disk as the cause when it was one."""
    if disk_full(exc):
        return (f"The upload could not be stored: the disk of {what} is full. Nothing was kept; this is not a "
                "problem with your file. Please upload it again later.")
    return (f"The upload could not be stored: {what} is not available at the moment. Nothing was kept; "
            "please upload the file again in a few minutes.")


def file_failure_reason(exc: OSError, doing: str) -> str:
    """A submission's failure reason for an ``OSError`` while ``doing`` (e.g. "converted"): a full disk is
    said to be one (not "could not be read", which sends the owner looking for a fault in the file)."""
    if disk_full(exc):
        return (f"The file could not be {doing}: the server's disk is full. This is not a problem with your "
                "file; nothing was scored. Please upload it again later.")
    return f"The uploaded file could not be read ({exc}); please upload it again."


def _delete_quietly(stored: Any) -> None:
    try:
        stored.delete(save=False)
    except OSError:  # the store is down too: an orphan file, found by its missing row
        log.exception("could not delete the orphan upload %s", stored.name)


def benchmark_results_bump(*, benchmark_id: int, submission_ids: Iterable[int] | None = None) -> None:
    """Move the benchmark's ``results_version``: its public results changed (a submission finished, was
    published, unpublished, deleted or re-scored; reported rows loaded; a row renamed). Call it inside the
    transaction that makes the change, so the two commit together; on commit the readers that derive
    figures from the results (the leaderboard's rows, ranks and cached pages) are told.

    ``submission_ids``: the submissions changed (``()``: none, as for reported rows); None: any may have (a bulk
    write), and the board's next refresh compares them all. Recorded as ``ResultsChange`` rows at the new version,
    so a refresh finds what changed without reading the whole board."""
    with transaction.atomic():
        Benchmark.objects.filter(pk=benchmark_id).update(results_version=F("results_version") + 1)
        version = Benchmark.objects.filter(pk=benchmark_id).values_list("results_version", flat=True).first()
        if version is not None:
            ids = sorted(set(submission_ids)) if submission_ids is not None else None
            ResultsChange.objects.bulk_create(
                [ResultsChange(benchmark_id=benchmark_id, version=version, submission_id=sid) for sid in ids]
                if ids else [ResultsChange(benchmark_id=benchmark_id, version=version, anything=ids is None)])
    transaction.on_commit(lambda: results_changed_publish(benchmark_id=benchmark_id))


def submission_heartbeat(*, submission_id: int, **fields: Any) -> None:
    Submission.objects.filter(pk=submission_id).update(heartbeat_at=timezone.now(), **fields)


def submission_fail(*, submission_id: int, reason: str, errors: list[dict] | None = None,
                    truncated: bool = False) -> bool:
    """Move a non-final submission to ``failed`` with a reason; tell its owner. False if already final."""
    now = timezone.now()
    fields: dict[str, Any] = {"status": SubmissionStatus.FAILED, "failure_reason": reason, "finished_at": now,
                              "heartbeat_at": now}
    if errors is not None:
        fields.update(errors=errors, errors_truncated=truncated)
    with transaction.atomic():
        moved = Submission.objects.filter(pk=submission_id, status__in=ACTIVE_STATUSES).update(**fields)
        if moved:
            transaction.on_commit(lambda: submission_notify(submission_id=submission_id))
    return bool(moved)


def absolute_url(path: str) -> str:
    """A site path as a link that works outside the site (an e-mail): ``settings.SITE_URL`` before it."""
    return f"{settings.SITE_URL}{path}"


def submission_notify(*, submission_id: int) -> None:
    """Email the owner that scoring finished or failed (console backend by default)."""
    from django.core.mail import send_mail

    sub = Submission.objects.select_related("owner", "benchmark").filter(pk=submission_id).first()
    if sub is None or sub.is_demo or not sub.owner.email or not sub.is_final:  # demo data mails no one
        return
    url = absolute_url(sub.get_absolute_url())
    if sub.status == SubmissionStatus.DONE:
        subject = f"Submission #{sub.pk} ({sub.model_name}) on {sub.benchmark.slug} is scored"
        body = f"Your submission #{sub.pk} of {sub.model_name} is scored. Results: {url}\n"
    else:
        subject = f"Submission #{sub.pk} ({sub.model_name}) on {sub.benchmark.slug} failed"
        body = f"Your submission #{sub.pk} of {sub.model_name} failed.\n\n{sub.failure_reason}\n\nDetails: {url}\n"
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [sub.owner.email], fail_silently=True)


def publish_refusal(*, submission: Submission) -> str:
    """Why ``submission`` cannot be published now (empty when it can)."""
    if submission.status == SubmissionStatus.DONE:
        return ""
    if submission.status == SubmissionStatus.FAILED:
        why = "it failed, so it has no results to show; correct the file and submit it again"
    else:
        why = f"it is still {submission.status}; publish it once it is done"
    return f"Submission #{submission.pk} cannot be published: {why}. Only scored submissions go on the leaderboard."


def submission_set_public(*, submission: Submission, public: bool) -> Submission:
    """Publish or unpublish. Publishing is refused (``PublishRefused``) unless the submission is done;
    the status is re-checked in the same UPDATE, so a re-score starting meanwhile cannot slip through."""
    now = timezone.now()
    rows = Submission.objects.filter(pk=submission.pk)
    if public:
        rows = rows.filter(status=SubmissionStatus.DONE)
    with transaction.atomic():
        moved = rows.update(is_public=public, updated_at=now)
        if moved:
            benchmark_results_bump(benchmark_id=submission.benchmark_id, submission_ids=[submission.pk])
    if not moved:
        submission.refresh_from_db()
        raise PublishRefused(publish_refusal(submission=submission))
    submission.is_public, submission.updated_at = public, now
    return submission


def submission_metadata_update(*, submission: Submission, **changes: Any) -> Submission:
    """Change the model's details (``EDITABLE_METADATA``) of an upload of any status; scores are untouched.

    Raises Django's ``ValidationError`` (with a message per field) and changes nothing when a value is
    refused. A done submission's heartbeat moves, so its board entry is rebuilt, and its benchmark's
    ``results_version`` with it, so the leaderboard's cached pages show the change at once (the heartbeat
    only tells the sweeper about active stages).
    """
    unknown = set(changes) - set(EDITABLE_METADATA)
    if unknown:
        raise TypeError(f"not editable: {sorted(unknown)}")
    if "model_name" in changes:
        changes["model_name"] = (changes["model_name"] or "").strip()
    before = {name: getattr(submission, name) for name in changes}
    for name, value in changes.items():
        setattr(submission, name, value)
    try:
        submission.full_clean(exclude=["file", "source_file"])
    except Exception:
        for name, value in before.items():  # the caller's object stays as stored
            setattr(submission, name, value)
        raise
    fields = [*changes, "updated_at"]
    done = submission.status == SubmissionStatus.DONE
    if done:
        submission.heartbeat_at = timezone.now()
        fields.append("heartbeat_at")
    with transaction.atomic():
        submission.save(update_fields=fields)
        if done:
            benchmark_results_bump(benchmark_id=submission.benchmark_id, submission_ids=[submission.pk])
    return submission


def submission_delete(*, submission: Submission) -> Submission:
    """Soft delete: hidden from its owner and the leaderboard; the file and scores stay for audit."""
    submission.deleted_at = timezone.now()
    submission.is_public = False
    with transaction.atomic():
        submission.save(update_fields=["deleted_at", "is_public", "updated_at"])
        benchmark_results_bump(benchmark_id=submission.benchmark_id, submission_ids=[submission.pk])
    return submission


def submission_rescore(*, submission: Submission, enqueue: bool = True) -> bool:
    """Run the whole pipeline again (after a scorer change); old results stay until replaced.

    False when the submission is still in the pipeline (it will pick up the current scorer).
    """
    with transaction.atomic():
        moved = Submission.objects.filter(pk=submission.pk, status__in=FINAL_STATUSES).update(
            status=SubmissionStatus.QUEUED, attempts=0, claim_token="", heartbeat_at=timezone.now(), progress_done=0,
            progress_total=0, failure_reason="", errors=[], errors_truncated=False, finished_at=None, enqueue_failed=False,
        )
        if moved:  # it leaves the board until scored again
            benchmark_results_bump(benchmark_id=submission.benchmark_id, submission_ids=[submission.pk])
        if moved and enqueue:
            pk = submission.pk
            transaction.on_commit(lambda: submission_enqueue(submission_id=pk, status=SubmissionStatus.QUEUED))
    submission.refresh_from_db()
    return bool(moved)


def benchmark_rescore(*, benchmark_id: int) -> int:
    """Re-score every finished submission of a benchmark (its scoring profile changed: metrics.md
    section 13). Returns how many were sent; each records the new profile and scorer version."""
    count = 0
    subs = Submission.objects.filter(benchmark_id=benchmark_id, status=SubmissionStatus.DONE,
                                     deleted_at__isnull=True).order_by("pk")
    for sub in subs.iterator():
        if submission_rescore(submission=sub):
            count += 1
    return count


@dataclass(frozen=True, slots=True)
class SweepSummary:
    resent: list[int]
    failed: list[int]


def submissions_sweep() -> SweepSummary:
    """Send again every submission whose stage has lost its worker; fail those out of tries.

    A claimed stage is lost when its heartbeat (renewed every SUBMISSION_HEARTBEAT_SECONDS while
    the stage runs) is older than SUBMISSION_STUCK_SECONDS: the worker died (SIGKILL, OOM,
    redeploy) or hung past the task time limit. One whose message could not be published
    (``enqueue_failed``: the broker was down at upload, or when its last stage ended) and that
    nobody holds is sent at once: the sweep itself came through the broker, so the broker is back.
    A ``queued`` one nobody claimed is sent again after SUBMISSION_QUEUED_RESEND_SECONDS (a message
    lost inside the broker). Re-sending clears the claim, so the new delivery may take it; the
    attempt is counted when it does.
    """
    now = timezone.now()
    max_attempts = settings.SUBMISSION_MAX_ATTEMPTS
    queued_cutoff = now - timedelta(seconds=settings.SUBMISSION_QUEUED_RESEND_SECONDS)
    resent: list[int] = []
    failed: list[int] = []
    stuck = timedelta(seconds=settings.SUBMISSION_STUCK_SECONDS)
    unsent = Q(enqueue_failed=True, claim_token="")
    for pk in dict.fromkeys([*selectors.unsent_submission_ids(), *selectors.stuck_submission_ids(older_than=stuck)]):
        reason = ""
        with transaction.atomic():
            sub = (
                Submission.objects.select_for_update(skip_locked=True)
                .filter(Q(heartbeat_at__lt=timezone.now() - stuck) | unsent, pk=pk, status__in=ACTIVE_STATUSES)
                .first()
            )
            if sub is None:  # moved on, or another sweeper holds it
                continue
            if (sub.status == SubmissionStatus.QUEUED and not sub.claim_token and not sub.enqueue_failed
                    and sub.heartbeat_at >= queued_cutoff):
                continue  # waiting in the queue, most likely; not yet worth a copy of its message
            if sub.attempts >= max_attempts:
                reason = attempts_exhausted_reason(submission_id=pk, stage=sub.status, attempts=sub.attempts)
            else:
                Submission.objects.filter(pk=pk).update(claim_token="", heartbeat_at=timezone.now(),
                                                        enqueue_failed=False)
                status = sub.status
                transaction.on_commit(lambda pk=pk, status=status: submission_enqueue(submission_id=pk, status=status))
                resent.append(pk)
        if reason and submission_fail(submission_id=pk, reason=reason):
            failed.append(pk)
    SweepRun.objects.update_or_create(pk=1, defaults={"ran_at": now, "resent": len(resent), "failed": len(failed)})
    for benchmark_id in derived_behind():  # a refresh whose message was lost: pages stay "updating" until sent
        results_changed_publish(benchmark_id=benchmark_id)
    if resent or failed:
        log.info("sweeper: re-sent %s, failed %s", resent, failed)
    return SweepSummary(resent=resent, failed=failed)


def attempts_exhausted_reason(*, submission_id: int, stage: str, attempts: int) -> str:
    return (f"The {stage} stage was started {attempts} time{'s' if attempts != 1 else ''} and its worker "
            "stopped each time before it finished (killed: out of memory, a crash, a restart). Your file "
            "is kept. If it is large, split it by mode into several submissions; otherwise tell the "
            f"administrators, who can retry with `manage.py score {submission_id}`.")
