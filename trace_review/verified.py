"""Human-verified figures: a submission's process figures as people judged them, beside the judge's.

Shown only for a (submission, mode) whose every prediction has at least one human verdict. Each
figure is computed from the people and from the judge over the *same* predictions (aux-line
samples left out, as in the scorer), so the two columns differ only by who judged:

- accuracy: mean over predictions of the share of people who said "correct";
- key-step coverage (longest matched run k_1..k_j over m) and the any-order variant: per person,
  averaged over the people of a prediction, then over predictions that have key steps;
- tool effectiveness: valid calls over all calls, pooled, each call's validity being the share of
  people who said "valid";
- step score: per person the mean of their step scores, averaged over people, then predictions.

Averaging people (not taking a majority) means a 1-1 split counts as half, with no tie rule needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Record:
    aux: bool
    judge: dict[str, Any]  # correct, key_steps, calls (valid flags), step_scores
    humans: tuple[dict[str, Any], ...]  # answer_correct, key_steps, calls, step_scores


def coverage(flags: Sequence[bool]) -> tuple[float, float] | None:
    """(kcov, kcov_any) as in the metrics spec section 4; None without key steps."""
    if not flags:
        return None
    run = 0
    for f in flags:
        if not f:
            break
        run += 1
    return run / len(flags), sum(1 for f in flags if f) / len(flags)


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


@dataclass
class Figures:
    n: int
    accuracy: float | None
    kcov: float | None
    kcov_any: float | None
    tool_eff: float | None
    n_calls: int
    step_score: float | None

    @property
    def accuracy_percent(self) -> float | None:
        return None if self.accuracy is None else 100.0 * self.accuracy


def _figures(items: list[tuple[bool, list, list, list]], n: int) -> Figures:
    """items: per prediction, a list per person of (correct, key_steps, calls, step_scores)."""
    acc, kcov, kany, steps = [], [], [], []
    valid = 0.0
    calls = 0
    for people in items:
        acc.append(_mean([1.0 if p[0] else 0.0 for p in people]))
        covs = [c for c in (coverage(p[1]) for p in people) if c is not None]
        if covs:
            kcov.append(_mean([c[0] for c in covs]))
            kany.append(_mean([c[1] for c in covs]))
        n_calls = len(people[0][2]) if people else 0
        if n_calls:
            calls += n_calls
            valid += _mean([sum(1.0 for v in p[2] if v) for p in people]) or 0.0
        scored = [_mean([float(s) for s in p[3]]) for p in people if p[3]]
        if scored:
            steps.append(_mean(scored))
    return Figures(n, _mean(acc), _mean(kcov), _mean(kany), valid / calls if calls else None, calls, _mean(steps))


def side_by_side(records: Sequence[Record]) -> tuple[Figures, Figures]:
    """(people, judge) figures over the same non-aux predictions."""
    kept = [r for r in records if not r.aux]
    humans = [[(h["answer_correct"], h["key_steps"], h["calls"], h["step_scores"]) for h in r.humans] for r in kept]
    judge = [[(r.judge["correct"], r.judge.get("key_steps") or [], [bool(v) for v in r.judge.get("calls") or []],
               r.judge.get("step_scores") or [])] for r in kept]
    return _figures(humans, len(kept)), _figures(judge, len(kept))
