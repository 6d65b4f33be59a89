"""Public pages: the benchmarks, the leaderboard's tabs, exports, model and compare pages.

Views parse input, call selectors, render. A tab renders as the whole page, or, for an htmx
request, as the ``#board`` fragment alone; the fragment is cached per benchmark (leaderboard.cache)
and the response varies on HX-Request.
"""

from __future__ import annotations

from pathlib import Path

import plotly
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from leaderboard import cache, exports, selectors
from leaderboard.tabs import TAB_BY_SLUG, TABS, tab_context, tab_url

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    benchmarks = list(selectors.home_benchmarks())
    entries = [(b, cache.cached(b, ("leaders",), lambda b=b: selectors.leaders(b))) for b in benchmarks]
    return render(request, "leaderboard/home.html", {"entries": entries})


def _benchmark(slug: str):  # noqa: ANN202 - a Benchmark with fingerprint annotations
    benchmark = cache.benchmark_with_fingerprint(slug)
    if benchmark is None:
        raise Http404("No such benchmark")
    return benchmark


@require_GET
def board(request: HttpRequest, slug: str, tab: str = "overview") -> HttpResponse:
    if tab not in TAB_BY_SLUG:
        raise Http404("No such tab")
    benchmark = _benchmark(slug)
    params = request.GET

    def build() -> str:
        context = {"benchmark": benchmark, "tab": TAB_BY_SLUG[tab],
                   "tabs": [(t, tab_url(benchmark, t.slug)) for t in TABS], **tab_context(benchmark, tab, params)}
        return render_to_string("leaderboard/_board.html", context)

    fragment = cache.cached(benchmark, ("tab", tab, sorted(params.lists())), build)
    if request.htmx:
        response = HttpResponse(fragment)
    else:
        response = render(request, "leaderboard/board.html", {
            "benchmark": benchmark, "tab": TAB_BY_SLUG[tab], "fragment": mark_safe(fragment),  # noqa: S308 - our render
        })
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_GET
def export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    benchmark = _benchmark(slug)
    rows = selectors.board_rows(benchmark)
    if fmt == "csv":
        response = HttpResponse(exports.rows_csv(rows), content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse(exports.rows_json(benchmark, rows), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-leaderboard.{fmt}"'
    return response


@require_GET
def plotly_js(request: HttpRequest) -> FileResponse:
    """plotly.js from the plotly package, so no CDN is needed; cached by browsers for a day."""
    response = FileResponse(PLOTLY_JS.open("rb"), content_type="application/javascript")
    patch_cache_control(response, public=True, max_age=86400)
    return response
