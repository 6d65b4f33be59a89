"""Formatting of figures: a value with its interval, a place marker, a better-direction arrow."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from leaderboard.figures import Fig

register = template.Library()


def _fmt(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


@register.filter
def fig(value: Fig | None, digits: int = 1) -> str:
    """62.5 [58.0, 66.1]: the value, then its 95 % interval when there is one."""
    if value is None or value.value is None:
        return mark_safe('<span class="na" title="not available">–</span>')  # noqa: S308 - a constant
    if value.digits is not None:
        digits = value.digits
    if value.lo is None or value.hi is None:
        return format_html("{}", _fmt(value.value, digits))
    return format_html('{} <span class="ci" title="95 % bootstrap interval">[{}, {}]</span>',
                       _fmt(value.value, digits), _fmt(value.lo, digits), _fmt(value.hi, digits))


@register.filter
def num(value: float | None, digits: int = 1) -> str:
    return _fmt(value, digits)


@register.filter
def money(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:,.2f}" if value >= 1 else f"${value:.3g}"


@register.filter
def place(cell: Any) -> str:
    """Best and second best: a word for screen readers and a symbol, not only a colour."""
    if getattr(cell, "place", 0) == 1:
        return mark_safe('<span class="place best" title="best in this column and mode">▲<span class="sr">best</span></span>')  # noqa: S308 - a constant
    if getattr(cell, "place", 0) == 2:
        return mark_safe('<span class="place second" title="second best">△<span class="sr">second best</span></span>')  # noqa: S308 - a constant
    return ""


@register.filter
def arrow(better: str | None) -> str:
    if better == "higher":
        return mark_safe('<span class="better" title="higher is better">↑<span class="sr">higher is better</span></span>')  # noqa: S308 - a constant
    if better == "lower":
        return mark_safe('<span class="better" title="lower is better">↓<span class="sr">lower is better</span></span>')  # noqa: S308 - a constant
    return ""


@register.filter
def weights_label(value: str) -> str:
    return {"open": "open", "closed": "closed"}.get(value or "", "not stated")


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    try:
        return mapping[key]
    except (KeyError, IndexError, TypeError):
        return None
