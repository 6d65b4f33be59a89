"""Judge stability: the configured judge asked again, N times, about a seeded sample of the questions
it has already answered on a benchmark, and how far it agrees with itself (docs/judges.md).

The questions are found as the cost estimate finds them (evaluation.judge_estimate): each live,
scored submission's file is scored once more with a stand-in judge that answers as the offline judge
and writes down every question; those whose verdict the current judge model and prompt version have
cached are the candidates. The repeats are asked with the cache switched off, so they are real new
answers and the cached verdicts are never read or overwritten.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.models import Benchmark
from evaluation import judge_estimate
from evaluation.benchmark_cache import benchmark_tool_set, prepared_benchmarks, tool_hooks
from evaluation.judges import OfflineJudge, input_hash
from evaluation.metrics import score_submission
from evaluation.models import JudgeVerdict, Submission, SubmissionStatus
from evaluation.validation import iter_prediction_objects
from trace_review.agreement import Alpha, krippendorff_alpha
from trace_review.models import JudgeRepeatVerdict, JudgeStabilityRun

KINDS = judge_estimate.KINDS
KIND_LABELS = {"answer_equivalence": "Answer equivalence", "key_step_matching": "Key-step matching",
               "tool_call_validity": "Tool-call validity", "step_scores": "Step scores (1 / 0.5 / 0)"}
OFFLINE_MESSAGE = ("The offline judge is deterministic: asked again, it gives the same verdict, so its "
                   "self-agreement is 1 by construction and there is nothing to measure. Configure an "
                   "OpenAI-compatible judge (JUDGE_OPENAI_BASE_URL) to measure its stability.")


class StabilityRefused(ValueError):
    """The run cannot be made (offline judge, nothing cached, bad numbers); the message says why."""


class _Recorder(judge_estimate._Recorder):
    """The estimate's stand-in (answers as the offline judge), keeping every distinct question itself."""

    name = "stability"

    def _record(self, kind: str, questions: Sequence[Any]) -> list:
        seen = self.asked[kind]
        for q in questions:
            seen.setdefault(input_hash(q.payload()), q)
        return getattr(self.offline, kind)(questions)


def benchmark_questions(benchmark: Benchmark) -> dict[str, dict[str, Any]]:
    """kind -> input hash -> question, over the benchmark's live, scored submissions."""
    prepared, _, _ = prepared_benchmarks.get(benchmark)
    resolve, validate = tool_hooks(benchmark)
    recorder = _Recorder()
    asked: dict[str, dict[str, Any]] = recorder.asked
    submissions = Submission.objects.filter(benchmark=benchmark, status=SubmissionStatus.DONE,
                                            deleted_at__isnull=True).order_by("pk")
    for submission in submissions:
        if not submission.file:
            continue
        with submission.file.open("rb") as stream:
            score_submission(
                prepared, iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES), judge=recorder,
                tool_validator=validate, benchmark_tools=benchmark_tool_set(benchmark, resolve),
                prices=submission.prices, resolve_tool=resolve, on_records=lambda records: None, resamples=1,
            )
    return asked


def _label(value: Any) -> Any:
    """A verdict as stored (JSON): a bool, or a list for key steps and step scores."""
    return list(value) if isinstance(value, tuple) else value


def run_stability(*, benchmark: Benchmark, sample: int, repeats: int, seed: int = 0, judge: Any = None,
                  started_by_id: int | None = None) -> JudgeStabilityRun:
    """Draw ``sample`` cached questions (seeded), ask ``judge`` each ``repeats`` times, store the repeats."""
    if repeats < 2:
        raise StabilityRefused("--repeats must be at least 2: one answer cannot disagree with itself.")
    if sample < 1:
        raise StabilityRefused("--sample must be at least 1.")
    if judge is None:
        from evaluation.pipeline import pipeline_judge

        judge = pipeline_judge()
        try:
            return run_stability(benchmark=benchmark, sample=sample, repeats=repeats, seed=seed, judge=judge,
                                 started_by_id=started_by_id)
        finally:
            close = getattr(judge, "close", None)
            if close is not None:
                close()
    if isinstance(judge, OfflineJudge) or not hasattr(judge, "versions"):
        raise StabilityRefused(OFFLINE_MESSAGE)
    versions = {kind: f"{kind}.{judge.versions[kind]}" for kind in KINDS}
    questions = benchmark_questions(benchmark)
    candidates: list[tuple[str, str]] = []
    for kind in KINDS:
        asked = list(questions[kind])
        cached: set[str] = set()
        for start in range(0, len(asked), 500):  # IN lists in chunks (older SQLite: 999 parameters at most)
            cached.update(JudgeVerdict.objects.filter(
                judge=judge.name, prompt_version=versions[kind], input_hash__in=asked[start:start + 500],
            ).values_list("input_hash", flat=True))
        candidates.extend((kind, h) for h in sorted(cached))
    if not candidates:
        raise StabilityRefused(f"No question of {benchmark.slug} has a cached verdict of judge {judge.name} "
                               f"at the current prompt versions: score a submission with it first.")
    drawn = random.Random(seed).sample(candidates, min(sample, len(candidates)))
    by_kind: dict[str, list[str]] = {}
    for kind, h in drawn:
        by_kind.setdefault(kind, []).append(h)
    cache, judge.cache = getattr(judge, "cache", None), None  # bypass: neither read nor written
    rows = []
    try:
        for repeat in range(repeats):
            for kind, hashes in by_kind.items():
                got = getattr(judge, kind)([questions[kind][h] for h in hashes])
                rows.extend(JudgeRepeatVerdict(kind=kind, input_hash=h, repeat=repeat, verdict=_label(v))
                            for h, v in zip(hashes, got))
    finally:
        judge.cache = cache
    with transaction.atomic():
        run = JudgeStabilityRun.objects.create(benchmark=benchmark, judge=judge.name, prompt_versions=versions,
                                               sample_size=len(drawn), repeats=repeats, seed=seed,
                                               started_by_id=started_by_id)
        for row in rows:
            row.run = run
        JudgeRepeatVerdict.objects.bulk_create(rows, batch_size=500)
    return run


@dataclass
class KindStability:
    kind: str
    label: str
    questions: int
    all_agree: int
    alpha: Alpha
    metric: str

    @property
    def all_agree_percent(self) -> float | None:
        return 100.0 * self.all_agree / self.questions if self.questions else None


@dataclass
class StabilityFigures:
    run: JudgeStabilityRun
    questions: int
    all_agree: int
    kinds: list[KindStability]

    @property
    def all_agree_percent(self) -> float | None:
        return 100.0 * self.all_agree / self.questions if self.questions else None


def stability_figures(run: JudgeStabilityRun) -> StabilityFigures:
    """Share of questions whose repeats all agree, and Krippendorff's alpha across the repeats per kind.

    Alpha's units are what trace review compares with people: one answer, one key step, one tool call,
    one reasoning step (each with N labels, one a repeat); nominal distance, interval for step scores.
    """
    answers: dict[tuple[str, str], dict[int, Any]] = {}
    for kind, h, repeat, verdict in run.verdicts.values_list("kind", "input_hash", "repeat", "verdict"):
        answers.setdefault((kind, h), {})[repeat] = verdict
    kinds = []
    for kind in KINDS:
        mine = [[by_repeat[r] for r in sorted(by_repeat)] for (k, _), by_repeat in sorted(answers.items())
                if k == kind]
        if not mine:
            continue
        units: list[list[Any]] = []
        for labels in mine:
            if isinstance(labels[0], list):
                width = min(len(x) for x in labels)
                units.extend([float(x[i]) if kind == "step_scores" else x[i] for x in labels] for i in range(width))
            else:
                units.append(labels)
        metric = "interval" if kind == "step_scores" else "nominal"
        agree = sum(1 for labels in mine if all(x == labels[0] for x in labels))
        kinds.append(KindStability(kind, KIND_LABELS[kind], len(mine), agree, krippendorff_alpha(units, metric),
                                   metric))
    return StabilityFigures(run, sum(k.questions for k in kinds), sum(k.all_agree for k in kinds), kinds)


def latest_figures(*, benchmark: Benchmark | None = None, judge: str | None = None,
                   limit: int = 5) -> list[StabilityFigures]:
    runs = JudgeStabilityRun.objects.select_related("benchmark")
    if benchmark is not None:
        runs = runs.filter(benchmark=benchmark)
    if judge:
        runs = runs.filter(judge=judge)
    return [stability_figures(r) for r in runs[:limit]]


def latest_by_judge(figures: list[StabilityFigures]) -> dict[str, StabilityFigures]:
    """The newest run of each judge among ``figures`` (newest first), for the judges' own cards."""
    out: dict[str, StabilityFigures] = {}
    for f in figures:
        out.setdefault(f.run.judge, f)
    return out


def judge_is_offline() -> bool:
    return not settings.JUDGE_OPENAI_BASE_URL
