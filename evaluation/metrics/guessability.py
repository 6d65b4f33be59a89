"""MMReason's guessability audit (metrics.md, "Blind mode and guessable samples").

A sample is *guessable* when at least ``k`` of a benchmark's blind submissions (the question
without the image) answer it correctly. With fewer than ``min_blind`` blind submissions nothing
is decided: every flag is ``None``, never a guess from one or two models.

Plain data in, typed results out: which submissions count is the caller's choice (the platform
counts public, done ones; docs/metrics.md says why).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

DEFAULT_K = 2
MIN_BLIND = 3


@dataclass(frozen=True, slots=True)
class Guessability:
    n_blind: int  # blind submissions counted
    k: int
    min_blind: int
    correct: Mapping[str, int]  # sample id -> how many of them answered it correctly

    @property
    def audited(self) -> bool:
        return self.n_blind >= self.min_blind

    def flag(self, sample_id: str) -> bool | None:
        """True/False once audited; None while too few blind submissions are counted."""
        if not self.audited:
            return None
        return self.correct.get(sample_id, 0) >= self.k


def guessability(correct_sets: Sequence[Collection[str]], sample_ids: Iterable[str], *,
                 k: int = DEFAULT_K, min_blind: int = MIN_BLIND) -> Guessability:
    """``correct_sets``: per blind submission, the ids of the samples it answered correctly (a
    sample without a blind line counts as wrong, as everywhere else)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    counts = dict.fromkeys(sample_ids, 0)
    for correct in correct_sets:
        for sid in correct:
            if sid in counts:
                counts[sid] += 1
    return Guessability(len(correct_sets), k, min_blind, counts)
