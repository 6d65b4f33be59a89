"""Public pages and downloads of the router track (docs/routers.md). Thin: parse, call, render."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from annotation.models import Benchmark, Sample
from evaluation.metrics.routing import SPLITS
from routers import exports
from routers.pool import pool_load


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
    data = pool_load(benchmark)
    name = f"{slug}-routers-{split}.{fmt}"
    if fmt == "parquet":
        response = HttpResponse(exports.matrix_parquet(data, split, request.build_absolute_uri),
                                content_type="application/vnd.apache.parquet")
    else:
        response = HttpResponse(exports.matrix_csv(data, split, request.build_absolute_uri),
                                content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
