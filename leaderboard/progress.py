"""Progress over time: the best headline accuracy per month, and the best so far, as plain data and a chart.

No database access here (``progress_store.points`` reads the points), so the figures can be
computed by hand in a test. A submission counts in the month (UTC) it was first scored; a re-score
does not move it. With both open- and closed-weight submissions on the board, each gets its own
line beside the line of all models (unstated weights count in "all" only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from leaderboard.figures import plot_text

GROUP_LABELS = {"all": "All models", "open": "Open weights", "closed": "Closed weights"}
GROUP_STYLES = {"all": {"color": "#555555", "dash": "dot"}, "open": {"color": "#1b7837"},
                "closed": {"color": "#762a83"}}


@dataclass(frozen=True, slots=True)
class Point:
    """One public submission: when it was first scored, its weights, headline accuracy (%) and name."""

    when: datetime
    weights: str
    score: float
    model: str
    submission_id: int | None = None  # the board's refresh stores the month's best by it (progress_store)


@dataclass(frozen=True, slots=True)
class MonthRow:
    month: str  # "2026-05"
    group: str  # "all" | "open" | "closed"
    submissions: int  # scored that month, in this group
    best: float  # the month's best score
    best_model: str
    record: float  # the best score up to the end of the month
    record_model: str


def month_of(when: datetime) -> str:
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return f"{when.year:04d}-{when.month:02d}"


def groups_of(points: Sequence[Point]) -> list[str]:
    """"all", plus "open" and "closed" when both kinds are on the board."""
    kinds = {p.weights for p in points}
    return ["all", "open", "closed"] if {"open", "closed"} <= kinds else ["all"]


def progress_rows(points: Sequence[Point]) -> list[MonthRow]:
    """Per group, one row for each month with a submission in it, in month order.

    Ties keep the earlier submission (the one that reached the score first), so the record holder
    is the model that set it.
    """
    rows: list[MonthRow] = []
    ordered = sorted(points, key=lambda p: p.when)
    for group in groups_of(points):
        members = [p for p in ordered if group == "all" or p.weights == group]
        by_month: dict[str, list[Point]] = {}
        for p in members:
            by_month.setdefault(month_of(p.when), []).append(p)
        record: Point | None = None
        for month in sorted(by_month):
            month_points = by_month[month]
            best = month_points[0]
            for p in month_points[1:]:
                if p.score > best.score:
                    best = p
            if record is None or best.score > record.score:
                record = best
            rows.append(MonthRow(month, group, len(month_points), best.score, best.model, record.score, record.model))
    return rows


def progress_figure(rows: Sequence[MonthRow]) -> dict[str, Any]:
    """The Plotly figure: one step line per group (best so far), hover with the month's best."""
    data = []
    for group in GROUP_LABELS:
        mine = [r for r in rows if r.group == group]
        if not mine:
            continue
        data.append({
            "type": "scatter", "mode": "lines+markers", "name": GROUP_LABELS[group],
            "x": [f"{r.month}-01" for r in mine], "y": [round(r.record, 4) for r in mine],
            "line": {"width": 2, "shape": "hv", **GROUP_STYLES[group]},
            "marker": {"size": 7, "color": GROUP_STYLES[group]["color"]},
            "customdata": [[plot_text(r.record_model), round(r.best, 4), plot_text(r.best_model), r.submissions]
                           for r in mine],
            "hovertemplate": ("%{x|%b %Y}<br>best so far %{y:.1f} % (%{customdata[0]})<br>"
                              "best this month %{customdata[1]:.1f} % (%{customdata[2]}), "
                              "%{customdata[3]} submission(s)<extra>" + GROUP_LABELS[group] + "</extra>"),
            "meta": {"group": group},
        })
    # One tick a month (every few months over a long span): Plotly's own ticks fall between months on a short
    # span, and "%b %Y" then printed one month twice.
    months = sorted({r.month for r in rows})
    span = (int(months[-1][:4]) * 12 + int(months[-1][5:7])) - (int(months[0][:4]) * 12 + int(months[0][5:7])) if months else 0
    return {"data": data, "layout": {
        "xaxis": {"title": {"text": "Month first scored (UTC)"}, "type": "date", "tickformat": "%b %Y",
                  "dtick": f"M{max(1, -(-span // 12))}", "tick0": f"{months[0]}-01" if months else None},
        "yaxis": {"title": {"text": "Best headline accuracy so far, %"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.25}, "margin": {"t": 10, "r": 10}, "height": 380,
    }}
