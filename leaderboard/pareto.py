"""The Cost & Pareto tab: points, frontier and routing baselines, and the Plotly figure they make.

The frontier and the baselines are the scoring library's (``pareto_frontier``, ``routing_baselines``);
this module picks the inputs (one accuracy mode, dollars or tokens) and lays the figure out.
Reported results have no per-sample costs and are never used as baselines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluation.metrics import Point, pareto_frontier, routing_baselines
from leaderboard.figures import path, plot_text
from leaderboard.models import BoardEntry
from leaderboard.selectors import TabSource

UNITS = {"usd": "$ per sample", "tokens": "tokens per sample"}
MARKERS = {"open": ("circle", "Open weights"), "closed": ("square", "Closed weights"), "": ("diamond", "Weights not stated")}


@dataclass
class ParetoView:
    mode: str
    unit: str
    points: list[dict[str, Any]] = field(default_factory=list)
    frontier: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    unplotted: list[str] = field(default_factory=list)  # rows without a cost in this unit, or at zero cost
    figure: dict[str, Any] = field(default_factory=dict)


def _x(src: TabSource, mode: str, unit: str) -> float | None:
    if unit == "tokens":
        return path(src.results, "modes", mode, "process", "mean_tokens", "value")
    return path(src.results, "modes", mode, "cost", "mean_cost_usd", "value")


def pareto_view(sources: list[TabSource], mode: str, unit: str) -> ParetoView:
    view = ParetoView(mode=mode, unit=unit)
    by_name: dict[str, TabSource] = {}
    points: list[Point] = []
    for src in sources:
        if src.reported:
            continue
        acc = path(src.results, "modes", mode, "accuracy", "overall", "value")
        if acc is None:
            continue
        x = _x(src, mode, unit)
        if x is None:
            view.unplotted.append(src.model_name)
            continue
        name = f"{src.model_name} (#{src.submission_id})"
        by_name[name] = src
        points.append(Point(name, acc, x))
    frontier = pareto_frontier(points)
    on_frontier = {p.name for p in frontier}
    for p in points:
        src = by_name[p.name]
        view.points.append({"name": src.model_name, "submission_id": src.submission_id, "weights": src.weights,
                            "accuracy": 100 * p.accuracy, "cost": p.cost, "is_demo": src.is_demo,
                            "on_frontier": p.name in on_frontier})
    view.frontier = [{"name": by_name[p.name].model_name, "accuracy": 100 * p.accuracy, "cost": p.cost}
                     for p in frontier]
    view.baselines = _baselines(by_name, mode, unit)
    view.figure = figure(view)
    return view


def _baselines(by_name: dict[str, TabSource], mode: str, unit: str) -> list[dict[str, Any]]:
    """Oracle, Strongest and Cheapest routers over the plotted submissions' per-sample results."""
    ids = {src.submission_id: name for name, src in by_name.items()}
    if len(ids) < 2:
        return []
    correct: dict[str, list[bool]] = {}
    costs: dict[str, list[float]] = {}
    for sid, bits, c, t in BoardEntry.objects.filter(submission_id__in=ids).values_list(
        "submission_id", "correct", "costs", "token_counts"
    ):
        vector = (t if unit == "tokens" else c).get(mode)
        if bits.get(mode) is None or vector is None:
            continue
        correct[ids[sid]] = [b == "1" for b in bits[mode]]
        costs[ids[sid]] = [float(v) for v in vector]
    if len(correct) < 2 or len({len(v) for v in correct.values()}) != 1:
        return []
    out = []
    for kind, p in routing_baselines(correct, costs).items():
        label = p.name
        for name, src in by_name.items():  # "Strongest (Model (#3))" reads better as "Strongest (Model)"
            label = label.replace(name, src.model_name)
        out.append({"kind": kind, "name": label, "accuracy": 100 * p.accuracy, "cost": p.cost, "n": p.n})
    return out


def figure(view: ParetoView) -> dict[str, Any]:
    """A Plotly figure (plain JSON): log cost on x, accuracy on y, frontier as a step line."""
    unit = UNITS[view.unit]
    hover = "%{text}<br>accuracy %{y:.1f} %<br>" + ("%{x:.3g} tokens" if view.unit == "tokens" else "$%{x:.4g}") + \
        " per sample<extra></extra>"
    traces: list[dict[str, Any]] = []
    for weights, (symbol, label) in MARKERS.items():
        pts = [p for p in view.points if (p["weights"] or "") == weights and p["cost"] > 0]
        if pts:
            traces.append({"type": "scatter", "mode": "markers", "name": label, "x": [p["cost"] for p in pts],
                           "y": [p["accuracy"] for p in pts], "text": [plot_text(p["name"]) for p in pts],
                           "marker": {"symbol": symbol, "size": 11}, "hovertemplate": hover,
                           "meta": {"role": "points"}})
    front = [p for p in view.frontier if p["cost"] > 0]
    if front:
        traces.append({"type": "scatter", "mode": "lines", "name": "Pareto frontier", "x": [p["cost"] for p in front],
                       "y": [p["accuracy"] for p in front], "text": [plot_text(p["name"]) for p in front],
                       "line": {"shape": "hv", "dash": "dot"}, "hovertemplate": hover, "meta": {"role": "frontier"}})
    base = [b for b in view.baselines if b["cost"] > 0]
    if base:
        traces.append({"type": "scatter", "mode": "markers+text", "name": "Routing baselines",
                       "x": [b["cost"] for b in base], "y": [b["accuracy"] for b in base],
                       "text": [plot_text(b["name"]) for b in base], "textposition": "top center",
                       "marker": {"symbol": "star", "size": 14}, "hovertemplate": hover, "meta": {"role": "baselines"}})
    return {"data": traces, "layout": {
        "xaxis": {"type": "log", "title": {"text": f"Cost ({unit}, log scale)"}},
        "yaxis": {"title": {"text": f"{view.mode.capitalize()} accuracy (%)"}},
        "legend": {"orientation": "h", "y": -0.25}, "margin": {"t": 20, "r": 10}, "hovermode": "closest",
    }}
