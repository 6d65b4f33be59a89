"""Honest ranks (metrics.md section 8): bootstrap rank intervals and tie groups of a whole board.

Every entry is scored on the same n samples. A bootstrap resample of the samples is a vector of
counts (how many times each sample was drawn, a multinomial draw of n over n equal shares); every
entry's statistic on that resample follows from those counts, so one draw serves the whole board
and the entries' ranks in it are comparable. An entry's rank in a resample is 1 + the number of
entries with a strictly higher statistic (tied entries share the better rank); its rank interval
is the central 95 % range of those ranks over 1,000 resamples, seeded, so it is the same on every
run.

Tie groups follow the board's order: a new group starts at every entry that differs significantly
(a paired test at 5 %) from the entry above it, and every entry of a group shares the group's
first position as its rank. Neighbours are chained, so the first and last entries of a long
group may differ significantly from each other; only adjacent entries are tested.

Plain Python and NumPy, no Django.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .mode_selection import EPSILON
from .stats import LEVEL, RESAMPLES, SEED, PairedTest, mcnemar_from_counts

CHUNK_CELLS = 2_000_000  # resamples x entries held at once (~8 MB of float32 statistics)
ENTRY_BLOCK = 512  # entries whose cells are widened to float32 at once (512 x 30,000 samples: 61 MB)


@dataclass(frozen=True, slots=True)
class RankInterval:
    low: int
    high: int
    level: float
    resamples: int
    seed: int


def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    """Per resample, how many times each of the n samples is drawn (resamples x n, float32)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float32)


def _competition_ranks(scores: np.ndarray) -> np.ndarray:
    """Row by row, 1 + how many entries score strictly higher (resamples x entries, integers)."""
    k, m = scores.shape
    ordered = np.sort(scores, axis=1)
    ranks = np.empty((k, m), dtype=np.int32)
    for r in range(k):
        # entries at or below each score; the rest score strictly higher
        ranks[r] = m - np.searchsorted(ordered[r], scores[r], side="right") + 1
    return ranks


def _intervals(ranks: np.ndarray, level: float, resamples: int, seed: int) -> list[RankInterval]:
    tail = (1.0 - level) / 2.0 * 100.0
    lo = np.percentile(ranks, tail, axis=0, method="lower")
    hi = np.percentile(ranks, 100.0 - tail, axis=0, method="higher")
    return [RankInterval(int(a), int(b), level, resamples, seed) for a, b in zip(lo, hi)]


def _rank_intervals(stat: Callable[[np.ndarray], np.ndarray], m: int, n: int, resamples: int, seed: int,
                    level: float) -> list[RankInterval]:
    """``stat(draws)`` gives every entry's statistic for a chunk of resamples (chunk x m)."""
    if m == 0:
        return []
    if n == 0:
        return [RankInterval(1, m, level, resamples, seed) for _ in range(m)]
    draws = _draws(n, resamples, seed)
    ranks = np.empty((resamples, m), dtype=np.int32)
    step = max(1, CHUNK_CELLS // m)
    for start in range(0, resamples, step):
        ranks[start:start + step] = _competition_ranks(stat(draws[start:start + step]))
    return _intervals(ranks, level, resamples, seed)


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


def _by_entry_blocks(m: int, block_stat: Callable[[np.ndarray, slice], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """A statistic for all m entries, computed ENTRY_BLOCK entries at a time, so only one block is ever
    held as float32 (the cells stay one byte each); each entry's value is the same as in one product."""
    def stat(d: np.ndarray) -> np.ndarray:
        out = np.empty((d.shape[0], m), dtype=np.float32)
        for start in range(0, m, ENTRY_BLOCK):
            block = slice(start, start + ENTRY_BLOCK)
            out[:, block] = block_stat(d, block)
        return out
    return stat


def rank_intervals(correct: Sequence[Sequence[bool] | str], *, resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = LEVEL) -> list[RankInterval]:
    """Rank interval of each entry by accuracy; ``correct[i][j]``: entry i right on sample j (a
    missing prediction counts as wrong, as in accuracy); a row may be a string of ``0``/``1``."""
    n = len(correct[0]) if correct else 0
    matrix = _matrix(correct, n)
    # Widened as stored (entries x samples, contiguous), then transposed as a view: BLAS reads it transposed. Widening
    # the transposed cells instead gives a strided float32 array that costs 3x the product (10,000 entries: 30 s).
    stat = _by_entry_blocks(len(correct), lambda d, block: d @ matrix[block].astype(np.float32).T)
    return _rank_intervals(stat, len(correct), n, resamples, seed, level)


def rank_intervals_mcc(cells: Sequence[Sequence[int]], *, resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = LEVEL) -> list[RankInterval]:
    """Rank interval of each entry by mode-selection MCC; ``cells[i][j]`` is entry i's cell on sample
    j (mode_selection's TP, FP, TN, FN codes) or -1 where it has no text or adaptive prediction."""
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

    return _rank_intervals(_by_entry_blocks(len(cells), block_stat), len(cells), n, resamples, seed, level)


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
