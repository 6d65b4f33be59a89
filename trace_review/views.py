"""Trace review pages: the queue, a trace to judge (keyboard-first), its images, batches.

Views parse input, call one service or selector and render (docs/trace_review.md).
"""

from __future__ import annotations

import hashlib
import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.imagetools import ToolError, encode_png, make_preview
from annotation.media import media_for_page, media_part
from annotation.models import Benchmark
from annotation.workbench.access import sees_gold
from evaluation.metrics.types import HEADLINE_ORDER
from evaluation.models import Submission, on_board_q
from trace_review import access, selectors, services, traces
from trace_review.models import TraceAssignment, TraceAssignmentStatus, TraceReviewBatch

IMAGE_TTL = 60 * 60
PREVIEW_SIDE = 800
BINARY = {"1": True, "0": False}
SCORES = {"1": 1.0, "0.5": 0.5, "0": 0.0}


def _own(request: HttpRequest, pk: int) -> TraceAssignment:
    # 404, not 403: another person's assignment must not even be confirmed to exist.
    assignment = selectors.assignment_of(request.user, pk)
    if assignment is None:
        raise Http404("No such trace assignment of yours.")
    return assignment


def _batch(request: HttpRequest, pk: int) -> TraceReviewBatch:
    batch = get_object_or_404(TraceReviewBatch.objects.select_related("benchmark"), pk=pk)
    if not access.can_review_batch(request.user, batch):
        raise PermissionDenied("You may not review the traces of this batch.")
    return batch


@login_required
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    rows = [{"batch": b, "progress": selectors.batch_progress(b, request.user)} for b in selectors.batches_for(request.user)]
    managed = selectors.managed_benchmarks(request.user)
    subs = Submission.objects.filter(on_board_q(), benchmark__in=managed).only(
        "pk", "model_name", "benchmark_id").order_by("model_name") if managed else []
    return render(request, "trace_review/queue.html", {"rows": rows, "managed": managed, "submissions": subs,
                                                       "modes": HEADLINE_ORDER})


@login_required
@require_POST
def batch_create(request: HttpRequest) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=request.POST.get("benchmark", ""))
    if not access.can_manage(request.user, benchmark):
        raise PermissionDenied("Only admins of this benchmark create review batches.")
    submission = None
    if request.POST.get("submission"):
        submission = get_object_or_404(Submission, pk=request.POST["submission"], benchmark=benchmark)
    try:
        batch = services.batch_create(
            benchmark=benchmark, name=request.POST.get("name", "").strip() or "Trace review",
            size=int(request.POST.get("size", "20")), people_per_trace=int(request.POST.get("people", "2")),
            mode=request.POST.get("mode", "adaptive"), submission=submission,
            seed=int(request.POST.get("seed", "0") or 0), created_by=request.user)
    except (ValidationError, ValueError) as error:
        messages.error(request, f"Batch not created: {'; '.join(getattr(error, 'messages', [str(error)]))}")
        return redirect("trace_review:queue")
    messages.info(request, f"Batch '{batch.name}' created with {batch.traces.count()} traces.")
    return redirect(batch)


@login_required
@require_GET
def batch_detail(request: HttpRequest, pk: int) -> HttpResponse:
    batch = _batch(request, pk)
    return render(request, "trace_review/batch.html", {
        "batch": batch, "progress": selectors.batch_progress(batch, request.user),
        "mine": selectors.assignments_of(request.user, batch)[:100],
        "manage": access.can_manage(request.user, batch.benchmark)})


@login_required
@require_POST
def claim_next(request: HttpRequest, pk: int) -> HttpResponse:
    batch = _batch(request, pk)
    assignment = services.trace_claim_next(user=request.user, batch=batch)
    if assignment is None:
        messages.info(request, f"Nothing left for you to review in '{batch.name}'. Thank you!")
        return redirect(batch)
    return redirect(assignment)


SCORE_CHOICES = (("1", "1", "correct"), ("0.5", "h", "unverifiable"), ("0", "0", "incorrect"))


def _value(x: object) -> str:
    """A stored answer as the form's value: True -> "1", 0.5 -> "0.5", None -> ""."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, (int, float)):
        return f"{float(x):g}"
    return str(x)


def _form(view: traces.TraceView, initial: dict) -> list[dict]:
    """The questions in the judges' shape, in the order the keyboard walks them; ``initial`` holds
    the person's own earlier answers (or what they just posted), never the judge's."""
    shape = view.shape
    keys, calls, scores = initial.get("key_steps") or [], initial.get("calls") or [], initial.get("step_scores") or []

    def pick(xs: list, i: int) -> str:
        return _value(xs[i]) if i < len(xs) else ""

    detail = (f"“{view.final_answer}” against the gold “{view.answer}”" if view.gold else
              f"“{view.final_answer}”: the gold answer of a test sample is not shown; judge it from the image "
              "and the question")
    out = [{"name": "answer", "kind": "binary", "legend": "Is the final answer correct?", "detail": detail,
            "choices": (("1", "y", "correct"), ("0", "n", "wrong")), "value": _value(initial.get("answer_correct"))}]
    for i, text in enumerate(view.key_steps[:shape.n_key_steps]):
        out.append({"name": f"key_step_{i}", "kind": "binary", "legend": f"Key step {i + 1}: does the trace reach it?",
                    "detail": text, "choices": (("1", "y", "matched"), ("0", "n", "not matched")), "value": pick(keys, i)})
    for step in view.steps:
        if step.get("tool"):
            i = step["call_index"]
            out.append({"name": f"call_{i}", "kind": "binary", "legend": f"Call {i + 1} (step {step['n']}): valid?",
                        "detail": f"{step['tool']['name']} {step['tool']['args']}",
                        "choices": (("1", "y", "valid"), ("0", "n", "invalid")), "value": pick(calls, i)})
    for step in view.steps[:shape.n_steps]:
        i = step["index"]
        out.append({"name": f"step_{i}", "kind": "score", "legend": f"Step {step['n']}: score",
                    "detail": (step["thought"] or (step.get("tool") or {}).get("name", ""))[:160],
                    "choices": SCORE_CHOICES, "value": pick(scores, i)})
    return out


def _rects(boxes: list) -> list[dict]:
    return [{"x": b[0], "y": b[1], "w": b[2] - b[0], "h": b[3] - b[1]} for b in boxes]


def _parse(post: dict, shape: traces.Shape) -> dict:
    """The form's answers in the verdict's shape; an unanswered question stays None (the service refuses it)."""
    return {
        "answer_correct": BINARY.get(post.get("answer", "")),
        "key_steps": [BINARY.get(post.get(f"key_step_{i}", "")) for i in range(shape.n_key_steps)],
        "calls": [BINARY.get(post.get(f"call_{i}", "")) for i in range(shape.n_calls)],
        "step_scores": [SCORES.get(post.get(f"step_{i}", "")) for i in range(shape.n_steps)],
        "comment": post.get("comment", "")[:5000],
    }


@login_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own(request, pk)
    if assignment.status == TraceAssignmentStatus.SKIPPED:
        raise Http404("You skipped this trace.")
    view = traces.trace_view(assignment.trace, gold=sees_gold(request.user, assignment.trace.sample))
    errors: list[str] = []
    if request.method == "POST":
        answers = _parse(request.POST, view.shape)
        try:
            services.verdict_save(assignment=assignment, shape=view.shape, **answers)
        except ValidationError as error:
            errors = error.messages
        else:
            if request.POST.get("then") == "stay":
                messages.info(request, "Saved.")
                return redirect(assignment)
            return claim_next(request, assignment.trace.batch_id)
    else:
        services.trace_assignment_touch(assignment=assignment)
    if errors:
        initial = answers
    else:  # their own earlier verdict, never the judge's
        own = assignment.trace.verdicts.filter(reviewer=request.user).first()
        initial = {f: getattr(own, f) for f in ("answer_correct", "key_steps", "calls", "step_scores", "comment")} if own else {}
    media = media_for_page(view.sample, lambda position, part: reverse("trace_review:medium", args=[pk, position, part]))
    context = {"assignment": assignment, "batch": assignment.trace.batch, "view": view, "errors": errors,
               "media": media, "several_media": len(media) > 1 or media[0]["kind"] == "video",
               "questions": _form(view, initial), "comment": initial.get("comment", ""),
               "region_rects": _rects(view.regions),
               "zoom_rects": [{"call": z["call"], **_rects([z["box"]])[0]} for z in view.zoom_boxes],
               "progress": selectors.batch_progress(assignment.trace.batch, request.user)}
    return render(request, "trace_review/review.html", context, status=400 if errors else 200)


@login_required
@require_POST
def skip(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own(request, pk)
    services.trace_skip(assignment=assignment)
    messages.info(request, "Skipped; the trace goes to someone else.")
    return claim_next(request, assignment.trace.batch_id)


def _png(key: str, make) -> HttpResponse:
    png = cache.get(key)
    if png is None:
        try:
            png = encode_png(make_preview(make(), PREVIEW_SIDE).image)
        except (OSError, ValueError, ToolError) as error:  # ToolError: too large, or undecodable
            return HttpResponse(f"The image could not be made: {error}", status=404, content_type="text/plain")
        cache.set(key, png, IMAGE_TTL)
    response = HttpResponse(png, content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    return response


@login_required
@require_GET
def medium(request: HttpRequest, pk: int, position: int, part: str) -> HttpResponse:
    """A part of the trace's sample medium img<position>: its still, a video's frame, the video."""
    assignment = _own(request, pk)
    try:
        body, content_type = media_part(assignment.trace.sample, position, part)
    except LookupError as error:
        raise Http404(str(error)) from None
    except (ToolError, OSError) as error:
        return HttpResponse(f"The medium could not be read: {error}", status=422, content_type="text/plain")
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "private, max-age=3600"
    return response


@login_required
@require_GET
def frame_png(request: HttpRequest, pk: int) -> HttpResponse:
    """The image in the frame the annotated regions are in (the recovery transform applied)."""
    assignment = _own(request, pk)
    view = traces.trace_view(assignment.trace, gold=sees_gold(request.user, assignment.trace.sample), run=False)
    # The transform goes into the key as a digest: cache keys must be short and free of spaces.
    digest = hashlib.sha256(json.dumps(view.transform, sort_keys=True).encode()).hexdigest()[:16]
    return _png(f"tr:frame:{assignment.trace.sample_id}:{digest}",
                lambda: traces.frame_image(view.sample, view.transform))


@login_required
@require_GET
def chain_png(request: HttpRequest, pk: int, ref: str) -> HttpResponse:
    """One image of the prediction's tool calls, re-run through the tool registry."""
    assignment = _own(request, pk)

    def make():
        images = traces.run_images(assignment.trace)
        if ref not in images:
            raise ValueError("this call produced no image")
        return images[ref]

    return _png(f"tr:img:{assignment.trace_id}:{ref}", make)
