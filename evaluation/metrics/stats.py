"""Bootstrap intervals and paired tests (metrics.md section 8).

Resampling n samples with replacement and counting how many land in each outcome class is a
multinomial draw over the class shares. For statistics that depend only on such counts
(accuracy: 2 classes; MCC: 4 cells; a paired MCC difference: 16 joint cells) we draw the
counts directly with ``Generator.multinomial``: the same bootstrap distribution as drawing
indices, at O(resamples) cost instead of O(resamples * n). A mean of values that take few
distinct values (key-step coverage j/m, toolset figures, efficiency, step scores) is the same
kind of statistic: the counts of each distinct value are drawn. Means of values with many
distinct values use index resampling in chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .mode_selection import EPSILON
from .types import Interval

RESAMPLES = 1000
SEED = 20260101
LEVEL = 0.95


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(values, [tail, 100.0 - tail])
    return float(lo), float(hi)


def _interval(stats: np.ndarray, level: float, resamples: int, seed: int) -> Interval:
    lo, hi = _percentiles(stats, level)
    return Interval(low=lo, high=hi, level=level, resamples=resamples, seed=seed)


def bootstrap_rate(count: int, n: int, *, resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = LEVEL) -> Interval | None:
    """Percentile interval of a share count/n (as a fraction); None when n == 0."""
    if n <= 0:
        return None
    rng = np.random.default_rng(seed)
    stats = rng.binomial(n, count / n, size=resamples) / n
    return _interval(stats, level, resamples, seed)


def _mcc_vec(c: np.ndarray) -> np.ndarray:
    tp, fp, tn, fn = (c[:, i].astype(np.float64) for i in range(4))
    return (tp * tn - fp * fn) / (np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) + EPSILON)


def bootstrap_mcc(tp: int, fp: int, tn: int, fn: int, *, resamples: int = RESAMPLES,
                  seed: int = SEED, level: float = LEVEL) -> Interval | None:
    n = tp + fp + tn + fn
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.array([tp, fp, tn, fn], dtype=np.float64) / n, size=resamples)
    return _interval(_mcc_vec(counts), level, resamples, seed)


MULTINOMIAL_MAX_DISTINCT = 512  # above this many distinct values, indices are resampled


def bootstrap_mean(values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED,
                   level: float = LEVEL, resample_indices: bool = True) -> Interval | None:
    """Percentile interval of a mean of real values; None when there are none.

    With at most ``MULTINOMIAL_MAX_DISTINCT`` distinct values a resample's mean depends only on
    how many times each distinct value was drawn: those counts are drawn directly (one
    multinomial per resample). Otherwise indices are resampled, in chunks (O(resamples * n));
    with ``resample_indices=False`` that case gives None instead (the scorer's bound on time).
    """
    arr = np.asarray(values, dtype=np.float64)
    n = arr.size
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(arr, return_counts=True)
    if distinct.size == 1:  # every resample is the same sample
        v = float(distinct[0])
        return Interval(low=v, high=v, level=level, resamples=resamples, seed=seed)
    if distinct.size <= MULTINOMIAL_MAX_DISTINCT:
        draws = rng.multinomial(n, counts / n, size=resamples)
        return _interval(draws @ distinct / n, level, resamples, seed)
    if not resample_indices:
        return None
    stats = np.empty(resamples)
    chunk = max(1, 4_000_000 // n)  # bound memory to ~32 MB of indices per chunk
    for start in range(0, resamples, chunk):
        k = min(chunk, resamples - start)
        idx = rng.integers(0, n, size=(k, n))
        stats[start:start + k] = arr[idx].mean(axis=1)
    return _interval(stats, level, resamples, seed)


@dataclass(frozen=True, slots=True)
class PairedTest:
    statistic: float  # difference A - B (accuracy share or MCC)
    p_value: float
    significant: bool
    n: int
    interval: Interval | None = None
    discordant: tuple[int, int] | None = None  # McNemar's (A only, B only)


def mcnemar_exact(correct_a: Sequence[bool], correct_b: Sequence[bool],
                  alpha: float = 0.05) -> PairedTest:
    """Exact two-sided McNemar test on paired correctness of the same samples."""
    if len(correct_a) != len(correct_b):
        raise ValueError("paired test needs the same samples on both sides")
    b = sum(1 for x, y in zip(correct_a, correct_b) if x and not y)
    c = sum(1 for x, y in zip(correct_a, correct_b) if y and not x)
    return mcnemar_from_counts(b, c, len(correct_a), alpha)


def mcnemar_from_counts(b: int, c: int, n: int, alpha: float = 0.05) -> PairedTest:
    """McNemar's exact test from the discordant counts: ``b`` samples only A got right, ``c`` only B, of n."""
    m = b + c
    if m == 0:
        p = 1.0
    else:
        # Exact binomial tail with integers: no float underflow for large m.
        k = min(b, c)
        term = total = 1
        for i in range(k):
            term = term * (m - i) // (i + 1)
            total += term
        # int / int is correctly rounded even for huge integers.
        p = min(1.0, 2 * total / 2**m)
    diff = (b - c) / n if n else 0.0
    return PairedTest(statistic=diff, p_value=p, significant=p < alpha, n=n, discordant=(b, c))


def paired_bootstrap_mcc(cells_a: Sequence[int], cells_b: Sequence[int], *,
                         resamples: int = RESAMPLES, seed: int = SEED,
                         alpha: float = 0.05) -> PairedTest:
    """Paired bootstrap of MCC(A) - MCC(B) over the same samples (cells 0..3 from mode_selection)."""
    if len(cells_a) != len(cells_b):
        raise ValueError("paired test needs the same samples on both sides")
    n = len(cells_a)
    joint = np.bincount(4 * np.asarray(cells_a, dtype=np.int64) + np.asarray(cells_b, dtype=np.int64),
                        minlength=16).astype(np.float64) if n else np.zeros(16)
    ca = joint.reshape(4, 4).sum(axis=1)
    cb = joint.reshape(4, 4).sum(axis=0)
    point = float(_mcc_vec(ca[None, :])[0] - _mcc_vec(cb[None, :])[0])
    if n == 0:
        return PairedTest(statistic=0.0, p_value=1.0, significant=False, n=0)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, joint / n, size=resamples).reshape(resamples, 4, 4)
    diffs = _mcc_vec(draws.sum(axis=2)) - _mcc_vec(draws.sum(axis=1))
    # Two-sided bootstrap p: twice the smaller share of resamples on either side of zero.
    p = min(1.0, 2.0 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))
    level = 1.0 - alpha
    return PairedTest(statistic=point, p_value=p, significant=p < alpha, n=n,
                      interval=_interval(diffs, level, resamples, seed))
