"""Public pages: the benchmarks, the leaderboard's tabs, exports, model and compare pages.

Views parse input, call selectors, render. A tab renders as the whole page, or, for an htmx
request, as the ``#board`` fragment alone; the fragment is cached per benchmark (leaderboard.cache)
and the response varies on HX-Request.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

import orjson

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.middleware.csrf import get_token
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from annotation.models import Benchmark
from annotation.selectors import benchmark_scorable
from evaluation.derived import derived_read
from evaluation.metrics import PROFILE_NOTES
from config.csvw import CONTENT_TYPE as CSVW_CONTENT_TYPE, link_header
from leaderboard import cache, csv_metadata, exports, selectors
from routers.selectors import routers_stamp
from leaderboard.board import Page as BoardPage
from leaderboard.tabs import (TAB_BY_SLUG, builds_stamp, known_params, overview_shown, tab_context, tab_url,
                              tabs_for, tabs_offered)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    benchmarks = list(selectors.home_benchmarks())
    entries = [(b, cache.cached(b, ("leaders", _built(b)), lambda b=b: selectors.leaders(b))) for b in benchmarks]
    # A board of reported figures without an accuracy (Agent-X's) shows its reported leaders by goal accuracy.
    goal = {b.pk: cache.cached(b, ("goal-leaders", _built(b)), lambda b=b: selectors.reported_goal_leaders(b))
            for b, leaders in entries if not leaders and not b.sample_count}
    return render(request, "leaderboard/home.html", {"entries": [(b, rows, goal.get(b.pk)) for b, rows in entries]})


def _built(benchmark: Benchmark) -> float:
    """When the board's last build was made (a cache key's part: leaders cached while it was behind go)."""
    built_at = selectors.board_build(benchmark).built_at
    return built_at.timestamp() if built_at else 0.0


def _benchmark(slug: str) -> Benchmark:
    benchmark = cache.benchmark_for_page(slug)
    if benchmark is None:
        raise Http404("No such benchmark")
    return benchmark


# Stands for the visitor's CSRF token in a whole page cached for anonymous visitors.
CSRF_SLOT = "lb-csrf-token-slot-5c0e"


def _anonymous(request: HttpRequest) -> bool:
    """A visitor without a session or pending messages: ``base.html`` around the fragment (the signed-in
    user, messages) is then the same for all of them but for the CSRF token, so the whole page is cached
    with a slot for it (rendering it per request cost a third of a cached request)."""
    return settings.SESSION_COOKIE_NAME not in request.COOKIES and CookieStorage.cookie_name not in request.COOKIES


@require_GET
def board(request: HttpRequest, slug: str, tab: str = "overview") -> HttpResponse:
    if tab not in TAB_BY_SLUG:
        raise Http404("No such tab")
    benchmark = _benchmark(slug)
    if TAB_BY_SLUG[tab] not in tabs_for(benchmark):
        raise Http404("This benchmark has no such tab")
    stamp = builds_stamp(benchmark)
    offered = tabs_offered(benchmark)
    if (tab == "overview" and offered and "overview" not in offered and request.resolver_match.url_name == "board"
            and not cache.updating(benchmark, "board")):
        # A board of reported figures alone (Agent-X's) opens on the tab that holds them. Not while the board's
        # build is behind: its rows may be on their way (a first publish whose router pool was built before the
        # board), and the overview then says it is updating rather than a router tab standing in for it.
        tab = offered[0]
    tabs = [t for t in tabs_for(benchmark) if t.slug in offered or t.slug == tab]
    params = known_params(TAB_BY_SLUG[tab], request.GET)
    # The tab shows its kind's last build (never built here); the key carries every build, so a page
    # cached while a refresh was behind ("updating") is replaced once it has run.
    kind = TAB_BY_SLUG[tab].kind

    shown: list[BoardPage] = []  # the overview's page as it reads now (overview_shown), once computed

    def build() -> str:
        updating = cache.updating(benchmark, kind)
        context = {"benchmark": benchmark, "tab": TAB_BY_SLUG[tab], "updating": updating,
                   # shown only while the build is behind ("Updating: these figures are as of ...")
                   "built_at": derived_read(benchmark, kind, payload=False).built_at if updating else None,
                   "tabs": [(t, tab_url(benchmark, t.slug)) for t in tabs],
                   **tab_context(benchmark, tab, params, overview=shown[0] if shown else None)}
        return render_to_string("leaderboard/_board.html", context)

    if tab == "routers":
        stamp.append(routers_stamp(benchmark))
    variant = (tab, sorted(params.lists()), stamp)

    def cached(parts: tuple, render: Callable[[], str]) -> str:
        """``parts``' HTML, cached by the results version. The overview's, on a miss (the first read after a
        change), is looked up by its build and what its page shows now before it is rendered: a change that
        leaves the page's rows as they were (most do: another page's row, a publish the build has not got)
        costs one query by primary key and no rendering."""
        if tab != "overview":
            return cache.cached(benchmark, parts, render)

        def by_shown() -> str:
            if not shown:
                shown.append(overview_shown(benchmark, params))
            # the builds (in the parts: the build's page for these parameters), whether the board's is behind (the
            # "Updating" notice), the submissions' columns as read now (``Page.now``: what overview_now changed of it)
            return cache.cached(benchmark, (*parts, cache.updating(benchmark, "board"), shown[0].now), render,
                                versioned=False)

        return cache.cached(benchmark, parts, by_shown)

    def fragment() -> str:
        return cached(("tab", *variant), build)

    if request.htmx:
        response = HttpResponse(fragment())
    else:
        def page(**extra: str) -> dict:
            return {"benchmark": benchmark, "tab": TAB_BY_SLUG[tab], "fragment": mark_safe(fragment()),  # noqa: S308
                    "submit_url": _submit_url(benchmark), "scoring_note": PROFILE_NOTES.get(benchmark.scoring, ""),
                    **extra}

        if _anonymous(request):
            html = cached(("page", *variant), lambda: render_to_string(
                "leaderboard/board.html", page(csrf_token=CSRF_SLOT), request=request))
            response = HttpResponse(html.replace(CSRF_SLOT, get_token(request)))
        else:
            response = render(request, "leaderboard/board.html", page())
    patch_vary_headers(response, ["HX-Request"])
    return response


def _submit_url(benchmark: Benchmark) -> str | None:
    """The upload form with this benchmark chosen; none for a results-only entry (nothing to score on)."""
    if not benchmark_scorable(benchmark):
        return None
    return f"{reverse('evaluation:new')}?{urlencode({'benchmark': benchmark.slug})}"


@require_GET
def export_csv_metadata(request: HttpRequest, slug: str) -> HttpResponse:
    """leaderboard.csv's CSVW metadata (each column's title, datatype and unit), where a CSVW processor looks."""
    benchmark = _benchmark(slug)
    return HttpResponse(orjson.dumps(csv_metadata.leaderboard_metadata(benchmark), option=orjson.OPT_INDENT_2),
                        content_type=CSVW_CONTENT_TYPE)


@require_GET
def export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    benchmark = _benchmark(slug)
    rows, standings = selectors.board_rows(benchmark), selectors.standings(benchmark)
    if fmt == "csv":
        response = HttpResponse(exports.rows_csv(rows, standings, exports.agentx_figures(benchmark),
                                                 scoring=benchmark.scoring, tools=exports.tools_tab.tool_figures(benchmark),
                                                 authors=exports.authors_figures(benchmark)),
                                content_type="text/csv; charset=utf-8")
        response["Link"] = link_header(reverse("leaderboard:export_csv_metadata", args=[slug]))  # its units (CSVW)
    else:
        response = HttpResponse(exports.rows_json(benchmark, rows, standings), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-leaderboard.{fmt}"'
    return response
