"""The guessability audit of a benchmark, written onto its samples (docs/metrics.md, "Blind mode").

Which submissions count: the benchmark's *public, done, not deleted* submissions with at least one
blind line. A private submission never counts, because the flag is visible to annotators and
reviewers who may not see that submission: with three blind submissions and k = 2, a sample's
flag plus two public answers would reveal the third, private one. Counting only public
submissions makes the flag a function of what the leaderboard already shows.

``guessability_refresh`` is idempotent and cheap (one query of blind rows, one bulk update).
``guessability_build`` is the derived kind "guessability" (evaluation/derived.py): the task of that name
in RESULTS_CHANGED_TASKS writes the flags and stores what the Guessability tab shows (the share per
domain, each public submission's accuracy with and without the guessable samples), so the tab only reads.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q

from annotation.models import Sample
from evaluation.derived import derived_refresh
from evaluation.metrics.guessability import Guessability, guessability
from evaluation.metrics.profiles import UNDECIDED, undecided_reason
from evaluation.metrics.types import MODES
from evaluation.models import PredictionResult, Submission


def counted_blind_submissions(*, benchmark_id: int) -> list[int]:
    """Ids of the submissions the audit counts (see the module docstring), oldest first."""
    return list(
        Submission.objects.on_board().filter(benchmark_id=benchmark_id)
        # per candidate, through the (submission, sample, mode) unique index: no scan of every blind row
        .filter(Exists(PredictionResult.objects.filter(submission=OuterRef("pk"), mode="blind")))
        .order_by("pk").values_list("pk", flat=True)
    )


def benchmark_guessability(*, benchmark_id: int) -> Guessability:
    subs = counted_blind_submissions(benchmark_id=benchmark_id)
    correct: dict[int, set[str]] = {pk: set() for pk in subs}
    for sub_id, sample_pk in PredictionResult.objects.filter(
            submission_id__in=subs, mode="blind", correct=True).values_list("submission_id", "sample_id"):
        correct[sub_id].add(str(sample_pk))
    pks = [str(pk) for pk in Sample.objects.filter(benchmark_id=benchmark_id).values_list("pk", flat=True)]
    return guessability(list(correct.values()), pks, k=settings.GUESSABLE_K, min_blind=settings.GUESSABLE_MIN_BLIND)


def guessability_refresh(*, benchmark_id: int) -> Guessability:
    """Write every sample's flag (None while too few blind submissions count). Returns the audit."""
    audit = benchmark_guessability(benchmark_id=benchmark_id)
    samples = Sample.objects.filter(benchmark_id=benchmark_id)
    if not audit.audited:
        samples.exclude(guessable=None).update(guessable=None)
        return audit
    yes = [int(pk) for pk, n in audit.correct.items() if n >= audit.k]
    samples.filter(pk__in=yes).exclude(guessable=True).update(guessable=True)
    samples.exclude(pk__in=yes).exclude(guessable=False).update(guessable=False)
    return audit


def _domain_shares(benchmark_id: int) -> list[dict[str, Any]]:
    rows = (Sample.objects.filter(benchmark_id=benchmark_id)
            .values("category__domain__name", "category__domain__position")
            .annotate(total=Count("pk"), audited=Count("pk", filter=Q(guessable__isnull=False)),
                      guessable=Count("pk", filter=Q(guessable=True)))
            .order_by("category__domain__position", "category__domain__name"))
    return [{"name": r["category__domain__name"], "guessable": r["guessable"], "audited": r["audited"],
             "total": r["total"]} for r in rows]


def _accuracy_rows(benchmark_id: int) -> list[dict[str, Any]]:
    """Per public submission and mode: accuracy in % over every non-aux sample and over the non-aux samples
    not flagged guessable (MMReason reports the latter); a missing line is wrong. Over a row no rule decided
    (it needs an LLM judge) the accuracy is not available, with the reason beside it (metrics.md section 13)."""
    samples = Sample.objects.filter(benchmark_id=benchmark_id, aux_line=False)
    n_all = samples.count()
    n_kept = samples.exclude(guessable=True).count()
    subs = dict(Submission.objects.on_board().filter(benchmark_id=benchmark_id).values_list("pk", "model_name"))
    counts = (PredictionResult.objects.filter(submission_id__in=subs, sample__aux_line=False)
              .values("submission_id", "mode")
              .annotate(right=Count("pk", filter=Q(correct=True)),
                        kept=Count("pk", filter=Q(correct=True) & ~Q(sample__guessable=True)),
                        open_all=Count("pk", filter=Q(decided_by=UNDECIDED)),
                        open_kept=Count("pk", filter=Q(decided_by=UNDECIDED) & ~Q(sample__guessable=True))))
    order = {m: i for i, m in enumerate(MODES)}

    def pct(right: int, n: int, undecided: int) -> tuple[float | None, str]:
        if undecided:
            return None, undecided_reason(undecided, n, right)
        return (100 * right / n if n else None), ""

    rows = []
    for c in counts:
        (all_pct, all_reason), (kept_pct, kept_reason) = (pct(c["right"], n_all, c["open_all"]),
                                                          pct(c["kept"], n_kept, c["open_kept"]))
        rows.append({"model_name": subs[c["submission_id"]], "submission_id": c["submission_id"], "mode": c["mode"],
                     "all_pct": all_pct, "kept_pct": kept_pct, "all_reason": all_reason, "kept_reason": kept_reason})
    return sorted(rows, key=lambda r: (order.get(r["mode"], len(order)), -(r["kept_pct"] or 0), r["submission_id"]))


def guessability_build(*, benchmark_id: int) -> int | None:
    """The refresh of the derived kind "guessability": the flags, then the tab's tables, for the current
    results_version (evaluation/derived.py). Returns that version."""

    def build(benchmark: Any) -> dict[str, Any]:
        guessability_refresh(benchmark_id=benchmark.pk)
        shares = _domain_shares(benchmark.pk)
        audited = sum(s["audited"] for s in shares)
        return {"shares": shares, "rows": _accuracy_rows(benchmark.pk) if audited else []}

    return derived_refresh(benchmark_id=benchmark_id, kind="guessability", build=build)
