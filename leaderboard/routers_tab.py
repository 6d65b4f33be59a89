"""The Routers tab: routers, baselines and candidate models in one sortable table, and the
accuracy-cost chart (log cost) with the frontier and Oracle. The rows are ``routers.selectors``'."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from annotation.models import Benchmark
from leaderboard.figures import p_text, plot_text
from leaderboard.paging import page_rows
from routers.selectors import KINDS, neighbour_tests, router_board

SORTS = {  # key: (label, row value, higher is better)
    "rank": ("Rank score", lambda r: r.figures["rank_score"], True),
    "accuracy": ("Accuracy %", lambda r: r.figures["accuracy"]["value"], True),
    "cost": ("$ per 10K samples", lambda r: r.figures["cost_per_10k_usd"], False),
    "gap": ("Gap to Oracle (accuracy points)", lambda r: r.figures["oracle_gap"]["accuracy"], False),
    "name": ("Name", lambda r: r.name.lower(), False),
}
MARKERS = {"router": ("circle", "Routers"), "baseline": ("star", "Baselines"), "model": ("square", "Candidate models")}


ROUTERS_PARAMS = ("sort", "desc", "page")  # what routers_context reads


def routers_context(benchmark: Benchmark, params: Any) -> dict[str, Any]:
    """The table shows 50 rows a page (``page_rows``), the chart those and the frontier's."""
    board = router_board(benchmark)
    sort = params.get("sort", "rank")
    sort = sort if sort in SORTS else "rank"
    desc = params.get("desc", "1" if SORTS[sort][2] else "0") == "1"
    key = SORTS[sort][1]
    known = [r for r in board.rows if key(r) is not None]
    rows = sorted(known, key=key, reverse=desc) + [r for r in board.rows if key(r) is None]
    base = reverse("leaderboard:tab", args=[benchmark.slug, "routers"])
    headers = [{"key": k, "label": label, "active": k == sort,
                "url": f"{base}?" + urlencode({"sort": k, "desc": "0" if (k == sort and desc) else "1" if k == sort
                                               else ("1" if hi else "0")}),
                "aria_sort": ("descending" if desc else "ascending") if k == sort else "none"}
               for k, (label, _, hi) in SORTS.items()]
    slug = benchmark.slug
    tests = neighbour_tests(rows)  # each row against the one above it on the whole board, then paged
    pairs, pager = page_rows(list(zip(rows, tests)), params, base)
    router_rows = [{"row": r, **display(r), "vs_above": _test_text(t)} for r, t in pairs]
    shown = [r for r, _ in pairs]
    ids = {id(r) for r in shown}
    plotted = shown + [r for r in board.rows if r.on_frontier and id(r) not in ids]
    return {"routers": board, "router_rows": router_rows, **pager,
            "router_headers": {h["key"]: h for h in headers}, "kinds": KINDS,
            "router_chart": figure(plotted),
            "router_downloads": {s: reverse("routers:matrix_csv", args=[slug, s]) for s in ("train", "dev", "test")},
            "router_submit_url": reverse("routers:submit", args=[slug]),
            "router_page_base": reverse("routers:page", args=[slug, 0])[:-2]}


def _money(v: float | None) -> str:
    if v is None:
        return "–"
    return f"${v:,.2f}" if abs(v) >= 1 else f"${v:.3g}"


def _test_text(t: Any) -> str:  # t: evaluation.metrics.stats.PairedTest or None
    if t is None:
        return ""
    sign = "+" if t.statistic >= 0 else "−"
    return f"{sign}{abs(100 * t.statistic):.1f} pts, {p_text(t.p_value)}{' (significant)' if t.significant else ''}"


def display(r: Any) -> dict[str, str]:  # r: routers.selectors.BoardRow
    f = r.figures
    a = f["accuracy"]
    acc = f"{100 * a['value']:.1f}"
    if a["low"] is not None:
        acc += f" [{100 * a['low']:.1f}, {100 * a['high']:.1f}]"
    gap = f["oracle_gap"]
    return {"accuracy": acc, "cost": _money(f["cost_per_10k_usd"]),
            "rank": "–" if f["rank_score"] is None else f"{100 * f['rank_score']:.1f}",
            "gap": f"{100 * gap['accuracy']:.1f} pts, "
                   f"{'+' if gap['cost_usd'] >= 0 else '−'}{_money(abs(gap['cost_usd']) * 10_000)} per 10K"}


def figure(rows: list) -> dict[str, Any]:  # rows: routers.selectors.BoardRow
    hover = "%{text}<br>accuracy %{y:.1f} %<br>$%{x:.4g} per sample<extra></extra>"
    traces: list[dict[str, Any]] = []
    for kind, (symbol, label) in MARKERS.items():
        pts = [r for r in rows if r.kind == kind and r.figures["cost_per_sample_usd"]["value"] > 0]
        if pts:
            traces.append({"type": "scatter", "mode": "markers", "name": label,
                           "x": [r.figures["cost_per_sample_usd"]["value"] for r in pts],
                           "y": [100 * r.figures["accuracy"]["value"] for r in pts],
                           "text": [plot_text(r.name) for r in pts], "marker": {"symbol": symbol, "size": 11},
                           "hovertemplate": hover, "meta": {"role": kind}})
    front = sorted((r for r in rows if r.on_frontier and r.figures["cost_per_sample_usd"]["value"] > 0),
                   key=lambda r: r.figures["cost_per_sample_usd"]["value"])
    if front:
        traces.append({"type": "scatter", "mode": "lines", "name": "Frontier",
                       "x": [r.figures["cost_per_sample_usd"]["value"] for r in front],
                       "y": [100 * r.figures["accuracy"]["value"] for r in front],
                       "text": [plot_text(r.name) for r in front], "line": {"shape": "hv", "dash": "dot"},
                       "hovertemplate": hover, "meta": {"role": "frontier"}})
    return {"data": traces, "layout": {
        "xaxis": {"type": "log", "title": {"text": "Cost ($ per sample, log scale)"}},
        "yaxis": {"title": {"text": "Accuracy on the router test split (%)"}},
        "legend": {"orientation": "h", "y": -0.25}, "margin": {"t": 20, "r": 10}, "hovermode": "closest"}}
