"""One unit per kind of figure, on every page that shows results (docs/submissions.md, "Units on the page").

Shares (accuracy, key-step coverage, tool effectiveness, and their intervals) are percentages with one
decimal (the submission page writes the ``%`` in each cell, the leaderboard once in the header); MCC is
a coefficient in [-1, 1] with two decimals; cost is in US dollars per 10,000 samples; a rank score is on
the board's 0-100 scale. The leaderboard's tags use the same functions.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from evaluation.metrics.profiles import NEEDS_JUDGE
from evaluation.metrics.types import FAILURE_CLASSES

register = template.Library()
NA = "–"
# Results scored before the share answered and the failure counts were recorded (results format 1)
# have neither: the pages say so rather than show 0.
NOT_RECORDED = "not available: scored before this figure was recorded (a re-score adds it)"


@register.filter
def share(fraction: Any) -> str:
    """0.6667 -> "66.7%" (a share in [0, 1] as a percentage, one decimal)."""
    if fraction is None or fraction == "":
        return NA
    return f"{float(fraction) * 100:.1f}%"


@register.filter
def points(value: Any) -> str:
    """A score in [0, 1] on the leaderboard's 0-100 scale (rank score), or a difference of shares in
    percentage points: 0.7762 -> "77.6"."""
    return NA if value is None or value == "" else f"{float(value) * 100:.1f}"


@register.filter
def per_10k(value: Any) -> str:
    """A cost per sample as US dollars per 10,000 samples."""
    return NA if value is None or value == "" else usd(float(value) * 10_000)


@register.filter
def coefficient(value: Any) -> str:
    return NA if value is None or value == "" else f"{float(value):.2f}"


@register.filter
def usd(value: Any) -> str:
    """$12.40, or three significant digits under a dollar ($0.0123)."""
    if value is None or value == "":
        return NA
    value = float(value)
    return f"${value:,.2f}" if value >= 1 else f"${value:.3g}"


def failure_text(counts: Any) -> str | None:
    """A mode's stored failure counts in words, in the classes' order: "3 timeout, 1 max_turns";
    "none" when no line failed; None when the results predate them."""
    if not isinstance(counts, dict):
        return None
    return ", ".join(f"{counts[c]} {c}" for c in FAILURE_CLASSES if counts.get(c)) or "none"


def _not_recorded() -> SafeString:
    return format_html('<span class="na" title="{}">{}</span>', NOT_RECORDED, NA)


@register.filter
def answered(mode: Any) -> str:
    """A mode's share answered from its stored results ("97.0%"; the tooltip gives count / n), or a
    dash saying why when the results predate it."""
    node = mode.get("answered") if isinstance(mode, dict) else None
    if not isinstance(node, dict) or node.get("value") is None:
        return _not_recorded()
    return format_html('<span title="{} of {} samples answered">{}</span>', node.get("count"), node.get("n"),
                       share(node["value"]))


@register.filter
def failures(mode: Any) -> str:
    """A mode's failures by class ("3 timeout, 1 max_turns", "none"), or a dash saying why."""
    text = failure_text(mode.get("failures") if isinstance(mode, dict) else None)
    return _not_recorded() if text is None else text


def _reason_dash(node: Any) -> SafeString | None:
    """The dash for a figure the file carries nothing for, its title saying why (metrics.md section 14)."""
    reason = node.get("reason") if isinstance(node, dict) else None
    if reason and NEEDS_JUDGE in reason:  # rows no rule decided: said in words (metrics.md section 13)
        return format_html('<span class="na undecided">not available: {}</span>', reason)
    return format_html('<span class="na" title="not available: {}">{}</span>', reason, NA) if reason else None


@register.filter
def share_of(node: Any) -> str:
    """A stored share (Rate or Mean) as a percentage, or a dash saying why it is not available."""
    if isinstance(node, dict) and node.get("value") is not None:
        return share(node["value"])
    return _reason_dash(node) or NA


@register.filter
def cost_of(cost: Any) -> str:
    """A mode's stored cost as $ per 10K samples, or a dash saying why it is not available."""
    if isinstance(cost, dict) and cost.get("per_10k_usd") is not None:
        return usd(cost["per_10k_usd"])
    return _reason_dash(cost.get("mean_cost_usd") if isinstance(cost, dict) else None) or NA
