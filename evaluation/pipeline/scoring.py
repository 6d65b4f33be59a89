"""The score stage: a validated file scored with the configured judge, its rows streamed to the database."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from evaluation.benchmark_cache import benchmark_tool_set, prepared_benchmarks, tool_hooks
from evaluation.judges import JudgeBudgetExceeded, JudgeError
from evaluation.metrics import PredictionFormatError, ScoringError, score_submission
from evaluation.metrics.run_lines import RunLines
from evaluation.models import Submission, SubmissionStatus
from evaluation.pipeline import finishing, judging
from evaluation.pipeline.claims import _Beats, _claim, _Lease, _Progress, new_claim_token
from evaluation.pipeline.finishing import _digest_fields, _ResultWriter
from evaluation.pipeline.judging import ProgressJudge, _agentx_judged, judge_prompts
from evaluation.reports import report_to_json, scorer_version
from evaluation.services import benchmark_results_bump, submission_fail, submission_notify
from evaluation.validation import iter_prediction_objects

S = SubmissionStatus


def submission_score(*, submission_id: int, token: str = "") -> None:
    """Score a validated submission. A JudgeError propagates (the task retries it with backoff,
    with the same ``token``: see ``submission_hold``).

    The scorer streams its records chunk by chunk (the judge asked per chunk) and they are
    written as they come (see _ResultWriter): the worker never holds a whole file's records.
    """
    token = token or new_claim_token()
    if not _claim(submission_id, (S.SCORING, S.JUDGING), S.SCORING, token):
        return
    with _Lease(submission_id, token):
        _score(submission_id, token)


def _score(submission_id: int, token: str) -> None:
    sub = Submission.objects.select_related("benchmark").get(pk=submission_id)
    benchmark = sub.benchmark
    prepared, sample_pks, _ = prepared_benchmarks.get(benchmark)
    resolve, validate = tool_hooks(benchmark)
    tools = benchmark_tool_set(benchmark, resolve)
    beats = _Beats(submission_id)
    inner = judging.pipeline_judge()  # made outside the result transaction: its verdicts are kept apart from it
    try:
        judge = ProgressJudge(inner, submission_id, beats)
        judge.count_questions = False
        progress = _Progress(submission_id, beats)
        writer = _ResultWriter(submission_id, sample_pks, token)
        report = None
        agentx: dict | None = None
        run_lines = RunLines()

        def mark_done() -> None:
            results = report_to_json(report)
            if agentx is not None:
                results["agentx_judged"] = agentx
            if isinstance(getattr(inner, "usage", None), dict):  # what the remote judge used (and cost)
                results["judge_usage"] = dict(inner.usage)
            results.update(run_lines.as_json(), judge_prompts=judge_prompts(inner))
            now = timezone.now()
            Submission.objects.filter(pk=submission_id).update(
                **_digest_fields(submission_id, results, report.judge),
                status=S.DONE, claim_token="", results=results, scorer_version=scorer_version(benchmark.scoring),
                judge_name=report.judge,
                finished_at=now, first_finished_at=Coalesce("first_finished_at", now), scored_at=now,
                heartbeat_at=now, attempts=0, failure_reason="", progress_done=F("n_predictions"),
                progress_total=F("n_predictions"),
            )
            benchmark_results_bump(benchmark_id=benchmark.pk, submission_ids=[submission_id])
            transaction.on_commit(lambda: submission_notify(submission_id=submission_id))

        try:
            with writer, sub.file.open("rb") as stream:
                report = score_submission(
                    prepared,
                    _counted(_seen(iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES), run_lines),
                             progress, sub.n_predictions),
                    judge=judge, tool_validator=validate, benchmark_tools=tools, prices=sub.prices,
                    resolve_tool=resolve, on_records=writer.write, chunk_size=finishing.SCORE_CHUNK,
                    full_pipeline=sub.full_pipeline,
                )
                agentx = _agentx_judged(sub, inner, judge)
                writer.finish(mark_done)
        except JudgeBudgetExceeded as exc:  # not retried: the next try would spend as much
            submission_fail(submission_id=submission_id,
                            reason=f"Judging stopped before the budget was exceeded: {exc}. The verdicts "
                                   "already paid for are kept; staff can re-score it (after raising "
                                   "JUDGE_BUDGET_USD) and only the questions left are asked.")
            return
        except JudgeError as exc:  # retried by the task; its last failure says how much was judged
            exc.judged = getattr(inner, "questions_judged", None)
            exc.asked = getattr(inner, "questions_asked", None)
            raise
        except (ScoringError, PredictionFormatError, ValueError) as exc:
            # Validation passed, so the benchmark changed under the file (a sample removed) or a bug.
            submission_fail(submission_id=submission_id,
                            reason=f"The file could not be scored: {exc}. Upload it again; if this repeats, "
                                   "tell the benchmark's maintainers.")
            return
    finally:
        beats.close()
        if hasattr(inner, "close"):
            inner.close()


def _counted(objs: Iterable[Any], progress: _Progress, total: int) -> Iterator[Any]:
    n = 0
    for n, obj in enumerate(objs, 1):
        if n % 2000 == 0:
            progress(n, total)
        yield obj
    progress(n, total, force=True)


def _seen(objs: Iterable[Any], run_lines: RunLines) -> Iterator[Any]:
    """The decoded lines, each counted by ``run_lines`` (which record the endpoint's model/response ids)."""
    for obj in objs:
        run_lines.see(obj)
        yield obj
