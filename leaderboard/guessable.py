"""The "Guessability" tab: MMReason's audit as a benchmark's readers see it (docs/metrics.md,
"Blind mode"). Reads the flags the evaluation app wrote on the samples; writes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Q

from annotation.models import Benchmark, Sample
from evaluation.metrics.types import MODES
from evaluation.models import PredictionResult
from leaderboard.services import public_submissions


@dataclass(frozen=True, slots=True)
class DomainShare:
    name: str
    guessable: int
    audited: int
    total: int

    @property
    def percent(self) -> float | None:
        return 100 * self.guessable / self.audited if self.audited else None


@dataclass(frozen=True, slots=True)
class AccuracyRow:
    model_name: str
    submission_id: int
    mode: str
    all_pct: float | None  # correct / non-aux samples (a missing line is wrong)
    kept_pct: float | None  # the same over the non-guessable non-aux samples


def domain_shares(benchmark: Benchmark) -> list[DomainShare]:
    rows = (Sample.objects.filter(benchmark=benchmark)
            .values("category__domain__name", "category__domain__position")
            .annotate(total=Count("pk"), audited=Count("pk", filter=Q(guessable__isnull=False)),
                      guessable=Count("pk", filter=Q(guessable=True)))
            .order_by("category__domain__position", "category__domain__name"))
    return [DomainShare(r["category__domain__name"], r["guessable"], r["audited"], r["total"]) for r in rows]


def accuracy_without_guessable(benchmark: Benchmark) -> list[AccuracyRow]:
    """Per public submission and mode: accuracy over every non-aux sample and over the non-aux
    samples not flagged guessable (MMReason reports the latter)."""
    samples = Sample.objects.filter(benchmark=benchmark, aux_line=False)
    n_all = samples.count()
    n_kept = samples.exclude(guessable=True).count()
    subs = {s.pk: s.model_name for s in public_submissions(benchmark).only("pk", "model_name")}
    counts = (PredictionResult.objects.filter(submission_id__in=subs, sample__aux_line=False)
              .values("submission_id", "mode")
              .annotate(right=Count("pk", filter=Q(correct=True)),
                        kept=Count("pk", filter=Q(correct=True) & ~Q(sample__guessable=True))))
    order = {m: i for i, m in enumerate(MODES)}
    rows = [AccuracyRow(subs[c["submission_id"]], c["submission_id"], c["mode"],
                        100 * c["right"] / n_all if n_all else None,
                        100 * c["kept"] / n_kept if n_kept else None) for c in counts]
    return sorted(rows, key=lambda r: (order.get(r.mode, len(order)), -(r.kept_pct or 0), r.submission_id))


def guessability_context(benchmark: Benchmark) -> dict:
    shares = domain_shares(benchmark)
    audited = sum(s.audited for s in shares)
    return {"shares": shares, "audited": audited, "k": settings.GUESSABLE_K,
            "min_blind": settings.GUESSABLE_MIN_BLIND,
            "total": {"guessable": sum(s.guessable for s in shares), "audited": audited,
                      "percent": 100 * sum(s.guessable for s in shares) / audited if audited else None},
            "rows": accuracy_without_guessable(benchmark) if audited else []}
