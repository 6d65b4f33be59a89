"""The annotator's workbench pages (docs/annotation.md). Views parse input, call one service or
selector and render; htmx requests get the fragment only."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import selectors
from annotation.benchmark_fields import TRANSFORM_OPS
from annotation.workbench.proposals import QUEUE_ORDERS, proposal_for_item, proposal_view
from annotation.coco import coco_from_benchmark
from annotation.imagetools import REGISTRY, ChainError, ImageTooLarge, ToolError
from annotation.media import media_for_page, media_part
from annotation.models import Annotation, Assignment, AssignmentStatus, Benchmark, KeyStepDraft, Revision, Sample
from annotation.services import benchmark_export
from annotation.workbench import access
from annotation.workbench.chain import NameOnlyChain, chain_run
from annotation.workbench.assignments import assignment_claim_next, assignment_skip, assignment_touch
from annotation.workbench.editing import annotation_restore, annotation_save, annotation_snapshot
from annotation.workbench.revisions import history_rows
from annotation.workbench.llm import key_step_draft_request, llm_unavailable_reason
from annotation.workbench.previews import (
    PREVIEW_CONTENT_TYPE,
    frame_of,
    oracle_preview,
    oracle_preview_png,
    transform_preview,
    transform_preview_png,
    unreadable_message,
)
from annotation.workbench.review import (
    PART_NAMES,
    PARTS,
    ReviewError,
    annotation_reject,
    notes_from_form,
    review_comparison,
    sample_agreement,
    sample_approve,
)


def _own_assignment(request: HttpRequest, pk: int) -> Assignment:
    # 404, not 403: another annotator's assignment must not even be confirmed to exist.
    assignment = selectors.assignment_of_annotator(request.user, pk)
    if assignment is None:
        raise Http404("No such assignment of yours.")
    return assignment


def _reviewable(request: HttpRequest, benchmark: Benchmark) -> None:
    if not access.can_review(request.user, benchmark):
        raise PermissionDenied("Only reviewers of this benchmark may open review pages.")


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    rows = []
    for benchmark in selectors.benchmarks_for_user(request.user):
        roles = access.roles_of(request.user, benchmark)
        rows.append({"benchmark": benchmark, "roles": sorted(roles),
                     "assignments": selectors.assignments_of(request.user, benchmark)[:50],
                     "progress": selectors.benchmark_progress(benchmark)})
    return render(request, "annotation/queue.html", {"rows": rows, "orders": QUEUE_ORDERS})


@login_required
@require_POST
def claim_next(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if not access.can_annotate(request.user, benchmark):
        raise PermissionDenied("You are not an annotator of this benchmark.")
    after = request.POST.get("after", "")
    after_pk = int(after) if after.isdigit() else None  # "Save and next": past the item just saved
    assignment = assignment_claim_next(user=request.user, benchmark=benchmark, after=after_pk,
                                       order=request.POST.get("order", ""))
    if assignment is None:
        if after_pk is not None:
            messages.info(request, f"Saved. Nothing else is waiting for you in {benchmark.name}: this was your last open item.")
            return redirect("annotation:item", pk=after_pk)
        messages.info(request, f"Nothing left to annotate in {benchmark.name}.")
        return redirect("annotation:queue")
    return redirect(assignment)


@login_required
@require_POST
def skip(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    assignment_skip(assignment=assignment)
    messages.info(request, f"Skipped {assignment.sample.uid}.")
    return redirect("annotation:queue")


@login_required
@require_GET
def item(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    assignment_touch(assignment=assignment)
    annotation = selectors.annotation_for_editor(assignment.annotation_id)
    snapshot = annotation_snapshot(annotation)
    sample = assignment.sample
    frame = frame_of(sample, snapshot["transform"])
    media = media_for_page(sample, lambda position, part: reverse("annotation:medium", args=[sample.pk, position, part]))
    tools = [{"name": t.name, "module": t.module, "description": t.description, "schema": t.schema}
             for t in REGISTRY.values()]
    tools += [{"name": d["name"], "module": "declared (not run here)", "description": d["description"],
               "schema": d["args_schema"], "declared": True} for d in sample.benchmark.declared_tools or ()]
    proposal = proposal_for_item(sample)
    rejection = selectors.last_rejection(annotation) if assignment.status == AssignmentStatus.RETURNED else None
    notes = [{"part": n.part, "position": n.position, "target": n.target, "text": n.text}
             for n in (rejection.notes.all() if rejection else ())]
    return render(request, "annotation/item.html", {
        "assignment": assignment, "annotation": annotation, "sample": sample, "frame": frame,
        "editor": {"version": annotation.version, "snapshot": snapshot, "width": sample.width, "height": sample.height,
                   "editable": annotation.status in ("draft", "rejected"), "chain_verified": annotation.chain_verified,
                   "media": media, "review_notes": notes, "transform_ops": sorted(TRANSFORM_OPS),
                   "proposal": proposal_view(proposal),
                   "proposal_decided": [{"part": d.part, "index": d.index, "action": d.action}
                                        for d in annotation.proposal_decisions.filter(proposal=proposal)]
                   if proposal is not None else []},
        "media": media,
        "tools": tools, "llm_reason": llm_unavailable_reason(),
        "drafts": annotation.step_drafts.all()[:1],
        "rejection": rejection,
    })  # fmt: skip


@login_required
@require_POST
def save(request: HttpRequest, pk: int) -> JsonResponse:
    assignment = _own_assignment(request, pk)
    try:
        body = json.loads(request.body or b"{}")
        base_version = int(body["version"])
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"ok": False, "errors": ['expected JSON {"version": n, "data": {...}}']}, status=400)
    result = annotation_save(annotation_id=assignment.annotation_id, user=request.user, base_version=base_version,
                             data=body.get("data"), submit=bool(body.get("submit")))
    status = 200 if result.ok else (409 if result.conflict else 400)
    return JsonResponse({"ok": result.ok, "version": result.version, "message": result.message,
                         "errors": result.errors, "held": result.held,
                         "conflict": result.conflict.pk if result.conflict else None},
                        status=status)


def _json_param(request: HttpRequest, name: str, default: object) -> object:
    try:
        return json.loads(request.GET.get(name) or json.dumps(default))
    except json.JSONDecodeError:
        raise Http404(f"bad {name}") from None


def _sample_for_image(request: HttpRequest, pk: int) -> Sample:
    """The sample, if the person annotates it or reviews its benchmark."""
    sample = get_object_or_404(Sample.objects.select_related("benchmark"), pk=pk)
    if not request.user.is_authenticated:
        raise PermissionDenied
    if not (sample.assignments.filter(annotator=request.user).exists() or access.can_review_sample(request.user, sample)):
        raise PermissionDenied("You do not work on this sample.")
    return sample


@login_required
@require_GET
def preview_png(request: HttpRequest, pk: int) -> HttpResponse:
    """The item page's preview (or oracle image). JPEG, for speed, although the route keeps its
    old `image.png` path; `?format=png` gives the exact pixels as PNG."""
    sample = _sample_for_image(request, pk)
    transform = _json_param(request, "transform", [])
    exact = request.GET.get("format") == "png"
    try:
        if request.GET.get("oracle"):
            regions = _json_param(request, "regions", [])
            body = (oracle_preview_png if exact else oracle_preview)(sample, transform, regions)
        else:
            body = (transform_preview_png if exact else transform_preview)(sample, transform)
    except (ChainError, ImageTooLarge, ValueError, TypeError) as error:
        return HttpResponse(str(error), status=400, content_type="text/plain")
    except (ToolError, OSError) as error:  # the stored image is damaged or missing: say so, not a 500
        return HttpResponse(unreadable_message(error), status=422, content_type="text/plain")
    response = HttpResponse(body, content_type="image/png" if exact else PREVIEW_CONTENT_TYPE)
    response["Cache-Control"] = "private, max-age=3600"  # the URL holds the whole input
    response["Content-Disposition"] = f'inline; filename="sample-{sample.pk}.{"png" if exact else "jpg"}"'
    return response


@login_required
@require_GET
def medium(request: HttpRequest, pk: int, position: int, part: str) -> HttpResponse:
    """A part of the sample's medium img<position> (its still, a video frame, the video file)."""
    sample = _sample_for_image(request, pk)
    try:
        body, content_type = media_part(sample, position, part)
    except LookupError as error:
        raise Http404(str(error)) from None
    except (ToolError, OSError) as error:
        return HttpResponse(unreadable_message(error), status=422, content_type="text/plain")
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "private, max-age=3600"
    return response


@login_required
@require_POST
def run_chain(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    try:
        chain = json.loads(request.POST.get("chain") or "[]")
    except json.JSONDecodeError:
        chain = None
    view = chain_run(assignment.sample, chain if isinstance(chain, list) else [])
    if isinstance(view, NameOnlyChain):
        return render(request, "annotation/_chain_result.html", {"name_only": view})
    return render(request, "annotation/_chain_result.html", {"view": view, "result": view.result})


@login_required
@require_POST
def verify_chain(request: HttpRequest, pk: int) -> HttpResponse:
    from annotation.workbench.chain import ChainNotVerified, annotation_chain_verify

    assignment = _own_assignment(request, pk)
    try:
        annotation_chain_verify(annotation_id=assignment.annotation_id)
        ok, message = True, "The saved toolchain ran and every step is marked valid: verified."
    except ChainNotVerified as error:
        ok, message = False, str(error)
    return render(request, "annotation/_chain_verified.html", {"ok": ok, "message": message})


@login_required
@require_POST
def draft_steps(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    reason = llm_unavailable_reason()
    if reason:
        return render(request, "annotation/_draft.html", {"draft": None, "reason": reason})
    draft = key_step_draft_request(annotation=assignment.annotation, user=request.user)
    return render(request, "annotation/_draft.html", {"draft": draft})


@login_required
@require_GET
def draft_status(request: HttpRequest, pk: int) -> HttpResponse:
    draft = get_object_or_404(KeyStepDraft, pk=pk, annotation__assignment__annotator=request.user)
    return render(request, "annotation/_draft.html", {"draft": draft})


@login_required
@require_GET
def history(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    revisions = history_rows(list(selectors.revisions_of(assignment.annotation)[:50]))
    return render(request, "annotation/history.html", {"assignment": assignment, "revisions": revisions})


@login_required
@require_POST
def restore(request: HttpRequest, pk: int, revision_pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    revision = get_object_or_404(Revision, pk=revision_pk, annotation=assignment.annotation)
    result = annotation_restore(revision=revision, user=request.user)
    if result.ok:
        messages.success(request, f"Restored draft #{revision.pk} as version {result.version}.")
    else:
        messages.error(request, "Could not restore: " + "; ".join(result.errors or [result.message]))
    return redirect(assignment)


@login_required
@require_GET
def review_list(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    _reviewable(request, benchmark)
    guessable = request.GET.get("guessable", "")
    guessable = guessable if guessable in selectors.GUESSABLE_FILTERS else ""
    return render(request, "annotation/review_list.html", {
        "benchmark": benchmark, "samples": selectors.review_queue(benchmark, guessable=guessable)[:200],
        "progress": selectors.benchmark_progress(benchmark), "guessable": guessable,
        "guessable_choices": (("", "all"), ("yes", "guessable"), ("no", "not guessable"), ("unaudited", "not audited")),
        "dev_only_exports": access.export_splits(request.user, benchmark) is not None})  # fmt: skip


@login_required
def review_sample(request: HttpRequest, pk: int) -> HttpResponse:
    sample = get_object_or_404(Sample.objects.select_related("benchmark", "category__domain"), pk=pk)
    _reviewable(request, sample.benchmark)
    if not access.can_review_sample(request.user, sample):  # a test sample nobody has annotated: its gold stays hidden
        raise Http404("This test sample is not under review.")
    annotations = selectors.annotations_for_review(sample)
    figures = sample_agreement(annotations)
    # What the reviewer sent, kept on a refusal so nothing they chose or typed is lost.
    sources = {part: _int(request.POST.get(f"source_{part}")) for part in PARTS}
    if request.method == "POST":
        try:
            if request.POST.get("action") == "reject":
                target = get_object_or_404(Annotation, pk=request.POST.get("annotation"), sample=sample)
                comment = request.POST.get(f"comment_{target.pk}") or request.POST.get("comment", "")
                annotation_reject(annotation=target, reviewer=request.user, comment=comment,
                                  notes=notes_from_form(request.POST))
                messages.success(request, "Sent back to its annotator with your comments.")
            else:
                sample_approve(sample=sample, reviewer=request.user, sources=sources,
                               comment=request.POST.get("comment", ""), figures=figures.to_dict())
                messages.success(request, f"Approved {sample.uid}: it now counts and exports.")
            return redirect("annotation:review_sample", pk=sample.pk)
        except ReviewError as error:
            messages.error(request, str(error))
    comparison = review_comparison(sample, annotations)
    return render(request, "annotation/review_sample.html", {
        "sample": sample, "comparison": comparison, "columns": comparison.columns, "figures": figures,
        "parts": [(p, PART_NAMES[p]) for p in PARTS], "chosen": sources, "posted": request.POST},
        status=400 if request.method == "POST" else 200)  # fmt: skip


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


@login_required
@require_GET
def export_zip(request: HttpRequest, slug: str) -> FileResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    _reviewable(request, benchmark)
    # The export is written whole under a partial name and renamed into place, so it is opened after; its
    # folder goes at once, and the open handle keeps the file until FileResponse has streamed and closed it.
    splits = access.export_splits(request.user, benchmark)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{benchmark.slug}.zip"
        benchmark_export(benchmark=benchmark, out=path, splits=splits)
        handle = path.open("rb")  # noqa: SIM115 - closed by FileResponse
    return FileResponse(handle, as_attachment=True, filename=f"{benchmark.slug}{'-dev' if splits else ''}.zip")


@login_required
@require_GET
def export_coco(request: HttpRequest, slug: str) -> JsonResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    _reviewable(request, benchmark)
    splits = access.export_splits(request.user, benchmark)
    response = JsonResponse(coco_from_benchmark(benchmark, splits), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}{"-dev" if splits else ""}-coco.json"'
    return response
