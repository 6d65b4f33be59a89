"""Review: agreement between a sample's annotations, then approve (one, or a merge) or reject.

The reviewer picks every part explicitly (nothing is preselected, so one careless click cannot
replace the annotators' work with the imported annotation). Approving makes the chosen annotation
the sample's one approved annotation (the one that counts
and exports); the previously approved one (often the imported annotation) steps back to
`submitted`, so it stays visible in the history. The approved question and answer are written
to the Sample. Rejecting returns the item to its annotator with the reviewer's comment and their
notes on single boxes, key steps and tool calls (ReviewNote), which only that annotator sees.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.agreement import Agreement, AnnotationView, agreement
from annotation.downloads.services import downloads_request
from annotation.models import (
    Annotation,
    AnnotationStatus,
    Assignment,
    AssignmentStatus,
    Region,
    ReviewAction,
    ReviewDecision,
    ReviewNote,
    ReviewNotePart,
    Revision,
    RevisionKind,
    Sample,
)
from annotation.workbench.editing import _write, annotation_snapshot, payload_clean

PARTS = ("regions", "answer", "key_steps", "toolchain")
PART_NAMES = {"regions": "boxes (with the transform)", "answer": "question and answer", "key_steps": "key steps",
              "toolchain": "toolchain"}
# The form's note fields: note_region_<i>, note_key_step_<i>, note_tool_call_<i> (i from 0).
NOTE_FIELD = re.compile(r"^note_(region|key_step|tool_call)_(\d{1,4})$")


class ReviewError(Exception):
    pass


@dataclass(frozen=True)
class NoteInput:
    part: str  # a ReviewNotePart value
    position: int
    text: str


def notes_from_form(data: Mapping[str, str]) -> list[NoteInput]:
    """The non-empty notes of a send-back form, in the page's order (boxes, key steps, calls)."""
    notes = []
    for key, value in data.items():
        match = NOTE_FIELD.match(key)
        if match and value.strip():
            notes.append(NoteInput(match[1], int(match[2]), value.strip()))
    order = list(ReviewNotePart.values)
    return sorted(notes, key=lambda n: (order.index(n.part), n.position))


def call_text(call: dict) -> str:
    """A tool call as a reader writes it: `img1 = zoom_in(img0, bbox=[10, 20, 50, 60])`."""
    if "args" not in call:
        return f"{call['tool']} (name only)"
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call["args"].items())
    return f"{call['output']} = {call['tool']}({call['input']}{', ' + args if args else ''})"


def _note_targets(annotation: Annotation) -> dict[str, list[str]]:
    snapshot = annotation_snapshot(annotation)
    return {
        ReviewNotePart.REGION: [f"{r['image']} {json.dumps(r['box'])}{' ' + r['label'] if r['label'] else ''}"
                                for r in snapshot["regions"]],
        ReviewNotePart.KEY_STEP: [s["text"] for s in snapshot["key_steps"]],
        ReviewNotePart.TOOL_CALL: [call_text(c) for c in snapshot["toolchain"]],
    }


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
    missing = [PART_NAMES[p] for p in PARTS if sources.get(p) not in candidates]
    if missing:
        raise ReviewError("Nothing approved: choose, for each part, the annotation it comes from. "
                          f"Not chosen yet: {', '.join(missing)}.")
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
    # The gold changed: the downloads of the new state, after a pause that lets a burst of approvals coalesce.
    downloads_request(benchmark=sample.benchmark, countdown=settings.DOWNLOAD_APPROVAL_DELAY_SECONDS)
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
def annotation_reject(*, annotation: Annotation, reviewer: AbstractBaseUser, comment: str,
                      notes: list[NoteInput] = ()) -> ReviewDecision:
    """Send the annotation back to its annotator with a comment and/or notes on single boxes, key
    steps and tool calls (at least one: they need to know why)."""
    comment = comment.strip()
    if not comment and not notes:
        raise ReviewError("say what needs changing (a comment, or a note on a box, step or call): it goes to the annotator")
    annotation = Annotation.objects.select_for_update().get(pk=annotation.pk)
    if annotation.status != AnnotationStatus.SUBMITTED or annotation.annotator_id is None:
        raise ReviewError("only a submitted annotation by an annotator can be sent back")
    targets = _note_targets(annotation)
    for note in notes:
        if note.part not in targets or not 0 <= note.position < len(targets[note.part]):
            raise ReviewError(f"the note on {ReviewNotePart(note.part).label.lower()} {note.position + 1} names an item "
                              "this annotation does not have (it changed?): reload the page")
    annotation.status = AnnotationStatus.REJECTED
    annotation.version += 1  # an editor still open on the old version must reload
    annotation.save(update_fields=["status", "version", "updated_at"])
    Assignment.objects.filter(annotation=annotation).update(status=AssignmentStatus.RETURNED, review_comment=comment)
    decision = ReviewDecision.objects.create(sample=annotation.sample, reviewer=reviewer, action=ReviewAction.REJECT,
                                             annotation=annotation, comment=comment)
    ReviewNote.objects.bulk_create([
        ReviewNote(decision=decision, part=n.part, position=n.position, text=n.text,
                   target=targets[n.part][n.position][:300])
        for n in notes])  # fmt: skip
    return decision


# ---- the review page's comparison -----------------------------------------------------------------
COLOURS = 8  # annotators' colours (workbench.css: .ann-c0 ... .ann-c7); the imported annotation has its own


def _geometry(transform: list[dict]) -> list[dict]:
    """The operations that move pixels (as the workbench's editor counts them): rotate and flip."""
    return [op for op in transform or () if isinstance(op, dict) and op.get("op") in ("rotate", "flip")]


@dataclass
class ReviewColumn:
    annotation: Annotation
    snapshot: dict
    frame: object  # previews.Frame of its own transform
    colour: str  # a CSS class
    on_overlay: bool  # its img0 boxes are drawn on the shared image (same rotation and flip)
    rejections: list[ReviewDecision]

    @property
    def who(self) -> str:
        return self.annotation.annotator.username if self.annotation.annotator_id else "imported"

    @property
    def calls(self) -> list[str]:
        return [call_text(c) for c in self.snapshot["toolchain"]]


@dataclass
class Comparison:
    columns: list[ReviewColumn]
    overlay_transform: list[dict]  # the shared frame's rotation and flip
    frame: object


def review_comparison(sample: Sample, annotations: list[Annotation]) -> Comparison:
    """Every annotation of the sample as a column, each with a colour; their boxes overlaid on one
    image in the frame (rotation and flip) most of them share. An annotation drawn in another frame
    keeps its own image in its column (its boxes cannot be laid over the others')."""
    from annotation.workbench.previews import frame_of

    snapshots = [annotation_snapshot(a) for a in annotations]
    keys = [json.dumps(_geometry(s["transform"]), sort_keys=True) for s in snapshots]
    shared = max(keys, key=lambda k: (keys.count(k), -keys.index(k))) if keys else "[]"
    overlay = json.loads(shared)
    columns, k = [], 0
    for annotation, snapshot, key in zip(annotations, snapshots, keys, strict=True):
        if annotation.annotator_id is None:
            colour = "ann-imported"
        else:
            colour, k = f"ann-c{k % COLOURS}", k + 1
        rejections = [d for d in annotation.review_decisions.all() if d.action == ReviewAction.REJECT]
        columns.append(ReviewColumn(annotation, snapshot, frame_of(sample, snapshot["transform"]), colour,
                                    key == shared, rejections))
    return Comparison(columns, overlay, frame_of(sample, overlay))
