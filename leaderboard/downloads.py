"""The benchmark's inputs as files: the page ``/b/<slug>/data/`` and the files ``/b/<slug>/data/<split>.<kind>``
(docs/downloads.md). Public: inputs of every split are public, the test split's files carry no gold.

Reads only: a file is served from private storage when the build of the benchmark's current state is
ready; otherwise 503 with a sentence saying why (being prepared: ``Retry-After: 60``). Nothing here asks
for a build: imports, approvals and ``build_downloads`` do (a read never writes).
"""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_safe

from annotation.downloads.selectors import DownloadState, download_filename, download_of, downloads_of
from annotation.models import Benchmark, DownloadKind, DownloadStatus
from config.storages import private_storage

RETRY_AFTER_SECONDS = 60
CONTENT_TYPES = {
    DownloadKind.ZIP: "application/zip",
    DownloadKind.TSV: "text/tab-separated-values; charset=utf-8",
    DownloadKind.PARQUET: "application/vnd.apache.parquet",
}
NOT_READY = {
    DownloadStatus.BUILDING: "is being prepared; try again in a minute.",
    DownloadStatus.FAILED: "could not be built; the site's staff can build it again (manage.py build_downloads).",
    "missing": "is not prepared yet; the site's staff can prepare it (manage.py build_downloads).",
}


def download_url(benchmark: Benchmark, split: str, kind: str) -> str:
    return reverse("leaderboard:data_file", kwargs={"slug": benchmark.slug, "split": split, "kind": kind})


@require_GET
def data_page(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    states = downloads_of(benchmark)
    splits: dict[str, list[tuple[DownloadState, str]]] = {}
    for state in states:
        splits.setdefault(state.split, []).append((state, download_url(benchmark, state.split, state.kind)))
    return render(request, "leaderboard/data.html", {
        "benchmark": benchmark, "splits": splits, "kinds": dict(DownloadKind.choices),
        "preparing": any(not s.ready for s in states),
    })


@require_safe  # HEAD too: download tools ask for the size first
def data_file(request: HttpRequest, slug: str, split: str, kind: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    state = download_of(benchmark, split, kind)
    if state is None:
        raise Http404("This benchmark has no such split or file kind")
    if not state.ready:
        label = f"The {split} split's {kind} file of {benchmark.name} {benchmark.version_label}"
        response = HttpResponse(f"{label} {NOT_READY[state.status]}\n", status=503,
                                content_type="text/plain; charset=utf-8")
        if state.status == DownloadStatus.BUILDING:
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        # An expected state, not a server error: Django would log every poll at ERROR level (log_response
        # skips a response marked as logged).
        response._has_been_logged = True  # type: ignore[attr-defined]  # read by django.utils.log.log_response
        return response
    handle = private_storage().open(state.row.file.name, "rb")
    # Streamed in blocks from storage; FileResponse sets Content-Length from the file's size.
    response = FileResponse(handle, as_attachment=True, filename=download_filename(benchmark, split, kind),
                            content_type=CONTENT_TYPES[kind])
    response["Cache-Control"] = "no-cache"  # the URL's file changes when the benchmark does
    return response
