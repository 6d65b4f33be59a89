"""The "Guessability" tab: MMReason's audit as a benchmark's readers see it (docs/metrics.md,
"Blind mode"). Reads the audit's last build (evaluation/guessability.py, the derived kind
"guessability"); writes and computes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from annotation.models import Benchmark
from evaluation.derived import derived_read


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
    # why a share is not available: "k of n rows need an LLM judge; ..." (metrics.md section 13); "" otherwise
    all_reason: str = ""
    kept_reason: str = ""


def guessability_audited(benchmark: Benchmark) -> int:
    """``guessability_context``'s "audited" count from the build's shares alone (the tabs offered ask it on every
    uncached page: not the rows' payload)."""
    return sum(s["audited"] for s in derived_read(benchmark, "guessability", part="shares").payload or [])


def guessability_context(benchmark: Benchmark) -> dict:
    build = derived_read(benchmark, "guessability")
    stored = build.payload or {}
    shares = [DomainShare(**s) for s in stored.get("shares", [])]
    audited = sum(s.audited for s in shares)
    return {"shares": shares, "audited": audited, "k": settings.GUESSABLE_K,
            "min_blind": settings.GUESSABLE_MIN_BLIND, "updating": build.updating,
            "total": {"guessable": sum(s.guessable for s in shares), "audited": audited,
                      "percent": 100 * sum(s.guessable for s in shares) / audited if audited else None},
            "rows": [AccuracyRow(**r) for r in stored.get("rows", [])] if audited else []}
