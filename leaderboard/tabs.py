"""The leaderboard's tabs: their names, URLs and the context each one renders with."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict
from django.urls import reverse

from annotation.models import Benchmark
from evaluation.judges.base import PROMPT_VERSIONS
from leaderboard import board, cache, selectors
from leaderboard.agentx_tab import agentx_context, shows_agentx
from leaderboard.figures import plot_text
from leaderboard.paging import page_number, page_rows, page_window
from leaderboard.guessable import guessability_audited, guessability_context
from leaderboard.pareto import UNITS, ParetoView, figure as pareto_figure, pareto_view, stored_page
from leaderboard.progress import GROUP_LABELS, progress_figure
from leaderboard.progress_store import progress_rows_now
from leaderboard.routers_tab import ROUTERS_PARAMS, routers_context
from evaluation.metrics.types import BOARD_MODES as MODES
from leaderboard.templatetags.leaderboard_tags import overview_body
from leaderboard.tools_tab import SORT_PARAMS as TOOLS_PARAMS, headers as tools_headers
from leaderboard.wide_tabs import INDEXED, table_page
from routers.selectors import router_board_shows


@dataclass(frozen=True, slots=True)
class Tab:
    slug: str
    label: str
    template: str
    params: tuple[str, ...] = ()  # the query-string parameters its context reads; the cache key has no other
    kind: str = "board"  # the derived kind it shows (evaluation/derived.py): its build keys the cache


PAGE = ("page",)  # the wide tabs' one parameter: which 50 rows (page_rows)
COST_PARAMS = ("mode", "unit", *PAGE)


TABS: tuple[Tab, ...] = (
    Tab("overview", "Overview", "leaderboard/tabs/overview.html", params=board.QUERY_PARAMS),
    Tab("domains", "Accuracy by domain", "leaderboard/tabs/domains.html", params=PAGE),
    Tab("mode-selection", "Mode selection", "leaderboard/tabs/mode_selection.html", params=PAGE),
    Tab("process", "Reasoning process", "leaderboard/tabs/process.html", params=PAGE),
    Tab("toolchains", "Toolchains", "leaderboard/tabs/toolchains.html", params=PAGE),
    Tab("tools", "Tools", "leaderboard/tabs/tools.html", params=TOOLS_PARAMS),
    Tab("cost", "Cost & Pareto", "leaderboard/tabs/cost.html", params=COST_PARAMS),
    Tab("progress", "Progress over time", "leaderboard/tabs/progress.html"),
    Tab("routers", "Routers", "leaderboard/tabs/routers.html", params=ROUTERS_PARAMS, kind="routers"),
    Tab("guessability", "Guessability", "leaderboard/tabs/guessability.html", kind="guessability"),
    Tab("agentx", "Agent-X", "leaderboard/tabs/agentx.html", params=PAGE, kind="agentx"),
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
        if slug == "tools":  # an entry with both text and adaptive lines (the refresh's index has its row)
            if "tools_rows" in n:  # counted by the build (BoardCounts), not read from its index
                return n["tools_rows"] > 0
            return bool((selectors.board_table_index(benchmark, "tools") or {}).get("count"))
        if slug == "cost":
            return n["cost"] > 0 or n["tokens"] > 0 or n.get("reported_tokens", 0) > 0
        if slug == "progress":  # reported rows carry no date
            return entries
        if slug == "guessability":
            return guessability_audited(benchmark) > 0
        if slug == "routers":
            return router_board_shows(benchmark)
        if slug == "agentx":
            return entries or n.get("reported_agentx", 0) > 0
        return True

    return [t for t in tabs_for(benchmark) if has(t.slug)]


def builds_stamp(benchmark: Benchmark) -> list[tuple[str, str]]:
    """Every derived kind's last build, as the board's cache keys carry them (``cache.benchmark_for_page``)."""
    return sorted((k, str(v)) for k, v in benchmark.page_builds.items())


def tabs_offered(benchmark: Benchmark) -> list[str]:
    """The slugs of ``tabs_with_data``, computed once per set of builds (a few small queries, the router pool's
    payload among them) and cached by them; the board's refresh task computes them for its new build."""
    return cache.cached(benchmark, ("tabs", builds_stamp(benchmark)),
                        lambda: [t.slug for t in tabs_with_data(benchmark)], versioned=False)


def known_params(tab: Tab, params: QueryDict) -> QueryDict:
    """The query-string parameters ``tab`` reads, the others dropped: its page is built from these and
    cached by them, so an unknown parameter (``?x=<random>``) can neither change the page nor turn every
    request into a cache miss."""
    out = QueryDict(mutable=True)
    for k in tab.params:
        if k in params:
            out.setlist(k, params.getlist(k))
    if "page" in out:  # one key per page: "?page=02", "?page=x" and "?page=1" are pages 2, 1 and 1
        number = page_number(out)
        if number > 1:
            out.setlist("page", [str(number)])
        else:
            del out["page"]
    return out


def tab_url(benchmark: Benchmark, tab: str, params: dict[str, str] | None = None) -> str:
    url = reverse("leaderboard:board", args=[benchmark.slug]) if tab == "overview" else reverse(
        "leaderboard:tab", args=[benchmark.slug, tab])
    return f"{url}?{urlencode(params)}" if params else url


def overview_page(benchmark: Benchmark, query: board.Query) -> board.Page:
    """The overview's page for ``query`` as the board's last build gives it: sorted, paged, ranked and
    tested by the database and the stored standings once per build and query, and cached by the build,
    not by the results version, so a read just after a change (a publish, an unpublish) finds it."""
    return cache.cached(benchmark, ("overview", cache.build_of(benchmark, "board"), repr(query)),
                        lambda: selectors.overview(benchmark, query), versioned=False)


def overview_warm(benchmark_id: int) -> None:
    """Compute the overview's default page of the board's new build, and the tabs offered, into the cache: the
    board's refresh task calls it once the build is saved, so the first visitor after the next change does not sort the board
    (where the cache is shared with the web server's processes: Redis; a local memory cache is not)."""
    slug = Benchmark.objects.filter(pk=benchmark_id).values_list("slug", flat=True).first()
    benchmark = cache.benchmark_for_page(slug) if slug is not None else None
    if benchmark is not None:
        overview_page(benchmark, board.Query.parse({}))
        tabs_offered(benchmark)


def overview_shown(benchmark: Benchmark, params: Any) -> board.Page:
    """The build's page for these parameters, with what must hold at once applied now: rows that left the
    board go, the submissions' names and filters are read again (one query)."""
    query = board.Query.parse(params)
    return selectors.overview_now(overview_page(benchmark, query), query)


def overview_context(benchmark: Benchmark, params: Any, page: board.Page | None = None) -> dict[str, Any]:
    """The overview's context; ``page``: ``overview_shown``'s, when the caller has it already."""
    query = board.Query.parse(params)
    page = page if page is not None else overview_shown(benchmark, params)
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


def cost_parts(mode: str) -> tuple[tuple[str, ...], ...]:
    """What the Cost & Pareto tab reads of one mode (leaderboard.pareto: accuracy, cost, tokens)."""
    return (("modes", mode, "accuracy", "overall"), ("modes", mode, "cost", "mean_cost_usd"),
            ("modes", mode, "process", "mean_tokens"))


def _cost_choice(params: Any) -> tuple[str, str]:
    mode = params.get("mode", "adaptive")  # the parameters read here are COST_PARAMS
    unit = params.get("unit", "usd")
    return (mode if mode in MODES else "adaptive"), (unit if unit in UNITS else "usd")


def _cost_computed(benchmark: Benchmark, mode: str, unit: str, params: Any, base: str) -> tuple[ParetoView, dict]:
    """The Cost & Pareto page computed from every public row's results: a board built before the refresh
    stored the tab's figures (pareto_store) is read this way until its next build."""
    sources = selectors.tab_sources(benchmark, cost_parts(mode), domain_table=False)
    view = pareto_view(sources, mode, unit)
    if "unit" not in params and not view.points:  # nothing in dollars (the authors' rows give tokens): open on tokens
        tokens = pareto_view(sources, mode, "tokens")
        view = tokens if tokens.points else view
    points, pager = page_rows(view.points, params, base)
    if pager["pages"]:  # the chart plots the page's points (with the whole board's frontier and baselines)
        view.figure = pareto_figure(replace(view, points=points))
    view.points = points
    return view, pager


def tab_context(benchmark: Benchmark, tab: str, params: Any, overview: board.Page | None = None) -> dict[str, Any]:
    if tab == "overview":
        return overview_context(benchmark, params, overview)
    if tab == "routers":
        return routers_context(benchmark, params)
    if tab == "progress":
        rows = progress_rows_now(benchmark)  # stored by the board's build (progress_store), or counted while behind
        return {"rows": rows, "chart": progress_figure(rows), "group_labels": GROUP_LABELS,
                "split": any(r.group != "all" for r in rows)}
    if tab == "agentx":
        context = agentx_context(benchmark)
        context["rows"], pager = page_rows(context["rows"], params, tab_url(benchmark, tab))
        return {**context, **pager}
    if tab == "guessability":
        return guessability_context(benchmark)
    base = tab_url(benchmark, tab)
    if tab in INDEXED:  # a page computes its own rows, from the board build's index (leaderboard.wide_tabs)
        rows, pager, sources = table_page(benchmark, tab, params, base)
    if tab == "domains":
        keys = {r.source.key for r in rows}  # the auxiliary table: the page's models
        return {"domains": selectors.domains_of(benchmark), "rows": rows, **pager, "modes": MODES,
                "aux": [a for a in selectors.aux_table(sources) if a[0].key in keys]}
    if tab == "mode-selection":
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
        return {"rows": rows, **pager, "chart": chart}
    if tab == "process":
        columns = selectors.process_columns(benchmark.figures)
        mmreason = columns is not selectors.PROCESS_COLUMNS
        return {"rows": rows, **pager, "columns": columns,
                "step_prompt": f"step_scores {PROMPT_VERSIONS['step_scores']}" if mmreason else None}
    if tab == "toolchains":
        return {"rows": rows, **pager, "columns": selectors.TOOLCHAIN_COLUMNS}
    if tab == "tools":
        return {"rows": rows, **pager, "headers": tools_headers(params, base)}
    if tab == "cost":
        mode, unit = _cost_choice(params)
        found = stored_page(benchmark, mode, unit, params, base)
        if found is not None and "unit" not in params and not found[0].points:
            tokens = stored_page(benchmark, mode, "tokens", params, base)  # nothing in dollars: open on tokens
            found = tokens if tokens is not None and tokens[0].points else found
        view, pager = found if found is not None else _cost_computed(benchmark, mode, unit, params, base)
        return {"pareto": view, **pager, "modes": MODES, "units": UNITS, "mode": mode, "unit": view.unit,
                "request_path": tab_url(benchmark, "cost")}
    raise KeyError(tab)
