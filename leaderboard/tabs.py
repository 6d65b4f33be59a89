"""The leaderboard's tabs: their names, URLs and the context each one renders with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict
from django.urls import reverse

from annotation.models import Benchmark
from evaluation.judges.base import PROMPT_VERSIONS
from leaderboard import board, selectors
from leaderboard.agentx_tab import agentx_context, shows_agentx
from leaderboard.figures import plot_text
from leaderboard.guessable import guessability_context
from leaderboard.pareto import UNITS, pareto_view
from leaderboard.progress import GROUP_LABELS, progress_figure, progress_rows
from leaderboard.routers_tab import ROUTERS_PARAMS, routers_context
from evaluation.metrics.types import BOARD_MODES as MODES
from leaderboard.templatetags.leaderboard_tags import overview_body
from routers.selectors import router_board


@dataclass(frozen=True, slots=True)
class Tab:
    slug: str
    label: str
    template: str
    params: tuple[str, ...] = ()  # the query-string parameters its context reads; the cache key has no other
    kind: str = "board"  # the derived kind it shows (evaluation/derived.py): its build keys the cache


COST_PARAMS = ("mode", "unit")


TABS: tuple[Tab, ...] = (
    Tab("overview", "Overview", "leaderboard/tabs/overview.html", params=board.QUERY_PARAMS),
    Tab("domains", "Accuracy by domain", "leaderboard/tabs/domains.html"),
    Tab("mode-selection", "Mode selection", "leaderboard/tabs/mode_selection.html"),
    Tab("process", "Reasoning process", "leaderboard/tabs/process.html"),
    Tab("toolchains", "Toolchains", "leaderboard/tabs/toolchains.html"),
    Tab("cost", "Cost & Pareto", "leaderboard/tabs/cost.html", params=COST_PARAMS),
    Tab("progress", "Progress over time", "leaderboard/tabs/progress.html"),
    Tab("routers", "Routers", "leaderboard/tabs/routers.html", params=ROUTERS_PARAMS, kind="routers"),
    Tab("guessability", "Guessability", "leaderboard/tabs/guessability.html", kind="guessability"),
    Tab("agentx", "Agent-X", "leaderboard/tabs/agentx.html", kind="agentx"),
)
TAB_BY_SLUG = {t.slug: t for t in TABS}
# Tabs only a benchmark declaring the figure set in its manifest has (benchmark.figures).
OPTIONAL_TABS = {"agentx": shows_agentx}


def tabs_for(benchmark: Benchmark) -> list[Tab]:
    """Every tab this benchmark can have (the optional ones where its manifest declares them): each URL answers."""
    return [t for t in TABS if t.slug not in OPTIONAL_TABS or OPTIONAL_TABS[t.slug](benchmark)]


def tabs_with_data(benchmark: Benchmark) -> list[Tab]:
    """The tabs the navigation offers: those with something to show from the last builds (a tab without is
    an empty state, still answering at its URL). A few small queries; the board view caches the answer under
    its builds' key; the counts are the board build's (services.board_refresh), and it only reads."""
    n = selectors.figures_present_built(benchmark)
    entries = n["entries"] > 0

    def has(slug: str) -> bool:
        if slug in ("overview", "domains"):
            return entries or n.get("reported_accuracy", 0) > 0
        if slug == "mode-selection":
            return n["mcc"] > 0 or n.get("reported_mode_selection", 0) > 0
        if slug == "process":
            return n["adaptive"] > 0 or n.get("reported_process", 0) > 0
        if slug == "toolchains":  # its figures need tool calls: adaptive ones (tool effectiveness) or the oracle's
            return n["tool_eff"] > 0 or n["oracle"] > 0
        if slug == "cost":
            return n["cost"] > 0 or n["tokens"] > 0 or n.get("reported_tokens", 0) > 0
        if slug == "progress":  # reported rows carry no date
            return entries
        if slug == "guessability":
            return bool(guessability_context(benchmark)["audited"])
        if slug == "routers":
            found = router_board(benchmark)
            return bool(found.rows or found.reported)
        if slug == "agentx":
            return entries or n.get("reported_agentx", 0) > 0
        return True

    return [t for t in tabs_for(benchmark) if has(t.slug)]


def known_params(tab: Tab, params: QueryDict) -> QueryDict:
    """The query-string parameters ``tab`` reads, the others dropped: its page is built from these and
    cached by them, so an unknown parameter (``?x=<random>``) can neither change the page nor turn every
    request into a cache miss."""
    out = QueryDict(mutable=True)
    for k in tab.params:
        if k in params:
            out.setlist(k, params.getlist(k))
    return out


def tab_url(benchmark: Benchmark, tab: str, params: dict[str, str] | None = None) -> str:
    url = reverse("leaderboard:board", args=[benchmark.slug]) if tab == "overview" else reverse(
        "leaderboard:tab", args=[benchmark.slug, tab])
    return f"{url}?{urlencode(params)}" if params else url


def page_window(current: int, pages: int, around: int = 2) -> list[int]:
    """Page links to show: the first, the last and ``around`` either side of the current one, 0 for a gap.

    A link per page made the page (cached or not) grow with the board: 200 links at 10,000 entries."""
    keep = sorted({1, pages, *range(max(1, current - around), min(pages, current + around) + 1)})
    out: list[int] = []
    for n in keep:
        if out and n > out[-1] + 1:
            out.append(0)
        out.append(n)
    return out


def overview_context(benchmark: Benchmark, params: Any) -> dict[str, Any]:
    query = board.Query.parse(params)
    page = selectors.overview(benchmark, query)
    base = tab_url(benchmark, "overview")  # reversed once; the 13 headers and up to 20 page links add a query string
    model_base = reverse("leaderboard:model", args=[benchmark.slug, 0])[:-2]  # ".../m/"; 50 reverse() calls cost ~1 ms

    def url(p: dict[str, str]) -> str:
        return f"{base}?{urlencode(p)}" if p else base

    headers = []
    for col in board.COLUMNS:
        active = query.sort == col.key
        default_desc = col.better != "lower" and col.better is not None
        desc = (not query.desc) if active else default_desc
        headers.append({
            "column": col, "active": active, "desc": query.desc if active else None,
            "url": url(query.params(sort=col.key, desc=desc, page=1)),
            "aria_sort": ("descending" if query.desc else "ascending") if active else "none",
        })
    pages = [{"number": n, "url": url(query.params(page=n)), "current": n == page.number} if n else {"gap": True}
             for n in page_window(page.number, page.pages)] if page.pages > 1 else []
    tested = query.sort in board.TESTED
    ranked = tested and query.as_of is None  # whole-board ranks are today's (as of a date: positions)
    return {"query": query, "page": page, "headers": headers, "pages": pages,
            "body": overview_body(page.rows, lambda pk: f"{model_base}{pk}/", ranked),
            "tested": tested, "ranked": ranked,
            "filter_url": base, "sizes": board.SIZES,
            "current_url": url(query.params(as_of=None, page=1)),  # the same view, today
            "any_reported": any(r.reported for r in page.rows),
            # A rank score of 0 reads as a fault; the line under the table says why (the dearest row's cost is the bound).
            "zero_rank": [r.model_name for r in page.rows if r.rank_score == 0]}


def tab_context(benchmark: Benchmark, tab: str, params: Any) -> dict[str, Any]:
    if tab == "overview":
        return overview_context(benchmark, params)
    if tab == "routers":
        return routers_context(benchmark, params)
    if tab == "progress":
        rows = progress_rows(selectors.progress_points(benchmark))
        return {"rows": rows, "chart": progress_figure(rows), "group_labels": GROUP_LABELS,
                "split": any(r.group != "all" for r in rows)}
    sources = selectors.tab_sources(benchmark)
    if tab == "domains":
        domains, rows = selectors.domain_table(benchmark, sources)
        return {"domains": domains, "rows": rows, "aux": selectors.aux_table(sources), "modes": MODES}
    if tab == "mode-selection":
        rows = selectors.mode_selection(sources)
        chart = {"data": [{"type": "bar", "orientation": "h", "y": [plot_text(r.source.model_name) for r in rows][::-1],
                           "x": [r.mcc.value for r in rows][::-1],
                           "error_x": {"type": "data", "symmetric": False,
                                       "array": [(r.mcc.hi - r.mcc.value) if r.mcc.hi is not None else 0
                                                 for r in rows][::-1],
                                       "arrayminus": [(r.mcc.value - r.mcc.lo) if r.mcc.lo is not None else 0
                                                      for r in rows][::-1]},
                           "hovertemplate": "%{y}: MCC %{x:.3f}<extra></extra>", "meta": {"role": "mcc"}}],
                 "layout": {"xaxis": {"title": {"text": "MCC (95 % interval)"}, "range": [-1, 1]},
                            "margin": {"l": 200, "t": 10}, "height": 120 + 28 * len(rows)}}
        return {"rows": rows, "chart": chart}
    if tab == "process":
        columns = selectors.process_columns(benchmark.figures)
        mmreason = columns is not selectors.PROCESS_COLUMNS
        return {"rows": selectors.process_table(sources, columns), "columns": columns,
                "step_prompt": f"step_scores {PROMPT_VERSIONS['step_scores']}" if mmreason else None}
    if tab == "toolchains":
        return {"rows": selectors.toolchain_table(sources), "columns": selectors.TOOLCHAIN_COLUMNS}
    if tab == "agentx":
        return agentx_context(benchmark)
    if tab == "guessability":
        return guessability_context(benchmark)
    if tab == "cost":
        mode = params.get("mode", "adaptive")  # the parameters read here are COST_PARAMS
        mode = mode if mode in MODES else "adaptive"
        unit = params.get("unit", "")
        view = pareto_view(sources, mode, unit if unit in UNITS else "usd")
        if unit not in UNITS and not view.points:  # nothing in dollars (the authors' rows give tokens): open on tokens
            tokens = pareto_view(sources, mode, "tokens")
            view = tokens if tokens.points else view
        unit = view.unit
        return {"pareto": view, "modes": MODES, "units": UNITS, "mode": mode, "unit": unit,
                "request_path": tab_url(benchmark, "cost")}
    raise KeyError(tab)
