"""Web pages for submissions: upload (drag and drop, upload progress), list, and the live status page."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Benchmark
from annotation.selectors import scorable_benchmarks
from evaluation import queueing, selectors, services
from evaluation.api import REJECTION_STATUS, upload_too_large
from evaluation.forms import ModelDetailsForm, SubmissionForm
from evaluation.metrics.types import MODES
from evaluation.model_meta import format_parameters
from evaluation.models import FULL_PIPELINE_HELP, Submission, SubmissionStatus

DETAIL_ROWS = 200  # dev-split rows shown on the page; the API pages through all of them


def _wants_json(request: HttpRequest) -> bool:
    # The upload page's script posts with XMLHttpRequest (for its progress bar) and reads JSON.
    return request.headers.get("X-Requested-With") == "XMLHttpRequest"


@login_required
def submission_list(request: HttpRequest) -> HttpResponse:
    return render(request, "evaluation/submission_list.html",
                  {"submissions": selectors.submissions_of(user=request.user)[:200]})


@login_required
def submission_new(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    initial, note = _preselected(slug, request.GET.get("benchmark"))
    if request.method != "POST":
        return _form_page(request, SubmissionForm(initial=initial), **({"upload_error": note} if note else {}))
    too_large = upload_too_large(request)
    if too_large:  # normally answered earlier, by evaluation.middleware (before the CSRF check reads the body)
        return _rejected(request, SubmissionForm(initial=initial), too_large, 413)
    form = SubmissionForm(request.POST, request.FILES, initial=initial)
    if not form.is_valid():
        if _wants_json(request):
            return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
        return _form_page(request, form, status=400)
    fields = {k: v for k, v in form.cleaned_data.items() if v not in (None, "") or k == "is_public"}
    benchmark = fields.pop("benchmark")
    fields["file_format"] = fields.pop("format", None) or "jsonl"
    try:
        sub = services.submission_create(benchmark=benchmark, owner=request.user, **fields)
    except services.SubmissionRejected as exc:
        return _rejected(request, form, exc.message, REJECTION_STATUS[exc.code])
    except ValidationError as exc:
        return _rejected(request, form, "; ".join(exc.messages), 400)
    if _wants_json(request):
        return JsonResponse({"id": sub.pk, "status": sub.status, "page": sub.get_absolute_url()}, status=202)
    return redirect(sub)


def _preselected(path_slug: str | None, query_slug: str | None) -> tuple[dict, str | None]:
    """The benchmark the visitor came from (/submissions/new/<slug>/, or ?benchmark=<slug> from a board's
    link), preselected when it can score; a results-only entry is named with the reason it is not offered."""
    slug = path_slug or query_slug
    if not slug:
        return {}, None
    benchmark = scorable_benchmarks().filter(slug=slug).first()
    if benchmark is not None:
        return {"benchmark": benchmark}, None
    other = get_object_or_404(Benchmark, slug=slug) if path_slug else Benchmark.objects.filter(slug=slug).first()
    if other is None:
        return {}, None
    return {}, services.results_only_message(other)


def _refused_unread(status: int) -> Callable[[HttpRequest, str, dict], HttpResponse]:
    """What evaluation.middleware answers with when it refuses the upload before the view: 413 (too large,
    the body unread) or 503 (the upload folder full while the body was spooled)."""
    def refuse(request: HttpRequest, message: str, view_kwargs: dict) -> HttpResponse:
        benchmark = Benchmark.objects.filter(slug=view_kwargs.get("slug") or "").first()
        return _rejected(request, SubmissionForm(initial={"benchmark": benchmark} if benchmark else {}), message,
                         status)
    return refuse


submission_new.too_large_response = _refused_unread(413)  # type: ignore[attr-defined]
submission_new.upload_unavailable_response = _refused_unread(503)  # type: ignore[attr-defined]


def _rejected(request: HttpRequest, form: SubmissionForm, message: str, status: int) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse({"detail": message}, status=status)
    # not form.add_error: the form is unbound when the middleware refuses the body unread
    return _form_page(request, form, status=status, upload_error=message)


def _form_page(request: HttpRequest, form: SubmissionForm, status: int = 200, **extra: str) -> HttpResponse:
    limits = {"max_bytes": settings.SUBMISSION_MAX_FILE_BYTES, "max_message": services.size_limit_message("{size}")}
    # An example file per benchmark (leaderboard:example_predictions), the preselected benchmark's first.
    chosen = form.initial.get("benchmark")
    examples = [(b.slug, b.name) for b in form.fields["benchmark"].queryset]
    examples.sort(key=lambda e: chosen is None or e[0] != chosen.slug)
    return render(request, "evaluation/submission_new.html", {"form": form, **limits, **extra, "examples": examples,
                                                              "chosen": chosen}, status=status)


def _visible(request: HttpRequest, pk: int) -> Submission:
    sub = selectors.submission_visible_to(user=request.user, submission_id=pk)
    if sub is None:
        raise Http404
    return sub


@login_required
def submission_detail(request: HttpRequest, pk: int, fragment: bool = False) -> HttpResponse:
    sub = _visible(request, pk)
    rows = selectors.prediction_results_for(submission=sub, user=request.user)[:DETAIL_ROWS] if sub.results else []
    errors = sub.errors if sub.status == SubmissionStatus.FAILED else []
    polled = bool(fragment or request.htmx)
    context = {"sub": sub, "rows": rows, "detail_rows": DETAIL_ROWS,
               "modes": sorted((sub.results or {}).get("modes", {}).items(),
                               key=lambda kv: MODES.index(kv[0]) if kv[0] in MODES else len(MODES)),
               # A problem of the file as a whole (made for another benchmark) heads the page; the table lists lines.
               "file_problems": [e for e in errors if _of_the_file(e)],
               "line_errors": [e for e in errors if not _of_the_file(e)], "polled": polled,
               # No worker on the pipeline's queue for a while: nothing can move it on (read only).
               "silence": None if sub.is_final else selectors.pipeline_silence(),
               "full_pipeline_help": FULL_PIPELINE_HELP}
    # htmx polls the status fragment; the full page is for a first visit or a browser without JS.
    template = "evaluation/_status.html" if polled else "evaluation/submission_detail.html"
    response = render(request, template, context)
    response["Vary"] = "HX-Request"
    return response


def _of_the_file(error: dict) -> bool:
    """A stored error about the file as a whole, not one line, row or member of it."""
    return error.get("line") is None and error.get("where", "file") in ("", "file")


@login_required
@require_POST
def submission_publish(request: HttpRequest, pk: int) -> HttpResponse:
    sub = _visible(request, pk)
    try:
        services.submission_set_public(submission=sub, public=request.POST.get("public") == "1")
    except services.PublishRefused as exc:
        messages.error(request, exc.message)
    return redirect(sub)


@login_required
def submission_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """The owner changes the model's details (not the file, not the prices); the scores stay as they are."""
    sub = _visible(request, pk)
    names = services.EDITABLE_METADATA
    if request.method != "POST":
        initial = {name: getattr(sub, name) for name in names}
        initial["parameters_billions"] = format_parameters(sub.parameters_billions)
        form = ModelDetailsForm(initial=initial)
        return render(request, "evaluation/submission_edit.html", {"sub": sub, "form": form})
    form = ModelDetailsForm(request.POST)
    if form.is_valid():
        try:
            services.submission_metadata_update(submission=sub, **{n: form.cleaned_data[n] for n in names})
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, "Model details saved; the scores are unchanged.")
            return redirect(sub)
    return render(request, "evaluation/submission_edit.html", {"sub": sub, "form": form}, status=400)


@login_required
@require_POST
def submission_delete(request: HttpRequest, pk: int) -> HttpResponse:
    services.submission_delete(submission=_visible(request, pk))
    return redirect("evaluation:list")


@staff_member_required
def pipeline_health(request: HttpRequest) -> HttpResponse:
    """Staff only: is the pipeline keeping up, and is the sweeper alive (docs/submissions.md)."""
    health = selectors.pipeline_health()
    sweep_late = health["sweep_age"] is None or health["sweep_age"] > 3 * settings.SUBMISSION_SWEEP_SECONDS
    return render(request, "evaluation/pipeline_health.html", {
        **health,
        "queues": [(name, queueing.queue_depth(name))
                   for name in (settings.SUBMISSIONS_QUEUE, settings.SUBMISSIONS_SWEEP_QUEUE)],
        "oldest_too_old": (health["oldest_age"] or 0) > settings.SUBMISSION_ALERT_AGE_SECONDS,
        "sweep_late": sweep_late,
        "pipeline_queue": settings.SUBMISSIONS_QUEUE,
        "settings": {k: getattr(settings, k) for k in (
            "SUBMISSION_HEARTBEAT_SECONDS", "SUBMISSION_STUCK_SECONDS", "SUBMISSION_SWEEP_SECONDS",
            "SUBMISSION_MAX_ATTEMPTS", "SUBMISSION_ALERT_AGE_SECONDS", "WORKER_SILENT_SECONDS")},
    })


@login_required
@require_GET
def submission_file(request: HttpRequest, pk: int) -> FileResponse:
    """The prediction file as uploaded (a converted one in its own format), from private storage: its
    owner and staff only (others 404)."""
    sub = _visible(request, pk)
    try:
        handle = (sub.source_file or sub.file).open("rb")
    except FileNotFoundError:
        raise Http404("The stored file is missing.") from None
    return FileResponse(handle, as_attachment=True, filename=sub.original_name or f"submission-{sub.pk}.jsonl")
