"""Review: agreement between a sample's annotations, then approve (one, or a merge) or reject.

Approving makes the chosen annotation the sample's one approved annotation (the one that counts
and exports); the previously approved one (often the imported annotation) steps back to
`submitted`, so it stays visible in the history. The approved question and answer are written
to the Sample. Rejecting returns the item to its annotator with the reviewer's comment.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.agreement import Agreement, AnnotationView, agreement
from annotation.models import (
    Annotation,
    AnnotationStatus,
    Assignment,
    AssignmentStatus,
    Region,
    ReviewAction,
    ReviewDecision,
    Revision,
    RevisionKind,
    Sample,
)
from annotation.workbench.editing import _write, annotation_snapshot, payload_clean

PARTS = ("regions", "answer", "key_steps", "toolchain")


class ReviewError(Exception):
    pass


def annotation_view(annotation: Annotation) -> AnnotationView:
    # An imported annotation has no answer of its own: the sample's answer is the file's.
    answer = annotation.answer or (annotation.sample.answer if annotation.annotator_id is None else "")
    return AnnotationView(boxes=[_banded(r) for r in annotation.regions.all()], answer=answer,
                          steps=[s.text for s in annotation.key_steps.all()])


def _banded(region: Region) -> list[float]:
    """The box, moved into a band of its own per medium (img<k> by k * 10^7 px), so that boxes on
    different images of a sample never overlap and are never matched to each other."""
    k = int(region.image_ref[3:]) if region.image_ref[3:].isdigit() else 0
    x1, y1, x2, y2 = region.as_box()
    return [x1 + k * 10_000_000, y1, x2 + k * 10_000_000, y2]


def sample_agreement(annotations: list[Annotation]) -> Agreement:
    """Agreement among the annotators' submitted work (the imported annotation is not a vote)."""
    return agreement([annotation_view(a) for a in annotations if a.annotator_id is not None])


def _payload_for(annotation: Annotation) -> dict:
    payload = annotation_snapshot(annotation)
    if annotation.annotator_id is None:  # imported: its question and answer live on the sample
        sample = annotation.sample
        payload.update(question=sample.question, options=sample.options, answer=sample.answer,
                       answer_type=sample.answer_type)
    return payload


@transaction.atomic
def sample_approve(*, sample: Sample, reviewer: AbstractBaseUser, sources: dict[str, int], comment: str = "",
                   figures: dict | None = None) -> Annotation:
    """Approve one annotation (all of `sources` naming the same id) or a merge of several
    (`sources` maps each of PARTS to the annotation it comes from); returns the approved one."""
    candidates = {a.pk: a for a in sample.annotations.exclude(status=AnnotationStatus.DRAFT)
                  .prefetch_related("regions", "key_steps", "tool_calls")}
    missing = [p for p in PARTS if sources.get(p) not in candidates]
    if missing:
        raise ReviewError(f"choose a submitted annotation for: {', '.join(missing)}")
    chosen = {sources[p] for p in PARTS}
    Sample.objects.select_for_update().filter(pk=sample.pk).first()
    previous = sample.annotations.filter(status=AnnotationStatus.APPROVED).first()
    if len(chosen) == 1:
        approved = candidates[chosen.pop()]
    else:
        merged = _payload_for(candidates[sources["regions"]])
        answer_from = _payload_for(candidates[sources["answer"]])
        for key in ("question", "options", "answer", "answer_type"):
            merged[key] = answer_from[key]
        merged["key_steps"] = _payload_for(candidates[sources["key_steps"]])["key_steps"]
        merged["toolchain"] = _payload_for(candidates[sources["toolchain"]])["toolchain"]
        approved = Annotation.objects.create(sample=sample, annotator=reviewer, status=AnnotationStatus.SUBMITTED)
        approved.sample = sample
        _write(approved, payload_clean(approved, merged))
    if previous is not None and previous.pk != approved.pk:
        previous.status = AnnotationStatus.SUBMITTED
        previous.save(update_fields=["status", "updated_at"])
    approved.status = AnnotationStatus.APPROVED
    approved.version += 1
    approved.save(update_fields=["status", "version", "updated_at"])
    _copy_answer_to_sample(sample, approved)
    Revision.objects.create(annotation=approved, author=reviewer, version=approved.version, kind=RevisionKind.REVIEW,
                            snapshot=_payload_for(approved))
    ReviewDecision.objects.create(sample=sample, reviewer=reviewer, action=ReviewAction.APPROVE, annotation=approved,
                                  comment=comment, agreement=figures or {})
    return approved


def _copy_answer_to_sample(sample: Sample, annotation: Annotation) -> None:
    if annotation.annotator_id is None or not annotation.answer:
        return
    sample.question = annotation.question or sample.question
    sample.options = annotation.options
    sample.answer = annotation.answer
    sample.answer_type = annotation.answer_type or sample.answer_type
    sample.full_clean(validate_unique=False)
    sample.save(update_fields=["question", "options", "answer", "answer_type", "updated_at"])


@transaction.atomic
def annotation_reject(*, annotation: Annotation, reviewer: AbstractBaseUser, comment: str) -> None:
    """Send the annotation back to its annotator with a comment (required: they need to know why)."""
    if not comment.strip():
        raise ReviewError("say what needs changing: the comment goes to the annotator")
    annotation = Annotation.objects.select_for_update().get(pk=annotation.pk)
    if annotation.status != AnnotationStatus.SUBMITTED or annotation.annotator_id is None:
        raise ReviewError("only a submitted annotation by an annotator can be sent back")
    annotation.status = AnnotationStatus.REJECTED
    annotation.version += 1  # an editor still open on the old version must reload
    annotation.save(update_fields=["status", "version", "updated_at"])
    Assignment.objects.filter(annotation=annotation).update(status=AssignmentStatus.RETURNED, review_comment=comment.strip())
    ReviewDecision.objects.create(sample=annotation.sample, reviewer=reviewer, action=ReviewAction.REJECT,
                                  annotation=annotation, comment=comment.strip())
