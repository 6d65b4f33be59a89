"""Mode-selection confusion and MCC (metrics.md section 3, AdaptMMBench Sec. 4.2)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .types import Confusion, Interval

EPSILON = 1e-12

# Cell codes used by the bootstrap: one small int per sample.
TP, FP, TN, FN = 0, 1, 2, 3


def mcc(tp: int, fp: int, tn: int, fn: int) -> float:
    """Matthews correlation with the paper's epsilon; 0.0 (not NaN) when a margin is empty."""
    denom = math.sqrt(float(tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) + EPSILON
    return (tp * tn - fp * fn) / denom


def cell(text_correct: bool, invoked: bool) -> int:
    """Tool-Required when the text-mode answer was wrong; positive = tools invoked."""
    if text_correct:
        return FP if invoked else TN
    return TP if invoked else FN


def undefined_reason(tp: int, fp: int, tn: int, fn: int) -> str | None:
    """Why MCC is undefined on these counts (an empty row or column of the confusion matrix; metrics.md
    section 14), or None when it is defined."""
    if tp + fp == 0:
        return "MCC is undefined: the model never called a tool in adaptive mode"
    if tn + fn == 0:
        return "MCC is undefined: the model called a tool on every sample in adaptive mode"
    if tp + fn == 0:
        return "MCC is undefined: the text-mode answer was right on every sample (no Tool-Required sample)"
    if tn + fp == 0:
        return "MCC is undefined: the text-mode answer was wrong on every sample (no Tool-Redundant sample)"
    return None


def confusion(cells: Iterable[int], interval: Interval | None = None) -> Confusion:
    """The confusion and its MCC; MCC None, with the reason, when a margin is empty."""
    counts = [0, 0, 0, 0]
    for c in cells:
        counts[c] += 1
    tp, fp, tn, fn = counts
    reason = undefined_reason(tp, fp, tn, fn)
    if reason is not None:
        return Confusion(tp=tp, fp=fp, tn=tn, fn=fn, mcc=None, interval=None, reason=reason)
    return Confusion(tp=tp, fp=fp, tn=tn, fn=fn, mcc=mcc(tp, fp, tn, fn), interval=interval)
