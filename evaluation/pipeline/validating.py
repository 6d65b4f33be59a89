"""The validate stage: the file checked line by line; with the offline judge, scored in the same pass."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from evaluation.benchmark_cache import benchmark_tool_set, other_benchmark_of, prepared_benchmarks, tool_hooks
from evaluation.conversion import submission_file_ready
from evaluation.judges import Judge, JudgeError, OfflineJudge
from evaluation.metrics import PredictionFormatError, PreparedBenchmark, ScoringError, score_submission
from evaluation.models import Submission, SubmissionStatus
from evaluation.pipeline import finishing, judging
from evaluation.pipeline.claims import _Beats, _claim, _Lease, _Progress, new_claim_token
from evaluation.pipeline.finishing import _digest_fields, _ResultWriter
from evaluation.pipeline.judging import ProgressJudge, judge_prompts
from evaluation.reports import report_to_json, scorer_version
from evaluation.services import benchmark_results_bump, file_failure_reason, submission_fail, submission_notify
from evaluation.validation import (ValidationReport, iter_validated, tool_call_checker,
                                  validate_predictions)

log = logging.getLogger(__name__)
S = SubmissionStatus


class _Invalid(Exception):
    """The file failed validation while it was being scored: roll the scoring back."""


def submission_validate(*, submission_id: int, token: str = "") -> bool:
    """Validate the file. With the offline judge, score it in the same pass (see
    ``_validate_and_score``): the file is read and decoded once, and the submission goes from
    ``validating`` straight to ``done``. With a remote judge, move it to ``scoring`` and return
    True: the caller sends the scoring stage, which can be retried on its own when the judge fails.
    """
    token = token or new_claim_token()
    if not _claim(submission_id, (S.QUEUED, S.VALIDATING), S.VALIDATING, token):
        return False
    with _Lease(submission_id, token):
        return _validate(submission_id, token)


def _validate(submission_id: int, token: str) -> bool:
    sub = Submission.objects.select_related("benchmark").get(pk=submission_id)
    Submission.objects.filter(pk=submission_id, started_at__isnull=True).update(started_at=timezone.now())
    if not submission_file_ready(submission=sub):  # an author's format converted first (evaluation/conversion.py)
        return False
    prepared, sample_pks, uids = prepared_benchmarks.get(sub.benchmark)  # and ready for scoring
    size = max(sub.file_size, 1)
    judge = None if settings.JUDGE_OPENAI_BASE_URL else judging.pipeline_judge()
    try:
        if type(judge) is OfflineJudge:
            report = _validate_and_score(sub, prepared, sample_pks, uids, judge, token)
            if report is None:
                return False  # scored: done (or another run finished it)
        else:
            progress = _Progress(submission_id)
            resolve, validate = tool_hooks(sub.benchmark)
            with sub.file.open("rb") as stream:
                report = validate_predictions(
                    stream, sample_ids=uids, benchmark=sub.benchmark.slug,
                    max_line_bytes=settings.SUBMISSION_MAX_LINE_BYTES, max_errors=settings.SUBMISSION_MAX_ERRORS,
                    progress=lambda lines, read: progress(min(read, size), size),
                    check_call=tool_call_checker(resolve, validate, benchmark_tool_set(sub.benchmark, resolve)),
                    locate=other_benchmark_of(sub.benchmark),
                )
    except OSError as exc:
        submission_fail(submission_id=submission_id, reason=file_failure_reason(exc, "validated"))
        return False
    errors = [e.as_dict() for e in report.errors]
    if not report.ok:
        more = " (only the first ones are listed)" if report.truncated else ""
        if len(errors) == 1 and errors[0]["line"] is None:  # the file as a whole (another benchmark's): its message
            message = errors[0]["message"]
            reason = f"{message[:1].upper()}{message[1:]} Nothing was scored."
        else:
            reason = (f"The file has {len(errors)} error{'s' if len(errors) != 1 else ''}{more}; nothing was "
                      "scored. Fix the lines listed and upload the file again.")
        submission_fail(submission_id=submission_id, errors=errors, truncated=report.truncated, reason=reason)
        return False
    estimate = _judge_estimate(sub)
    return bool(Submission.objects.filter(pk=submission_id, status=S.VALIDATING, claim_token=token).update(
        judge_estimate=estimate,
        status=S.SCORING, claim_token="", attempts=0, heartbeat_at=timezone.now(), errors=[],
        errors_truncated=False, n_lines=report.n_lines, n_predictions=report.n_predictions,
        coverage=report.coverage, tool_notes=report.tool_notes_json(), progress_done=0,
        progress_total=report.n_predictions,
    ))


def _judge_estimate(sub: Submission) -> dict:
    """What the remote judge will be asked, shown before it is paid; {} if it cannot be made."""
    from evaluation.judge_estimate import judge_estimate

    judge = judging.pipeline_judge()
    try:
        return judge_estimate(submission=sub, judge=judge)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - an estimate never stops a submission; the scoring reports errors
        log.warning("submission %s: no judge estimate", sub.pk, exc_info=True)
        return {}
    finally:
        if hasattr(judge, "close"):
            judge.close()


def _validate_and_score(sub: Submission, prepared: PreparedBenchmark, sample_pks: dict[str, int],
                        uids: list[str], judge: Judge, token: str) -> ValidationReport | None:
    """One pass over the file: each line is validated, and the ``Prediction`` validation made
    of it goes straight to the scorer, whose rows stream into the database (``_ResultWriter``);
    ``done`` is set, with the validation's figures, in the transaction that publishes them.

    Returns None when scored (or when another run had finished it). Returns the validation
    report when the file has errors (the scoring is rolled back at the first one, the rest of
    the file is still checked to list them), or when the scoring could not finish here (a
    judge error; the caller then sends the scoring stage as for a remote judge).
    """
    pk = sub.pk
    size = max(sub.file_size, 1)
    benchmark = sub.benchmark
    resolve, validate = tool_hooks(benchmark)
    tools = benchmark_tool_set(benchmark, resolve)
    report = ValidationReport()
    beats = _Beats(pk)
    try:
        progress = _Progress(pk, beats)
        scoring_judge = ProgressJudge(judge, pk, beats)
        scoring_judge.count_questions = False
        writer = _ResultWriter(pk, sample_pks, token, statuses=(S.VALIDATING,))
        scored: Any = None

        def mark_done() -> None:
            results = report_to_json(scored)
            results.update(report.run_lines.as_json(), judge_prompts=judge_prompts(judge))
            now = timezone.now()
            Submission.objects.filter(pk=pk).update(
                **_digest_fields(pk, results, scored.judge),
                status=S.DONE, claim_token="", results=results, scorer_version=scorer_version(benchmark.scoring),
                judge_name=scored.judge,
                finished_at=now, first_finished_at=Coalesce("first_finished_at", now), scored_at=now,
                heartbeat_at=now, attempts=0, failure_reason="", errors=[], errors_truncated=False, n_lines=report.n_lines,
                n_predictions=report.n_predictions,
                coverage=report.coverage, tool_notes=report.tool_notes_json(), progress_done=report.n_predictions,
                progress_total=report.n_predictions,
            )
            benchmark_results_bump(benchmark_id=benchmark.pk, submission_ids=[pk])
            transaction.on_commit(lambda: submission_notify(submission_id=pk))

        with sub.file.open("rb") as stream:
            lines = iter_validated(
                stream, report, sample_ids=uids, benchmark=benchmark.slug,
                max_line_bytes=settings.SUBMISSION_MAX_LINE_BYTES, max_errors=settings.SUBMISSION_MAX_ERRORS,
                progress=lambda n, read: progress(min(read, size), size),
                check_call=tool_call_checker(resolve, validate, tools),
                locate=other_benchmark_of(benchmark),
            )

            def good() -> Iterator[Any]:
                for pred in lines:
                    if report.errors:
                        raise _Invalid
                    yield pred
                if report.errors:
                    raise _Invalid

            try:
                with writer:
                    scored = score_submission(
                        prepared, good(), judge=scoring_judge, tool_validator=validate, benchmark_tools=tools,
                        prices=sub.prices, resolve_tool=resolve, on_records=writer.write, chunk_size=finishing.SCORE_CHUNK,
                        full_pipeline=sub.full_pipeline,
                    )
                    writer.finish(mark_done)
                return None
            except (_Invalid, JudgeError, ScoringError, PredictionFormatError, ValueError):
                for _ in lines:  # finish the validation (the scoring was rolled back)
                    pass
                if report.ok:
                    log.warning("submission %s: scoring in the validation pass failed; sending the scoring "
                                "stage", pk, exc_info=True)
                return report
    finally:
        beats.close()
