"""Public pages and downloads of the router track (docs/routers.md). Thin: parse, call, render."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotation.models import Benchmark, Sample
from config.csvw import CONTENT_TYPE as CSVW_CONTENT_TYPE, link_header
from evaluation.metrics.routing import SPLITS
from routers import exports, services
from routers.forms import RouterForm
from routers.models import RouterSubmission
from routers.pool import pool_load
from routers import selectors
from routers.selectors import router_board


@require_GET
def sample_image(request: HttpRequest, slug: str, pk: int) -> FileResponse:
    """A pool sample's image (the matrices' ``image_url``); the image only, never its answer."""
    sample = get_object_or_404(Sample.objects.select_related("benchmark"), pk=pk, benchmark__slug=slug, aux_line=False)
    if not sample.image:
        raise Http404("No image")
    return FileResponse(sample.image.open("rb"))


@require_GET
def matrix(request: HttpRequest, slug: str, split: str, fmt: str) -> HttpResponse:
    if split not in SPLITS:
        raise Http404("No such split")
    benchmark = get_object_or_404(Benchmark, slug=slug)
    data = pool_load(benchmark, ensure=False)  # a read: the pool's refresh creates the track and its split
    if data is None:
        response = HttpResponse("The router pool of this benchmark is being prepared; try again in a minute.",
                                status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = "60"
        return response
    name = f"{slug}-routers-{split}.{fmt}"
    if fmt == "parquet":
        response = HttpResponse(exports.matrix_parquet(data, split, request.build_absolute_uri),
                                content_type="application/vnd.apache.parquet")
    else:
        response = HttpResponse(exports.matrix_csv(data, split, request.build_absolute_uri),
                                content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
def board_csv_metadata(request: HttpRequest, slug: str) -> HttpResponse:
    """routers.csv's CSVW metadata (each column's title, datatype and unit), where a CSVW processor looks for it."""
    get_object_or_404(Benchmark, slug=slug)
    return HttpResponse(json.dumps(exports.board_metadata(slug), indent=2), content_type=CSVW_CONTENT_TYPE)


def board_export(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    board = router_board(benchmark)
    if fmt == "csv":
        response = HttpResponse(exports.board_csv(board), content_type="text/csv; charset=utf-8")
        response["Link"] = link_header(reverse("routers:routers_csv_metadata", args=[slug]))  # its units (CSVW)
    else:
        response = JsonResponse(exports.board_json(slug, board))
    response["Content-Disposition"] = f'attachment; filename="{slug}-routers.{fmt}"'
    return response


@login_required
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    """The web upload of a router (kind=router); the page lists the visitor's routers on this benchmark."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    form = RouterForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        v = form.cleaned_data
        try:
            services.router_submission_create(benchmark=benchmark, owner=request.user, file=v["file"], name=v["name"],
                                              description=v["description"], is_public=v["is_public"])
        except services.RouterRejected as exc:
            form.add_error("file", exc.message)
        else:
            messages.success(request, f"Router “{v['name']}” received; it is scored in the background.")
            return redirect("routers:submit", slug=slug)
    return _submit_page(request, benchmark, form)


def _submit_page(request: HttpRequest, benchmark: Benchmark, form: RouterForm, status: int = 200,
                 upload_error: str = "") -> HttpResponse:
    mine = RouterSubmission.objects.filter(benchmark=benchmark, owner=request.user).order_by("-created_at")[:50]
    return render(request, "routers/submit.html", {
        "benchmark": benchmark, "form": form, "mine": mine, "upload_error": upload_error,
        "tab_url": reverse("leaderboard:tab", args=[benchmark.slug, "routers"])}, status=status)


def _upload_unavailable(request: HttpRequest, message: str, view_kwargs: dict) -> HttpResponse:
    """evaluation.middleware answers with this when the upload folder is full (503, with the cause)."""
    return _submit_page(request, get_object_or_404(Benchmark, slug=view_kwargs["slug"]), RouterForm(), 503, message)


submit.upload_unavailable_response = _upload_unavailable  # type: ignore[attr-defined]


def router_page(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """One router: its figures, the pool it was scored on, its share of picks per model and per domain."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    sub = selectors.router_visible(benchmark=benchmark, pk=pk, user=request.user)
    if sub is None:  # 404, not 403: whether a private router exists is private too
        raise Http404("No such router")
    results = services.results_shown(sub.results) or {}
    models = sorted(results.get("share", {}))
    domains = [{"name": d, "accuracy": results.get("accuracy_by_domain", {}).get(d),
                "shares": [share.get(m, 0.0) for m in models]}
               for d, share in sorted(results.get("share_by_domain", {}).items())]
    return render(request, "routers/router.html", {
        "benchmark": benchmark, "sub": sub, "results": results, "models": models,
        "share_rows": [(m, results["share"][m]) for m in models], "domains": domains,
        "tab_url": reverse("leaderboard:tab", args=[slug, "routers"])})
