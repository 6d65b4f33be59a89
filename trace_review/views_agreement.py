"""Agreement between judges and people, the verdict export, and human-verified figures.

The agreement page shows aggregates only (no trace, no person): anyone may read it over the
traces of public submissions, which is what the leaderboard links to; staff see it over every
submission's traces. The raw verdicts (the export) are for staff and the benchmark's admins.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Benchmark
from trace_review import access, selectors, stability
from trace_review.exports import verdict_lines


@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    everything = access.sees_everything(request.user)
    benchmark = Benchmark.objects.filter(slug=request.GET.get("benchmark", "")).first()
    judge = request.GET.get("judge") or None
    kind = request.GET.get("kind") if request.GET.get("kind") in selectors.KIND_BY_KEY else None
    page = selectors.agreement_page(everything=everything, benchmark=benchmark, judge=judge, kind=kind)
    runs = stability.latest_figures(benchmark=benchmark, judge=judge)
    for row in page.judges:
        row.stability = stability.latest_by_judge(runs).get(row.judge)
    context = {"page": page, "everything": everything, "benchmark": benchmark, "judge": judge, "kind": kind,
               "kinds": selectors.KINDS, "benchmarks": Benchmark.objects.order_by("name").only("slug", "name"),
               "can_export": everything or (benchmark is not None and access.can_manage(request.user, benchmark)),
               "stability": runs,
               "judge_offline": stability.judge_is_offline(), "can_start_stability": request.user.is_staff}
    response = render(request, "trace_review/agreement.html", context)
    response["Cache-Control"] = "private, no-cache"  # a new verdict must show on the next load
    return response


@require_GET
def agreement_for_submission(request: HttpRequest, pk: int) -> HttpResponse:
    """The leaderboard's link from a process figure: the agreement of the judge that produced it."""
    submission = selectors.submission_for_link(pk=pk, everything=access.sees_everything(request.user))
    if submission is None:
        raise Http404("No such submission.")
    params = {"judge": submission.judge_name or "offline"}
    kind = request.GET.get("kind")
    anchor = ""
    if kind in selectors.KIND_BY_KEY:
        anchor = f"#{params['judge']}-{kind}"
    return redirect(f"{reverse('trace_review:agreement')}?{urlencode(params)}{anchor}")


@login_required
@require_GET
def export(request: HttpRequest) -> StreamingHttpResponse:
    benchmark = None
    if request.GET.get("benchmark"):
        benchmark = get_object_or_404(Benchmark, slug=request.GET["benchmark"])
    allowed = request.user.is_staff or (benchmark is not None and access.can_manage(request.user, benchmark))
    if not allowed:
        raise PermissionDenied("The raw verdicts are for staff and the benchmark's admins.")
    response = StreamingHttpResponse(verdict_lines(benchmark=benchmark), content_type="application/x-ndjson")
    name = f"trace-verdicts-{benchmark.slug}.jsonl" if benchmark else "trace-verdicts.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@require_GET
def verified(request: HttpRequest, pk: int) -> HttpResponse:
    submission = selectors.submission_for_link(pk=pk, everything=access.sees_everything(request.user))
    if submission is None:
        raise Http404("No such submission.")
    submission = type(submission).objects.select_related("benchmark").get(pk=submission.pk)
    return render(request, "trace_review/verified.html",
                  {"submission": submission, "modes": selectors.human_verified(submission)})


@login_required
@require_POST
def stability_start(request: HttpRequest) -> HttpResponse:
    """Staff only: enqueue a judge stability run (it pays the judge for every repeat)."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff may re-ask the judge.")
    benchmark = get_object_or_404(Benchmark, slug=request.POST.get("benchmark", ""))
    try:
        sample = int(request.POST.get("sample", "50"))
        repeats = int(request.POST.get("repeats", "3"))
        seed = int(request.POST.get("seed", "0") or 0)
    except ValueError:
        messages.error(request, "Sample, repeats and seed must be whole numbers.")
        return redirect(f"{reverse('trace_review:agreement')}?benchmark={benchmark.slug}#stability")
    if not (1 <= sample <= 1000 and 2 <= repeats <= 10):
        messages.error(request, "Sample must be 1 to 1,000 questions and repeats 2 to 10.")
    elif stability.judge_is_offline():
        messages.error(request, stability.OFFLINE_MESSAGE)
    else:
        from trace_review.tasks import judge_stability

        # On the pipeline's queue: its workers hold the judge's settings.
        judge_stability.apply_async(args=[benchmark.slug, sample, repeats, seed, request.user.pk],
                                    queue=settings.SUBMISSIONS_QUEUE)
        messages.success(request, f"Stability run queued: {sample} questions of {benchmark.name} × {repeats}. "
                                  "Reload this page when it is done.")
    return redirect(f"{reverse('trace_review:agreement')}?benchmark={benchmark.slug}#stability")
