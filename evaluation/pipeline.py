"""The pipeline's stages: validate, then score (rules, judge, aggregates, store, notify).

Each stage first *claims* the submission with a conditional UPDATE on its status, so a task
delivered twice, or re-sent by the sweeper, does the work at most once at a time, and a stage
that already finished is a no-op. Scoring writes all of its rows, the aggregates and ``done``
in one transaction (delete, then insert), so a crash at any point leaves either the old state
or the new one, never a half, and a re-run never duplicates a row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, JSONField
from django.utils import timezone

from evaluation import selectors
from evaluation.judges import Judge, OfflineJudge
from evaluation.metrics import PredictionFormatError, PreparedBenchmark, ScoringError, score_submission
from evaluation.models import PredictionResult, Submission, SubmissionStatus
from evaluation.reports import record_fields, report_to_json, scorer_version
from evaluation.services import submission_enqueue, submission_fail, submission_heartbeat, submission_notify
from evaluation.validation import iter_prediction_objects, validate_predictions

log = logging.getLogger(__name__)
S = SubmissionStatus
_PROGRESS_SECONDS = 0.5
JUDGE_CHUNK = 256  # questions per judge call: bounded memory per batch, and a heartbeat between


def _claim(submission_id: int, allowed: Sequence[str], to: str) -> bool:
    now = timezone.now()
    return bool(
        Submission.objects.filter(pk=submission_id, status__in=list(allowed)).update(
            status=to, heartbeat_at=now, progress_done=0, progress_total=0
        )
    )


class _Progress:
    """Throttled progress reports, which double as the heartbeat the sweeper watches."""

    def __init__(self, submission_id: int) -> None:
        self.pk = submission_id
        self.last = 0.0

    def __call__(self, done: int, total: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            submission_heartbeat(submission_id=self.pk, progress_done=done, progress_total=max(total, done))


# ------------------------------------------------------------------------------------ validate


def submission_validate(*, submission_id: int, enqueue_next: bool = True) -> None:
    if not _claim(submission_id, (S.QUEUED, S.VALIDATING), S.VALIDATING):
        return
    sub = Submission.objects.select_related("benchmark").get(pk=submission_id)
    Submission.objects.filter(pk=submission_id, started_at__isnull=True).update(started_at=timezone.now())
    uids = selectors.benchmark_sample_uids(benchmark=sub.benchmark)
    progress = _Progress(submission_id)
    size = max(sub.file_size, 1)
    try:
        with sub.file.open("rb") as stream:
            report = validate_predictions(
                stream, sample_ids=uids, benchmark=sub.benchmark.slug,
                max_line_bytes=settings.SUBMISSION_MAX_LINE_BYTES, max_errors=settings.SUBMISSION_MAX_ERRORS,
                progress=lambda lines, read: progress(min(read, size), size),
            )
    except OSError as exc:
        submission_fail(submission_id=submission_id,
                        reason=f"The uploaded file could not be read ({exc}); please upload it again.")
        return
    errors = [e.as_dict() for e in report.errors]
    if not report.ok:
        more = " (only the first ones are listed)" if report.truncated else ""
        submission_fail(
            submission_id=submission_id, errors=errors, truncated=report.truncated,
            reason=f"The file has {len(errors)} error{'s' if len(errors) != 1 else ''}{more}; nothing was "
                   "scored. Fix the lines listed and upload the file again.",
        )
        return
    with transaction.atomic():
        moved = Submission.objects.filter(pk=submission_id, status=S.VALIDATING).update(
            status=S.SCORING, attempts=0, heartbeat_at=timezone.now(), errors=[], errors_truncated=False,
            n_lines=report.n_lines, n_predictions=report.n_predictions, coverage=report.coverage,
            progress_done=0, progress_total=report.n_predictions,
        )
        if moved and enqueue_next:
            transaction.on_commit(lambda: submission_enqueue(submission_id=submission_id, status=S.SCORING))


# ------------------------------------------------------------------------------------ score


class ProgressJudge:
    """Wraps the pipeline's judge: moves the submission to ``judging`` and reports progress per chunk."""

    def __init__(self, inner: Judge, submission_id: int) -> None:
        self.inner = inner
        self.name = inner.name  # the records' decided_by names the real judge
        self.pk = submission_id
        self.done = 0
        self.total = 0
        self.progress = _Progress(submission_id)
        self.started = False

    def _run(self, method: str, questions: Sequence[Any]) -> list:
        if not self.started:
            self.started = True
            Submission.objects.filter(pk=self.pk, status=S.SCORING).update(
                status=S.JUDGING, heartbeat_at=timezone.now(), progress_done=0, progress_total=0
            )
        self.total += len(questions)
        out: list = []
        call = getattr(self.inner, method)
        for start in range(0, len(questions), JUDGE_CHUNK):
            out.extend(call(questions[start:start + JUDGE_CHUNK]))
            self.done += min(JUDGE_CHUNK, len(questions) - start)
            self.progress(self.done, self.total)
        return out

    def answer_equivalence(self, questions: Sequence[Any]) -> list:
        return self._run("answer_equivalence", questions)

    def key_step_matching(self, questions: Sequence[Any]) -> list:
        return self._run("key_step_matching", questions)

    def tool_call_validity(self, questions: Sequence[Any]) -> list:
        return self._run("tool_call_validity", questions)

    def step_scores(self, questions: Sequence[Any]) -> list:
        return self._run("step_scores", questions)


def pipeline_judge() -> Judge:
    """The OpenAI-compatible judge (with the database verdict cache) when configured, else offline."""
    if settings.JUDGE_OPENAI_BASE_URL:
        from evaluation.judge_cache import DatabaseVerdictCache
        from evaluation.judges.openai_judge import openai_judge_from_settings

        return openai_judge_from_settings(settings, cache=DatabaseVerdictCache())
    return OfflineJudge()


def tool_hooks() -> tuple[Callable[[str], str | None] | None, Callable[[str, dict], list[str]] | None]:
    """The registry's name resolver and argument validator (annotation.imagetools)."""
    try:
        from annotation.imagetools import resolve_tool_name, validate_args
    except ImportError:  # the registry is optional for scoring: names are then folded, args unchecked
        log.warning("annotation.imagetools is not importable; tool arguments are not validated")
        return None, None
    return resolve_tool_name, validate_args


def _counted(objs: Iterable[Any], progress: _Progress, total: int) -> Iterator[Any]:
    n = 0
    for n, obj in enumerate(objs, 1):
        if n % 2000 == 0:
            progress(n, total)
        yield obj
    progress(n, total, force=True)


_INSERT_BATCH = 5000


def _insert_results(submission_id: int, records: Iterable[Any], sample_pks: dict[str, int]) -> None:
    """Insert one row per record without model instances (a 91k-row file would otherwise spend
    most of its time and memory in Model.__init__ and the ORM's SQL compiler): COPY on
    PostgreSQL, executemany elsewhere."""
    fields = [f for f in PredictionResult._meta.concrete_fields if not f.primary_key]
    is_json = [isinstance(f, JSONField) for f in fields]
    names = [f.attname for f in fields]
    table = connection.ops.quote_name(PredictionResult._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)

    def rows() -> Iterator[tuple]:
        for rec in records:
            values = record_fields(rec)
            values["submission_id"] = submission_id
            values["sample_id"] = sample_pks[rec.sample_id]
            yield tuple(
                (None if values[n] is None else orjson.dumps(values[n]).decode()) if j else values[n]
                for n, j in zip(names, is_json)
            )

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows():
                    copy.write_row(row)
            return
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"
        batch: list[tuple] = []
        for row in rows():
            batch.append(row)
            if len(batch) >= _INSERT_BATCH:
                cursor.executemany(sql, batch)
                batch.clear()
        if batch:
            cursor.executemany(sql, batch)


def submission_score(*, submission_id: int) -> None:
    """Score a validated submission. A JudgeError propagates (the task retries it with backoff)."""
    if not _claim(submission_id, (S.SCORING, S.JUDGING), S.SCORING):
        return
    sub = Submission.objects.select_related("benchmark").get(pk=submission_id)
    benchmark = sub.benchmark
    samples, sample_pks = selectors.scoring_samples(benchmark=benchmark)
    resolve, validate = tool_hooks()
    prepared = PreparedBenchmark(samples, resolve)
    del samples  # the digested form is all the scorer needs; free the raw dicts before scoring
    tools = frozenset((resolve(t) if resolve else None) or t for t in benchmark.tools) or None
    judge = ProgressJudge(pipeline_judge(), submission_id)
    progress = _Progress(submission_id)
    try:
        with sub.file.open("rb") as stream:
            report = score_submission(
                prepared,
                _counted(iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES), progress,
                         sub.n_predictions),
                judge=judge, tool_validator=validate, benchmark_tools=tools, prices=sub.prices,
                resolve_tool=resolve,
            )
    except (ScoringError, PredictionFormatError, ValueError) as exc:
        # Validation passed, so the benchmark changed under the file (a sample removed) or a bug.
        submission_fail(submission_id=submission_id,
                        reason=f"The file could not be scored: {exc}. Upload it again; if this repeats, "
                               "tell the benchmark's maintainers.")
        return
    results = report_to_json(report)
    with transaction.atomic():
        locked = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if locked is None or locked.status not in (S.SCORING, S.JUDGING):
            return  # another run finished it (or it was failed) meanwhile
        PredictionResult.objects.filter(submission_id=submission_id).delete()
        _insert_results(submission_id, report.records, sample_pks)
        now = timezone.now()
        Submission.objects.filter(pk=submission_id).update(
            status=S.DONE, results=results, scorer_version=scorer_version(), judge_name=report.judge,
            finished_at=now, scored_at=now, heartbeat_at=now, attempts=0, failure_reason="",
            progress_done=F("n_predictions"), progress_total=F("n_predictions"),
        )
        transaction.on_commit(lambda: submission_notify(submission_id=submission_id))
