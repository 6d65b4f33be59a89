"""Reads: the batches a person may work on, their progress, and the units agreement is computed on."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from annotation.models import Benchmark, BenchmarkRole
from evaluation.models import PredictionResult, Submission, on_board_q
from evaluation.metrics.profiles import UNDECIDED
from trace_review import access, verified
from trace_review.agreement import (
    KindAgreement,
    Unit,
    kind_agreement,
    krippendorff_alpha,
)
from trace_review.models import (
    HumanVerdict,
    Trace,
    TraceAssignment,
    TraceAssignmentStatus,
    TraceReviewBatch,
)


@dataclass(frozen=True, slots=True)
class Kind:
    key: str
    label: str
    categories: tuple
    metric: str
    spec: str  # where the judge's question is defined


KINDS = (
    Kind("answer", "Answer equivalence", (True, False), "nominal", "metrics spec 1"),
    Kind("key_steps", "Key-step matching", (True, False), "nominal", "metrics spec 4"),
    Kind("calls", "Tool-call validity", (True, False), "nominal", "metrics spec 4"),
    Kind("step_scores", "Step scores (1 / 0.5 / 0)", (1.0, 0.5, 0.0), "interval", "metrics spec 6"),
)
KIND_BY_KEY = {k.key: k for k in KINDS}


def batches_for(user: AbstractBaseUser) -> list[TraceReviewBatch]:
    """Batches the person may take traces from (roles on the benchmark, and the batch's named people)."""
    if not user.is_authenticated:
        return []
    batches = TraceReviewBatch.objects.select_related("benchmark", "submission").prefetch_related("reviewers")
    if not user.is_superuser:
        slugs = BenchmarkRole.objects.filter(user=user).values("benchmark_id")
        batches = batches.filter(benchmark_id__in=slugs)
    return [b for b in batches if access.can_review_batch(user, b)]


def managed_benchmarks(user: AbstractBaseUser) -> list[Benchmark]:
    if not user.is_authenticated:
        return []
    benchmarks = Benchmark.objects.order_by("name")
    if not user.is_superuser:
        benchmarks = benchmarks.filter(roles__user=user, roles__role="admin").distinct()
    return list(benchmarks)


def batch_progress(batch: TraceReviewBatch, user: AbstractBaseUser | None = None) -> dict[str, Any]:
    traces = Trace.objects.filter(batch=batch).annotate(n=Count("verdicts"))
    total = traces.count()
    complete = traces.filter(n__gte=batch.people_per_trace).count()
    people = list(HumanVerdict.objects.filter(trace__batch=batch).values("reviewer__username")
                  .annotate(done=Count("id")).order_by("reviewer__username"))
    mine = HumanVerdict.objects.filter(trace__batch=batch, reviewer=user).count() if user else 0
    return {"total": total, "complete": complete, "verdicts": sum(p["done"] for p in people), "people": people,
            "mine": mine}


def assignment_of(user: AbstractBaseUser, pk: int) -> TraceAssignment | None:
    """The person's own assignment; someone else's is None, so its existence is not confirmed."""
    if not user.is_authenticated:
        return None
    found = (TraceAssignment.objects.select_related("trace__sample__category__domain", "trace__submission",
                                                    "trace__batch__benchmark")
             .filter(pk=pk, reviewer=user))
    if not user.is_staff:  # a submission unpublished (or deleted) since the batch was made: its traces close
        found = found.filter(on_board_q("trace__submission__"))
    return found.first()


def assignments_of(user: AbstractBaseUser, batch: TraceReviewBatch) -> QuerySet[TraceAssignment]:
    return (TraceAssignment.objects.filter(reviewer=user, trace__batch=batch)
            .exclude(status=TraceAssignmentStatus.SKIPPED)
            .select_related("trace__sample").order_by("-updated_at"))


# ------------------------------------------------------------------------------------ agreement


def judge_of(decided_by: str | None, fallback: str) -> str:
    """``judge:<name>`` -> name; ``rule`` stays ``rule`` (the rules are compared with people too)."""
    if not decided_by:
        return fallback
    return decided_by.split(":", 1)[1] if decided_by.startswith("judge:") else decided_by


def _visible_traces(*, everything: bool, benchmark: Benchmark | None) -> QuerySet[Trace]:
    traces = Trace.objects.filter(verdicts__isnull=False, submission__deleted_at__isnull=True).distinct()
    if not everything:  # the public page stands on public, scored submissions only
        traces = traces.filter(on_board_q("submission__"))
    if benchmark is not None:
        traces = traces.filter(batch__benchmark=benchmark)
    return traces


def _units_of_trace(trace: Trace, verdicts: list[HumanVerdict], pr: PredictionResult | None,
                    judge_name: str) -> Iterable[tuple[str, str, Unit]]:
    """(kind, judge, unit) for every question of one trace; judge None where the judge said nothing."""
    tid = str(trace.pk)
    # An answer no rule decided and no judge has (docs/metrics.md section 13) has no verdict to compare: said nothing.
    said = pr is not None and pr.decided_by != UNDECIDED
    yield ("answer", judge_of(pr.decided_by, judge_name) if said else "",
           Unit(tid, tuple(v.answer_correct for v in verdicts), pr.correct if said else None))
    for kind, judged in (("key_steps", pr.key_steps if pr else None), ("step_scores", pr.step_scores if pr else None),
                         ("calls", [c.get("valid") for c in pr.calls] if pr else None)):
        n = max((len(getattr(v, kind)) for v in verdicts), default=0)
        # A verdict given against another number of key steps (the gold changed since) cannot be lined up.
        same = [v for v in verdicts if len(getattr(v, kind)) == n]
        for i in range(n):
            judge = judged[i] if judged is not None and len(judged) == n else None
            if kind == "step_scores" and judge is not None:
                judge = float(judge)
            name = judge_name
            if kind == "calls" and pr is not None and len(pr.calls) == n:
                name = judge_of(pr.calls[i].get("decided_by"), judge_name)
            yield (kind, name if judge is not None else "", Unit(tid, tuple(getattr(v, kind)[i] for v in same), judge))


def judge_rows(keys: list[tuple[int, int, str]], chunk: int = 500) -> dict[tuple[int, int, str], PredictionResult]:
    """The scorer's rows for (submission, sample, mode) keys, in chunks of IN lists.

    Not one OR per key: SQLite refuses an expression tree deeper than 1,000, and a batch can be larger.
    """
    wanted = set(keys)
    found: dict[tuple[int, int, str], PredictionResult] = {}
    ordered = sorted(wanted)
    for start in range(0, len(ordered), chunk):
        part = ordered[start:start + chunk]
        rows = PredictionResult.objects.filter(submission_id__in={k[0] for k in part},
                                               sample_id__in={k[1] for k in part}, mode__in={k[2] for k in part})
        for r in rows:
            key = (r.submission_id, r.sample_id, r.mode)
            if key in wanted:
                found[key] = r
    return found


@dataclass
class JudgeRow:
    judge: str
    kinds: list[tuple[Kind, KindAgreement]]
    stability: Any = None  # the judge's newest stability run (trace_review.stability), set by the view


@dataclass
class AgreementPage:
    judges: list[JudgeRow]
    human_ceiling: list[tuple[Kind, Any]]  # Krippendorff's alpha per kind over every unit
    n_traces: int
    n_verdicts: int


def agreement_units(*, everything: bool, benchmark: Benchmark | None = None) -> tuple[dict, int, int]:
    traces = list(_visible_traces(everything=everything, benchmark=benchmark)
                  .select_related("submission").order_by("pk"))
    verdicts: dict[int, list[HumanVerdict]] = defaultdict(list)
    for v in HumanVerdict.objects.filter(trace__in=[t.pk for t in traces]).order_by("trace_id", "reviewer_id"):
        verdicts[v.trace_id].append(v)
    results = judge_rows([(t.submission_id, t.sample_id, t.mode) for t in traces])
    units: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for t in traces:
        pr = results.get((t.submission_id, t.sample_id, t.mode))
        for kind, judge, unit in _units_of_trace(t, verdicts[t.pk], pr, t.submission.judge_name or "offline"):
            units[(kind, judge)].append(unit)
    return units, len(traces), sum(len(v) for v in verdicts.values())


def agreement_page(*, everything: bool, benchmark: Benchmark | None = None, judge: str | None = None,
                   kind: str | None = None) -> AgreementPage:
    units, n_traces, n_verdicts = agreement_units(everything=everything, benchmark=benchmark)
    judges = sorted({j for (_, j) in units if j and (judge is None or j == judge)})
    kinds = [k for k in KINDS if kind is None or k.key == kind]
    rows = []
    for name in judges:
        found = [(k, kind_agreement(units[(k.key, name)], categories=k.categories, metric=k.metric))
                 for k in kinds if units.get((k.key, name))]
        rows.append(JudgeRow(name, found))
    ceiling = [(k, krippendorff_alpha([u.humans for (kk, _), us in units.items() if kk == k.key for u in us], k.metric))
               for k in kinds]
    return AgreementPage(rows, ceiling, n_traces, n_verdicts)


def submission_for_link(*, pk: int, everything: bool) -> Submission | None:
    """The submission a leaderboard figure belongs to, if this visitor may see it."""
    subs = Submission.objects.filter(pk=pk, deleted_at__isnull=True)
    return (subs if everything else subs.filter(on_board_q())).only("pk", "judge_name", "benchmark_id").first()


# ------------------------------------------------------------------------------ human-verified


@dataclass
class VerifiedMode:
    mode: str
    n_predictions: int
    n_reviewed: int
    people: Any = None  # verified.Figures when every prediction has a human verdict
    judge: Any = None

    @property
    def complete(self) -> bool:
        return self.n_reviewed == self.n_predictions > 0


def human_verified(submission: Submission) -> list[VerifiedMode]:
    """Per mode: how many of the submission's predictions people have judged, and, once all are,
    the people's figures beside the judge's (trace_review/verified.py)."""
    out = []
    results = PredictionResult.objects.filter(submission=submission).select_related("sample").order_by("mode", "sample_id")
    verdicts: dict[tuple[int, str], list[HumanVerdict]] = defaultdict(list)
    for v in HumanVerdict.objects.filter(trace__submission=submission).select_related("trace"):
        verdicts[(v.trace.sample_id, v.trace.mode)].append(v)
    by_mode: dict[str, list[PredictionResult]] = defaultdict(list)
    for r in results:
        by_mode[r.mode].append(r)
    for mode, rows in by_mode.items():
        reviewed = [r for r in rows if verdicts.get((r.sample_id, mode))]
        item = VerifiedMode(mode, len(rows), len(reviewed))
        if item.complete:
            records = [verified.Record(
                aux=r.sample.aux_line,
                judge={"correct": r.correct, "key_steps": r.key_steps, "calls": [c.get("valid") for c in r.calls],
                       "step_scores": r.step_scores},
                humans=tuple({"answer_correct": v.answer_correct, "key_steps": v.key_steps, "calls": v.calls,
                              "step_scores": v.step_scores} for v in verdicts[(r.sample_id, mode)]),
            ) for r in rows]
            item.people, item.judge = verified.side_by_side(records)
        out.append(item)
    return out
