"""Web pages for hosted runs: the form (with its estimate before you confirm), the owner's list, and
the live progress page (htmx polling), like the submission's."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from evaluation import hosted_runs, selectors
from evaluation.api_runs import OPTION_FIELDS, run_create_from
from evaluation.forms import RunForm
from evaluation.models import HostedRun


def _visible(request: HttpRequest, pk: int) -> HostedRun:
    run = selectors.run_visible_to(user=request.user, run_id=pk)
    if run is None:
        raise Http404
    return run


def _input(form: RunForm) -> dict[str, Any]:
    data = dict(form.cleaned_data)
    data.pop("benchmark")
    for name in OPTION_FIELDS:
        if data.get(name) is None:
            data.pop(name, None)
    return data


@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    return render(request, "evaluation/run_list.html", {"runs": selectors.runs_of(user=request.user)[:200]})


@login_required
def run_new(request: HttpRequest) -> HttpResponse:
    """GET: the form. POST "estimate" (htmx: the estimate fragment): what it would cost, and the button
    that starts it. POST "confirm": the run is created."""
    form = RunForm(request.POST or None, initial={"benchmark": request.GET.get("benchmark")})
    estimate = error = None
    if request.method == "POST" and form.is_valid():
        benchmark = form.cleaned_data["benchmark"]
        data = _input(form)
        try:
            if request.POST.get("confirm") == "1":
                # No flash message: the run's page says "queued" in its status, which follows the state
                # (a banner would still say "queued" beside "Done").
                run = run_create_from(data, benchmark=benchmark, owner=request.user)
                if request.htmx:
                    return HttpResponseClientRedirect(run.get_absolute_url())
                return redirect(run)
            options = {k: data[k] for k in OPTION_FIELDS if k in data}
            details = {"model_name": data.get("model_name"), "price_input_per_mtok": data.get("price_input_per_mtok"),
                       "price_output_per_mtok": data.get("price_output_per_mtok")}
            estimate = hosted_runs.run_estimate(benchmark=benchmark, endpoint=data["endpoint"], model=data["model"],
                                                modes=data["modes"], split=data["split"], details=details,
                                                options=options)
        except hosted_runs.RunRejected as exc:
            error = str(exc)
    context = {"form": form, "estimate": estimate, "error": error}
    if request.htmx and request.method == "POST":
        return render(request, "evaluation/_run_estimate.html", context)
    return render(request, "evaluation/run_new.html", context)


@login_required
def run_detail(request: HttpRequest, pk: int, fragment: bool = False) -> HttpResponse:
    run = _visible(request, pk)
    template = "evaluation/_run_status.html" if (fragment or request.htmx) else "evaluation/run_detail.html"
    silence = None if run.is_final else selectors.pipeline_silence(runs=True)
    response = render(request, template, {"run": run, "silence": silence})
    response["Vary"] = "HX-Request"
    return response


@login_required
@require_POST
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    # The status says what the cancel did (cancelled, or stopping), as it changes: no flash message.
    run = hosted_runs.run_cancel(run=_visible(request, pk))
    return redirect(run)


@login_required
@require_GET
def run_file(request: HttpRequest, pk: int) -> FileResponse:
    """The run's prediction file as the harness wrote it (a stopped or cancelled run's partial one too),
    from private storage: its owner and staff only (others 404)."""
    run = _visible(request, pk)
    if not run.predictions:
        raise Http404("This run has no file yet.")
    try:
        handle = run.predictions.open("rb")
    except FileNotFoundError:
        raise Http404("The stored file is missing.") from None
    return FileResponse(handle, as_attachment=True, filename=f"{run.benchmark.slug}-run-{run.pk}.jsonl")
