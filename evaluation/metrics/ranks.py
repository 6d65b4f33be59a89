"""Honest ranks (metrics.md section 8): rank intervals from each entry's own bootstrap interval, and tie groups.

Every entry is scored on the same n samples. A bootstrap resample of the samples is a vector of
counts (how many times each sample was drawn, a multinomial draw of n over n equal shares), seeded,
so the 1,000 resamples are the same for every entry and on every run. An entry's own 95 % interval of
its statistic (accuracy, or mode-selection MCC) is the central 95 % of its statistic over those
resamples (percentiles rounded outwards): it depends on that entry's vector alone. Its rank interval
is counted from the others' intervals (Chatbot Arena's style): the best rank it could have is 1 + the
number of entries whose interval lies wholly above its own (lower bound strictly above its upper
bound); the worst is the number of entries, itself included, whose upper bound is not below its lower
bound. A change of one entry therefore needs its own bootstrap and counts, not the board's resamples;
a whole board is ranked by sorting the bounds (O(N log N)).

Tie groups follow the board's order: a new group starts at every entry that differs significantly
(a paired test at 5 %) from the entry above it, and every entry of a group shares the group's
first position as its rank. Neighbours are chained, so the first and last entries of a long
group may differ significantly from each other; only adjacent entries are tested.

Plain Python and NumPy, no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .mode_selection import EPSILON
from .stats import LEVEL, RESAMPLES, SEED, PairedTest, mcnemar_from_counts

ENTRY_BLOCK = 512  # entries whose cells are widened to float32 at once (512 x 30,000 samples: 61 MB)


@dataclass(frozen=True, slots=True)
class Bounds:
    """An entry's own 95 % bootstrap interval of its statistic (accuracy as a share, or MCC)."""

    low: float
    high: float


@dataclass(frozen=True, slots=True)
class RankInterval:
    low: int
    high: int
    level: float
    resamples: int
    seed: int


@lru_cache(maxsize=2)
def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    """Per resample, how many times each of the n samples is drawn (resamples x n, float32; read-only, kept:
    every entry of a board, and every change of it, uses the same draws)."""
    rng = np.random.default_rng(seed)
    out = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float32)
    out.flags.writeable = False
    return out


def _bounds(block_stat: Callable[[np.ndarray, slice], np.ndarray], m: int, n: int, resamples: int, seed: int,
            level: float, divisor: float = 1.0) -> list[Bounds]:
    """Each entry's own interval: ``block_stat(draws, block)`` gives a block of entries' statistics over
    every resample (resamples x block); its central ``level`` share, rounded outwards, over ``divisor``.
    Every value is computed from the entry's own cells alone (integer counts, exact in float32), so an
    entry's bounds are the same whichever block, or board, it is computed in."""
    if m == 0:
        return []
    if n == 0:
        return [Bounds(0.0, 0.0) for _ in range(m)]
    draws = _draws(n, resamples, seed)
    tail = (1.0 - level) / 2.0 * 100.0
    out: list[Bounds] = []
    for start in range(0, m, ENTRY_BLOCK):
        stats = block_stat(draws, slice(start, start + ENTRY_BLOCK))
        lo = np.percentile(stats, tail, axis=0, method="lower")
        hi = np.percentile(stats, 100.0 - tail, axis=0, method="higher")
        out += [Bounds(float(a) / divisor, float(b) / divisor) for a, b in zip(lo, hi)]
    return out


def intervals_from_bounds(bounds: Sequence[Bounds | None], *, level: float = LEVEL, resamples: int = RESAMPLES,
                          seed: int = SEED) -> list[RankInterval | None]:
    """Rank intervals counted from the entries' own intervals (None: an entry without one, not counted and
    not ranked): low = 1 + the entries whose lower bound is strictly above this one's upper bound; high = the
    entries (itself included) whose upper bound is not below this one's lower bound. By sorting: O(N log N)."""
    known = [b for b in bounds if b is not None]
    lows = np.sort(np.array([b.low for b in known], dtype=np.float64))
    highs = np.sort(np.array([b.high for b in known], dtype=np.float64))
    m = len(known)
    # lower bounds strictly above each upper bound; upper bounds not below each lower bound (one call each)
    above = m - np.searchsorted(lows, np.array([b.high for b in known], dtype=np.float64), side="right")
    reach = m - np.searchsorted(highs, np.array([b.low for b in known], dtype=np.float64), side="left")
    counted = iter(zip(above.tolist(), reach.tolist()))
    out: list[RankInterval | None] = []
    for b in bounds:
        if b is None:
            out.append(None)
        else:
            a, r = next(counted)
            out.append(RankInterval(1 + a, r, level, resamples, seed))
    return out


def _matrix(rows: Sequence[Sequence[bool] | str], n: int) -> np.ndarray:
    """Entries x samples, one byte a cell. A row is a sequence of booleans or a string of ``0``/``1``
    (the board's stored vectors), read without a Python object per cell: 10,000 entries on 30,000
    samples are 300 MB here, where lists of booleans would be 2.4 GB."""
    out = np.zeros((len(rows), n), dtype=bool)
    for i, row in enumerate(rows):
        if len(row) != n:
            raise ValueError("every entry needs the same samples")
        out[i] = (np.frombuffer(row.encode("ascii"), dtype=np.uint8) == ord("1")) if isinstance(row, str) else row
    return out


def entry_bounds(correct: Sequence[Sequence[bool] | str], *, resamples: int = RESAMPLES, seed: int = SEED,
                 level: float = LEVEL) -> list[Bounds]:
    """Each entry's own 95 % bootstrap interval of its accuracy (a share); ``correct[i][j]``: entry i right on
    sample j (a missing prediction counts as wrong, as in accuracy); a row may be a string of ``0``/``1``."""
    n = len(correct[0]) if correct else 0
    matrix = _matrix(correct, n)
    # A block widened as stored (entries x samples, contiguous), then transposed as a view: BLAS reads it
    # transposed. Widening the transposed cells instead gives a strided array that costs 3x the product.
    return _bounds(lambda d, block: d @ matrix[block].astype(np.float32).T, len(correct), n, resamples, seed, level,
                   divisor=n or 1.0)


def entry_bounds_mcc(cells: Sequence[Sequence[int]], *, resamples: int = RESAMPLES, seed: int = SEED,
                     level: float = LEVEL) -> list[Bounds]:
    """Each entry's own 95 % bootstrap interval of its mode-selection MCC; ``cells[i][j]`` is entry i's cell on
    sample j (mode_selection's TP, FP, TN, FN codes) or -1 where it has no text or adaptive prediction."""
    n = len(cells[0]) if cells else 0
    codes = np.zeros((len(cells), n), dtype=np.int8)  # one byte a cell, filled row by row
    for i, row in enumerate(cells):
        if len(row) != n:
            raise ValueError("every entry needs the same samples")
        codes[i] = np.asarray(row, dtype=np.int8)

    def block_stat(d: np.ndarray, block: slice) -> np.ndarray:
        a, b, c, e = (d @ (codes[block] == k).astype(np.float32).T for k in range(4))  # TP, FP, TN, FN
        mcc: np.ndarray = (a * c - b * e) / (np.sqrt((a + b) * (a + e) * (c + b) * (c + e)) + EPSILON)
        return mcc

    return _bounds(block_stat, len(cells), n, resamples, seed, level)


def rank_intervals(correct: Sequence[Sequence[bool] | str], *, resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = LEVEL) -> list[RankInterval]:
    """Rank interval of each entry by accuracy (``entry_bounds``, then ``intervals_from_bounds``)."""
    got = intervals_from_bounds(entry_bounds(correct, resamples=resamples, seed=seed, level=level),
                                level=level, resamples=resamples, seed=seed)
    return [iv for iv in got if iv is not None]


def rank_intervals_mcc(cells: Sequence[Sequence[int]], *, resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> list[RankInterval]:
    """Rank interval of each entry by mode-selection MCC (``entry_bounds_mcc``, then ``intervals_from_bounds``)."""
    got = intervals_from_bounds(entry_bounds_mcc(cells, resamples=resamples, seed=seed, level=level),
                                level=level, resamples=resamples, seed=seed)
    return [iv for iv in got if iv is not None]


def neighbour_mcnemar(correct: Sequence[Sequence[bool] | str], alpha: float = 0.05) -> list[PairedTest | None]:
    """Exact McNemar between each entry and the one before it (None for the first), in the order given.

    The discordant counts of all pairs come from one pass over the board (NumPy); the p-values
    from ``mcnemar_from_counts``, the same arithmetic as ``mcnemar_exact``.
    """
    if not correct:
        return []
    n = len(correct[0])
    matrix = _matrix(correct, n)
    upper, lower = matrix[:-1], matrix[1:]
    b = (upper & ~lower).sum(axis=1)
    c = (lower & ~upper).sum(axis=1)
    return [None] + [mcnemar_from_counts(int(x), int(y), n, alpha) for x, y in zip(b, c)]


def shared_ranks(significant_above: Sequence[bool | None]) -> list[int]:
    """The rank each entry shows, in board order: a new tie group starts at the first entry and at
    every entry that differs significantly from the one above (``True``); ``False`` or ``None`` (not
    tested) keeps it in the group above. Every entry shows its group's first position (1-based)."""
    out: list[int] = []
    for position, sig in enumerate(significant_above, 1):
        out.append(position if position == 1 or sig else out[-1])
    return out
