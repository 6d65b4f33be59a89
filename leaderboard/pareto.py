"""The Cost & Pareto tab: points, frontier and routing baselines, and the Plotly figure they make.

The frontier and the baselines are the scoring library's (``pareto_frontier``, ``routing_baselines``);
this module picks the inputs (one accuracy mode, dollars or tokens) and lays the figure out.
Reported results have no per-sample costs and are never used as baselines.

A page reads what the board's refresh stored (``pareto_store``: the submissions' points, the frontier, the
baselines and the counts per mode and unit; ``stored_page``): its 50 points by index, the frontier and the
baselines' names as they read now, the authors' reported rows merged in. ``pareto_view`` computes the same
from every public row's results: the definition the stored figures are tested against, and the page of a
board built before they were stored. The chart draws the page's points, the whole frontier and the
baselines (docs/leaderboard.md, "Cost & Pareto").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from django.db.models.fields.json import KT

from evaluation.metrics import NEEDS_JUDGE, Point, pareto_frontier, routing_baselines
from leaderboard.board import PAGE_SIZE, UNDECIDED_BIT
from evaluation.models import ON_BOARD, Submission, on_board_q
from leaderboard.figures import path, plot_text
from leaderboard.models import BoardEntry, ParetoPoint, ParetoState
from leaderboard.paging import page_span
from leaderboard.selectors import TabSource, on_board_now, reported_sources

UNITS = {"usd": "$ per sample", "tokens": "tokens per sample"}
# weights -> (Plotly symbol, legend name, the shape's word for the caption)
MARKERS = {"open": ("circle", "Open weights", "circles"), "closed": ("square", "Closed weights", "squares"),
           "": ("diamond", "Weights not stated", "diamonds")}
REPORTED_MARKER = ("triangle-up", "Reported by the authors", "triangles")
# The papers' process tables give tokens per sample for the adaptive mode (leaderboard/data/*.json "notes").
REPORTED_TOKENS_MODE = "adaptive"
NAMES_SHOWN = 100  # names a note under the table lists (rows not plotted); the rest are counted


@dataclass
class ParetoView:
    mode: str
    unit: str
    points: list[dict[str, Any]] = field(default_factory=list)
    frontier: list[dict[str, Any]] = field(default_factory=list)
    baselines: list[dict[str, Any]] = field(default_factory=list)
    unplotted: list[str] = field(default_factory=list)  # rows without a cost in this unit, or at zero cost
    # rows whose accuracy in this mode is not available because rows need an LLM judge: (name, reason)
    undecided: list[tuple[str, str]] = field(default_factory=list)
    unplotted_more: int = 0  # rows of each list beyond the NAMES_SHOWN named (a board of thousands)
    undecided_more: int = 0
    figure: dict[str, Any] = field(default_factory=dict)
    caption: str = ""  # what each marker and line of the figure is: only those the legend has
    empty_note: str = ""  # why there is no chart, said where the chart would be


def _x(src: TabSource, mode: str, unit: str) -> float | None:
    if src.reported:  # a paper's figures: tokens per sample for one mode, never a cost in dollars
        tokens = path(src.results, "process", "tokens")
        return tokens if unit == "tokens" and mode == REPORTED_TOKENS_MODE else None
    if unit == "tokens":
        return path(src.results, "modes", mode, "process", "mean_tokens", "value")
    return path(src.results, "modes", mode, "cost", "mean_cost_usd", "value")


def _accuracy(src: TabSource, mode: str) -> float | None:
    """A share in [0, 1]; a reported row's is the paper's "All" figure, in percent (as on the overview)."""
    if src.reported:
        pair = path(src.results, "accuracy", mode, "overall")
        return pair[1] / 100 if pair and pair[1] is not None else None
    return path(src.results, "modes", mode, "accuracy", "overall", "value")


def pareto_view(sources: list[TabSource], mode: str, unit: str) -> ParetoView:
    view = ParetoView(mode=mode, unit=unit)
    by_name: dict[str, TabSource] = {}
    points: list[Point] = []
    reported_unplotted = 0
    for src in sources:
        acc = _accuracy(src, mode)
        if acc is None:
            reason = None if src.reported else path(src.results, "modes", mode, "accuracy", "overall", "reason")
            if reason and NEEDS_JUDGE in reason:  # not a point at a wrong height, and not silently missing
                view.undecided.append((src.model_name, reason))
            continue
        x = _x(src, mode, unit)
        if x is None:
            view.unplotted.append(src.model_name)
            reported_unplotted += src.reported
            continue
        name = f"{src.model_name} ({src.key})"  # unique: two rows may share a model name
        by_name[name] = src
        points.append(Point(name, acc, x))
    frontier = pareto_frontier(points)
    on_frontier = {p.name for p in frontier}
    for p in points:
        src = by_name[p.name]
        view.points.append({"name": src.model_name, "submission_id": src.submission_id, "weights": src.weights,
                            "accuracy": 100 * p.accuracy, "cost": p.cost, "is_demo": src.is_demo,
                            "reported": src.reported, "on_frontier": p.name in on_frontier})
    view.frontier = [{"name": by_name[p.name].model_name, "accuracy": 100 * p.accuracy, "cost": p.cost}
                     for p in frontier]
    # Routing needs per-sample results: submissions only.
    view.baselines = _baselines({n: s for n, s in by_name.items() if not s.reported}, mode, unit)
    view.figure = figure(view)
    view.caption = caption(view)
    if not any(p["cost"] > 0 for p in view.points) and reported_unplotted:
        view.empty_note = _empty_note(mode, unit)
    return view


def _empty_note(mode: str, unit: str) -> str:
    return (f"Nothing to plot: the results reported by the authors give no {UNITS[unit]} for the "
            f"{mode} mode" + ("" if (unit, mode) == ("tokens", REPORTED_TOKENS_MODE) else
                              f" (they give tokens per sample for the {REPORTED_TOKENS_MODE} mode "
                              "of the open-weight models)") + ".")


def stored_page(benchmark: Any, mode: str, unit: str, params: Any, base: str) -> tuple[ParetoView, dict] | None:
    """The tab's page as the board's last build stored it (``pareto_store``), with what must hold at once
    applied now: a submission that left the board since is not shown (its point, its frontier step, the
    baseline naming it), and names are read again. The counts, the frontier and the baselines are the
    build's until its refresh has run (the page says "Updating"). A few indexed reads, whatever the board's
    size; None for a board built before the figures were stored."""
    state = ParetoState.objects.filter(benchmark=benchmark, mode=mode, unit=unit).values(
        "counts", "frontier", "baselines").first()
    if state is None:
        return None
    counts = state["counts"]
    view = ParetoView(mode=mode, unit=unit)
    reported: list[tuple[TabSource, float, float]] = []
    reported_unplotted = []
    for src in reported_sources(benchmark):
        acc = _accuracy(src, mode)
        if acc is None:
            continue
        x = _x(src, mode, unit)
        if x is None:
            reported_unplotted.append(src.model_name)
        else:
            reported.append((src, acc, x))
    total = counts["plotted"] + len(reported)
    start, pager = page_span(total, params, base)
    end = min(start + PAGE_SIZE, total)
    points = ParetoPoint.objects.filter(benchmark=benchmark, mode=mode).filter(on_board_q("submission__"))
    plotted = points.filter(accuracy__isnull=False, **{f"{unit}__isnull": False}).order_by("finished_at",
                                                                                           "submission_id")
    page = list(plotted[start:min(end, counts["plotted"])].values_list(
        "submission_id", "accuracy", unit, "submission__model_name", "submission__weights", "submission__is_demo"))
    named = {p[0] for p in state["frontier"]} | {b["submission_id"] for b in state["baselines"] if b["submission_id"]}
    now = {v["pk"]: v["model_name"] for v in Submission.objects.filter(pk__in=named).values(
        "pk", "model_name", *ON_BOARD) if on_board_now(v)}
    # the frontier over the submissions' stored frontier and the reported points (a point off the first stays
    # off the frontier of both: pareto_frontier(A + B) == pareto_frontier(frontier(A) + B))
    shown = {name: (now[sid], sid) for sid, name, _a, _c in state["frontier"] if sid in now}
    shown.update({f"{src.model_name} ({src.key})": (src.model_name, src.key) for src, _a, _x in reported})
    front = pareto_frontier([Point(name, acc, cost) for sid, name, acc, cost in state["frontier"] if sid in now]
                            + [Point(f"{src.model_name} ({src.key})", acc, x) for src, acc, x in reported])
    on_frontier = {shown[p.name][1] for p in front}
    view.frontier = [{"name": shown[p.name][0], "accuracy": 100 * p.accuracy, "cost": p.cost} for p in front]
    for sid, acc, x, name, weights, demo in page:
        view.points.append({"name": name, "submission_id": sid, "weights": weights, "accuracy": 100 * acc, "cost": x,
                            "is_demo": demo, "reported": False, "on_frontier": sid in on_frontier})
    for src, acc, x in reported[max(0, start - counts["plotted"]):max(0, end - counts["plotted"])]:
        view.points.append({"name": src.model_name, "submission_id": None, "weights": src.weights,
                            "accuracy": 100 * acc, "cost": x, "is_demo": False, "reported": True,
                            "on_frontier": src.key in on_frontier})
    view.baselines = [{"kind": b["kind"], "name": b["kind"] if b["submission_id"] is None else
                       f"{b['kind']} ({now[b['submission_id']]})", "accuracy": 100 * b["accuracy"], "cost": b["cost"],
                       "n": b["n"]} for b in state["baselines"] if b["submission_id"] is None or b["submission_id"] in now]
    # the notes' rows (none on most boards: no read then), through the indexes on the unit's cost and the accuracy
    unplotted = list(points.filter(accuracy__isnull=False, **{f"{unit}__isnull": True}).order_by(
        "finished_at", "submission_id").values_list("submission__model_name", flat=True)[:NAMES_SHOWN]
        ) if counts["unplotted"] else []
    view.unplotted = unplotted + reported_unplotted
    view.unplotted_more = max(0, counts["unplotted"] - len(unplotted))
    view.undecided = list(points.filter(accuracy__isnull=True).order_by("finished_at", "submission_id").values_list(
        "submission__model_name", "reason")[:NAMES_SHOWN]) if counts["undecided"] else []
    view.undecided_more = max(0, counts["undecided"] - len(view.undecided))
    view.figure = figure(view)
    # the key names what the whole board's figure has: a marker per group with a point above 0 anywhere
    groups = [{"name": "", "weights": w, "reported": False, "accuracy": 0.0, "cost": 1.0} for w in counts["groups"]]
    groups += [{"name": "", "weights": src.weights, "reported": True, "accuracy": 0.0, "cost": 1.0}
               for src, _a, x in reported if x > 0][:1]
    view.caption = caption(replace(view, figure=figure(replace(view, points=groups))))
    if not counts["positive"] and not any(x > 0 for _s, _a, x in reported) and reported_unplotted:
        view.empty_note = _empty_note(mode, unit)
    return view, pager


def _baselines(by_name: dict[str, TabSource], mode: str, unit: str) -> list[dict[str, Any]]:
    """Oracle, Strongest and Cheapest routers over the plotted submissions' per-sample results."""
    ids = {src.submission_id: name for name, src in by_name.items()}
    if len(ids) < 2:
        return []
    correct: dict[str, list[bool]] = {}
    costs: dict[str, list[float]] = {}
    # the mode's vectors alone, extracted by the database (the entries' whole JSON was most of the tab)
    for sid, bits, text in BoardEntry.objects.filter(submission_id__in=ids).values_list(
        "submission_id", KT(f"correct__{mode}"), KT(f"{'token_counts' if unit == 'tokens' else 'costs'}__{mode}")
    ):
        if bits is None or text is None:
            continue
        if UNDECIDED_BIT in bits:  # not plotted (its accuracy is not available), so no baseline's member either
            continue
        correct[ids[sid]] = [b == "1" for b in bits]
        costs[ids[sid]] = [float(v) for v in orjson.loads(text)]
    if len(correct) < 2 or len({len(v) for v in correct.values()}) != 1:
        return []
    out = []
    for kind, p in routing_baselines(correct, costs).items():
        label = p.name
        for name, src in by_name.items():  # "Strongest (Model (#3))" reads better as "Strongest (Model)"
            label = label.replace(name, src.model_name)
        out.append({"kind": kind, "name": label, "accuracy": 100 * p.accuracy, "cost": p.cost, "n": p.n})
    return out


def _label_positions(xs: list[float]) -> list[str]:
    """Above each star; the leftmost label runs right and the rightmost runs left, so neither leaves the chart."""
    if len(xs) < 2:
        return ["top center"] * len(xs)
    lo, hi = min(xs), max(xs)
    return ["top right" if x == lo else "top left" if x == hi else "top center" for x in xs]


def figure(view: ParetoView) -> dict[str, Any]:
    """A Plotly figure (plain JSON): log cost on x, accuracy on y, frontier as a step line.

    The baselines are drawn first, as hollow stars: the Strongest and Cheapest sit exactly on a
    submission's point, which stays visible inside its star instead of hidden under it."""
    unit = UNITS[view.unit]
    hover = "%{text}<br>accuracy %{y:.1f} %<br>" + ("%{x:.3g} tokens" if view.unit == "tokens" else "$%{x:.4g}") + \
        " per sample<extra></extra>"
    traces: list[dict[str, Any]] = []
    # Baselines on the same spot (with two models the Strongest is often the Oracle too) share one star
    # and one label, instead of labels printed over each other.
    spots: dict[tuple[float, float], list[str]] = {}
    for b in view.baselines:
        if b["cost"] > 0:
            spots.setdefault((b["cost"], b["accuracy"]), []).append(b["name"])
    if spots:
        xs = [x for x, _y in spots]
        traces.append({"type": "scatter", "mode": "markers+text", "name": "Routing baselines",
                       "x": xs, "y": [y for _x, y in spots],
                       "text": [plot_text(" = ".join(names)) for names in spots.values()],
                       "textposition": _label_positions(xs), "cliponaxis": False,
                       "marker": {"symbol": "star-open", "size": 22, "line": {"width": 2}},
                       "hovertemplate": hover, "meta": {"role": "baselines"}})
    front = [p for p in view.frontier if p["cost"] > 0]
    if front:
        traces.append({"type": "scatter", "mode": "lines", "name": "Pareto frontier", "x": [p["cost"] for p in front],
                       "y": [p["accuracy"] for p in front], "text": [plot_text(p["name"]) for p in front],
                       "line": {"shape": "hv", "dash": "dot"}, "hovertemplate": hover, "meta": {"role": "frontier"}})
    groups = [(m, [p for p in view.points if not p["reported"] and (p["weights"] or "") == w]) for w, m in MARKERS.items()]
    groups.append((REPORTED_MARKER, [p for p in view.points if p["reported"]]))
    for (symbol, label, _word), pts in groups:
        pts = [p for p in pts if p["cost"] > 0]
        if pts:
            traces.append({"type": "scatter", "mode": "markers", "name": label, "x": [p["cost"] for p in pts],
                           "y": [p["accuracy"] for p in pts], "text": [plot_text(p["name"]) for p in pts],
                           "marker": {"symbol": symbol, "size": 11, "line": {"width": 1, "color": "#fff"}},
                           "hovertemplate": hover, "meta": {"role": "points"}})
    return {"data": traces, "layout": {
        # plain decimals: an SI prefix on dollars ("100μ") reads as a unit
        "xaxis": {"type": "log", "title": {"text": f"Cost ({unit}, log scale)"}, "exponentformat": "none"},
        "yaxis": {"title": {"text": f"{view.mode.capitalize()} accuracy (%)"}},
        # room above the plot for the labels of the stars at the top (drawn outside the axes)
        "legend": {"orientation": "h", "y": -0.25}, "margin": {"t": 40, "r": 30, "l": 60}, "hovermode": "closest",
    }}


def caption(view: ParetoView) -> str:
    """The figure's key in words, built from the traces it has, so it names nothing the legend lacks."""
    words = {label: word for _s, label, word in (*MARKERS.values(), REPORTED_MARKER)}
    parts, extra = [], []
    for trace in view.figure.get("data", []):
        role, name = trace["meta"]["role"], trace["name"]
        if role == "points":
            parts.append(f"{words[name]}: {name[0].lower()}{name[1:]}")
        elif role == "frontier":
            extra.append("the dotted step line is the Pareto frontier")
        elif role == "baselines":
            extra.append("hollow stars are the routing baselines (the Strongest and Cheapest sit on a model's point)")
    if not parts:
        return ""
    def sentence(items: list[str]) -> str:
        joined = "; ".join(items)
        return joined[0].upper() + joined[1:] + "."

    text = sentence(parts) + (" " + sentence(extra) if extra else "")
    return text + " Hover a point for its model and values."
