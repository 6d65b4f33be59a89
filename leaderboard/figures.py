"""Small, Django-free helpers for figures: a value with its interval, and reading stored results.

Every statistic comes from the scoring library (``evaluation.metrics``); this module only reads
what it stored and asks it for intervals it did not store.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from evaluation.metrics import bootstrap_rate
from evaluation.metrics.profiles import undecided_reason
from evaluation.metrics.types import fast_state


@dataclass(frozen=True, slots=True)
class Fig:
    """A figure as shown: value, optional 95 % interval, and what it stands on (n)."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int | None = None
    digits: int | None = None  # decimals to show when fixed by the source (a paper's printed precision)
    reason: str | None = None  # why there is no value: nothing in the file carries it (metrics.md section 14)

    @property
    def known(self) -> bool:
        return self.value is not None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "low": self.lo, "high": self.hi, "n": self.n}
        if self.value is None and self.reason:
            out["reason"] = self.reason
        return out


fast_state(Fig)  # pickled with every cached page's rows (evaluation.metrics.types)
NONE = Fig(None)


def plot_text(text: str) -> str:
    """A name as Plotly text: Plotly renders a subset of HTML in text, hover and tick labels (``<a href>``
    becomes a live link), so a submitter's markup is escaped; Plotly shows ``&lt;`` as ``<``."""
    return html.escape(text, quote=False)


@lru_cache(maxsize=65536)
def rate_interval(count: int, n: int) -> tuple[float, float] | None:
    """The library's bootstrap interval of count/n; memoised because it depends on nothing else."""
    iv = bootstrap_rate(count, n)
    return (iv.low, iv.high) if iv else None


def rate_fig(node: Any, scale: float = 100.0) -> Fig:
    """A stored Rate (``{"count", "n", "value", "interval"}``) as a Fig, scaled to percent."""
    if not isinstance(node, dict) or node.get("value") is None:
        return Fig(None, n=node.get("n") if isinstance(node, dict) else None,
                   reason=node.get("reason") if isinstance(node, dict) else None)
    iv = node.get("interval")
    if iv is None and node.get("n"):
        pair = rate_interval(node["count"], node["n"])
        iv = {"low": pair[0], "high": pair[1]} if pair else None
    return _scaled(node, iv, scale)


def count_fig(count: int, n: int) -> Fig:
    """count/n in percent with the library's bootstrap interval."""
    if not n:
        return Fig(None, n=0)
    pair = rate_interval(count, n)
    return Fig(100.0 * count / n, pair[0] * 100 if pair else None, pair[1] * 100 if pair else None, n)


def cell_fig(cell: Any) -> Fig:
    """A board entry's stored count ``[right, n]`` or ``[right, n, undecided]`` (services.entry_fields) as a Fig:
    with rows no rule decided, not available with the reason and the decided share (metrics.md section 13),
    as the overview's accuracy is, never a share that counts them wrong."""
    right, n, undecided = (list(cell) + [0])[:3] if isinstance(cell, (list, tuple)) and len(cell) >= 2 else (0, 0, 0)
    if undecided:
        return Fig(None, n=n, reason=undecided_reason(undecided, n, right))
    return count_fig(right, n)


def mean_fig(node: Any, scale: float = 1.0) -> Fig:
    """A stored Mean (``{"value", "n", "interval"}``) as a Fig, with its interval when the
    results have one (the library gives it for the few-valued per-sample figures; results
    scored before it was added, and continuous means, show their n alone)."""
    if not isinstance(node, dict) or node.get("value") is None:
        return Fig(None, n=node.get("n") if isinstance(node, dict) else None,
                   reason=node.get("reason") if isinstance(node, dict) else None)
    return _scaled(node, node.get("interval"), scale)


def _scaled(node: dict, iv: dict | None, scale: float) -> Fig:
    """A stored figure's value and interval (``{"low", "high"}`` or None), times ``scale``."""
    iv = iv or {}
    lo, hi = iv.get("low"), iv.get("high")
    return Fig(node["value"] * scale, lo * scale if lo is not None else None,
               hi * scale if hi is not None else None, node.get("n"))


def path(results: Any, *keys: str) -> Any:
    node = results
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def p_text(p: float) -> str:
    """A p-value as people read it: ``p < 0.001`` below a thousandth (never "p = 0.000"), else three decimals."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
