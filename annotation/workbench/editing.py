"""Saving an annotation from the item page: validation, revisions, stale-save detection, submit.

The page sends the whole annotation (a "payload", below) with the version it was based on.
A save based on an older version is refused and nothing of the current annotation changes; the
refused edit is stored as a `conflict` revision (a kept draft) that the author can restore.
Validation is the import's (annotation.benchmark_fields), so what the workbench accepts, the
benchmark file format accepts too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation import benchmark_fields as bf
from annotation.declared_tools import declared_from_dicts
from annotation.media import media_of
from annotation.workbench.proposals import decisions_record
from annotation.models import (
    Annotation,
    AnnotationStatus,
    Assignment,
    AssignmentStatus,
    KeyStep,
    ReferenceToolCall,
    Region,
    Revision,
    RevisionKind,
)

EDITABLE = (AnnotationStatus.DRAFT, AnnotationStatus.REJECTED)
VERDICTS = ("unchecked", "valid", "invalid")


class PayloadError(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass
class SaveResult:
    ok: bool
    version: int
    message: str = ""
    conflict: Revision | None = None
    errors: list[str] = field(default_factory=list)
    # A save of everything else: the parts with a problem kept as stored (their problems in `errors`).
    held: list[str] = field(default_factory=list)


# The parts of an annotation a save can keep as stored while it saves the others (`payload_clean(held=...)`):
# each is checked on its own (the boxes with the transform whose frame they are in).
PARTS = {"qa": ("question", "options", "answer", "answer_type"), "frame": ("transform", "regions"),
         "key_steps": ("key_steps",), "toolchain": ("toolchain",)}
PART_NAMES = {"qa": "the question and answer", "frame": "the transform and boxes", "key_steps": "the key steps",
              "toolchain": "the toolchain"}


def payload_clean(annotation: Annotation, data: Any, *, complete: bool = False,
                  held: dict[str, list[str]] | None = None) -> dict:
    """The payload checked and normalised, or PayloadError listing every problem.

    `complete` (submit) also requires an answer and every LLM-drafted step verified. With `held` (a list, for a
    save that is not a submit), a part with a problem (an unfinished tool call, an empty step) keeps its stored
    value and its problems go into `held` (by part); PayloadError only when no part is left to save. Typing
    elsewhere is never refused because of one part."""
    errors: list[str] = []
    failed: dict[str, list[str]] = {}
    part = "qa"

    def err(where: str, message: str) -> None:
        errors.append(f"{where}: {message}")
        failed.setdefault(part, []).append(f"{where}: {message}")

    if not isinstance(data, dict):
        raise PayloadError(["expected a JSON object"])
    sample = annotation.sample
    registry = bf.default_registry_view(declared_from_dicts(sample.benchmark.declared_tools or ()))
    part = "frame"
    transform = bf.parse_transform(data.get("transform"), registry, err)
    # Boxes on img0 lie in its frame after the transform; on another medium, in its own pixels.
    media = media_of(sample)
    frames: dict[str, tuple[int, int] | None] = {m.ref: (m.width, m.height) for m in media}
    frames["img0"] = bf.frame_size(sample.width, sample.height, transform) if transform is not None else None
    regions_in = data.get("regions") or []
    calls_in = data.get("toolchain") or []
    if not isinstance(regions_in, list) or not isinstance(calls_in, list):
        raise PayloadError(["regions and toolchain must be lists"])
    if transform is None:  # boxes are checked in the frame of a transform that parses
        regions_in = []
    located = bf.parse_located_regions(
        [{"box": r.get("box"), "image": r.get("image") or "img0"} if isinstance(r, dict) else r for r in regions_in],
        frames, err,
    )  # fmt: skip
    labels = [str(r.get("label") or "")[:100] if isinstance(r, dict) else "" for r in regions_in]
    part = "key_steps"
    steps = _steps(data.get("key_steps"), err, skip_empty=held is not None)
    part = "toolchain"
    chain = bf.parse_toolchain([_call(c) for c in calls_in], registry, err, inputs=[m.ref for m in media])
    verdicts = _verdicts(calls_in, err)
    part = "qa"
    question = str(data.get("question") or "").strip()
    options = bf.parse_options(data.get("options") or None, err)
    answer = str(data.get("answer") or "").strip()
    answer_type = bf.infer_answer_type(data.get("answer_type") or None, options, answer or None, err)
    if answer:
        answer = _answer(answer, answer_type, options, err)
    if complete:
        if not question:
            err("question", "the question is empty")
        if not answer:
            err("answer", "give the answer before submitting")
        unverified = [i for i, s in enumerate(steps or [], start=1) if not s["verified"]]
        if unverified:
            err("key_steps", f"verify step {', '.join(map(str, unverified))} (drafted steps must be checked by a person)")
    if errors and (held is None or len(failed) == len(PARTS)):
        raise PayloadError(errors)
    stored = annotation_snapshot(annotation) if failed else {}
    clean: dict[str, Any] = {"question": question, "options": options, "answer": answer, "answer_type": answer_type}
    if "frame" in failed:
        clean.update(transform=stored["transform"], regions=stored["regions"])
    else:
        clean.update(transform=transform, regions=[{"box": box, "label": label, "image": ref}
                                                   for (ref, box), label in zip(located or [], labels, strict=True)])
    clean["key_steps"] = steps
    if "toolchain" not in failed:  # (a chain with a problem may have lost a call on the way: not zipped)
        clean["toolchain"] = [{**c, **v} for c, v in zip(chain, verdicts, strict=True)]
    for name, problems in failed.items():
        clean.update({key: stored[key] for key in PARTS[name]})
        assert held is not None
        held[name] = problems
    return clean


def _call(call: Any) -> Any:
    if isinstance(call, dict):  # the verifier's fields are not part of the file format
        return {k: v for k, v in call.items() if k not in ("verdict", "note")}
    return call


def _verdicts(calls: list, err: Any) -> list[dict]:
    out = []
    for index, call in enumerate(calls, start=1):
        call = call if isinstance(call, dict) else {}
        verdict = call.get("verdict") or "unchecked"
        if verdict not in VERDICTS:
            err(f"toolchain[{index}].verdict", f"expected one of {', '.join(VERDICTS)}")
        out.append({"verdict": verdict, "note": str(call.get("note") or "")[:2000]})
    return out


def _steps(value: Any, err: Any, *, skip_empty: bool = False) -> list[dict]:
    """The key steps; `skip_empty` (a save, not a submit): a step added but not written yet is left out, not
    refused (the page keeps it, and it is saved once it has its text)."""
    if value is None:
        return []
    if not isinstance(value, list):
        err("key_steps", "expected a list")
        return []
    steps = []
    for index, item in enumerate(value, start=1):
        item = {"text": item} if isinstance(item, str) else item
        if skip_empty and isinstance(item, dict) and not str(item.get("text") or "").strip():
            continue
        if not isinstance(item, dict) or not str(item.get("text") or "").strip():
            err(f"key_steps[{index}]", "a step needs its text")
            continue
        origin = item.get("origin") or "human"
        if origin not in ("human", "llm"):
            err(f"key_steps[{index}].origin", "expected 'human' or 'llm'")
        # A step a person wrote is verified by writing it; a drafted one only when ticked.
        verified = True if origin == "human" else bool(item.get("verified"))
        steps.append({"text": str(item["text"]).strip(), "origin": origin, "verified": verified,
                      "note": str(item.get("note") or "")[:2000]})
    return steps


def _answer(answer: str, answer_type: str, options: dict | None, err: Any) -> str:
    if answer_type == "choice":
        letter = answer.upper()
        if not options or letter not in options:
            err("answer", f"{answer!r} is not one of the options {', '.join(options or {})}")
        return letter
    if answer_type == "number" and bf.parse_number(answer) is None:
        err("answer", f"{answer!r} is not a number")
    return answer


def annotation_snapshot(annotation: Annotation) -> dict:
    """The payload of the annotation as stored (what the page loads, and a revision holds)."""
    return {
        "question": annotation.question, "options": annotation.options, "answer": annotation.answer,
        "answer_type": annotation.answer_type, "transform": annotation.transform,
        "regions": [{"box": [bf.tidy_number(v) for v in r.as_box()], "label": r.label, "image": r.image_ref}
                    for r in annotation.regions.all()],
        "key_steps": [{"text": s.text, "origin": s.origin, "verified": s.verified, "note": s.note}
                      for s in annotation.key_steps.all()],
        "toolchain": [{**c.as_dict(), "verdict": c.verdict, "note": c.note} for c in annotation.tool_calls.all()],
    }  # fmt: skip


def _chain_core(chain: list[dict]) -> list[tuple]:
    return [(c["tool"], json.dumps(c.get("args"), sort_keys=True), c.get("input"), c.get("output")) for c in chain]


def _write(annotation: Annotation, payload: dict) -> None:
    before = _chain_core(annotation_snapshot(annotation)["toolchain"])
    transform_before = json.dumps(annotation.transform or [], sort_keys=True)
    for attr in ("question", "options", "answer", "answer_type", "transform"):
        setattr(annotation, attr, payload[attr])
    if _chain_core(payload["toolchain"]) != before:
        annotation.chain_verified = False  # a verified chain stays verified only as it was run
    if any(call.get("verdict") != "valid" for call in payload["toolchain"]):
        # Verified needs every call marked valid (chain.annotation_chain_verify): a call marked otherwise since
        # withdraws it, or the page would say "verified" beside a call it calls invalid.
        annotation.chain_verified = False
    if json.dumps(payload["transform"] or [], sort_keys=True) != transform_before:
        # A chain starts from the recovery transform (docs/annotation.md): a chain saved unchanged with another
        # transform (a page that did not rewrite it, an API client) was not checked against the transform it now has.
        annotation.chain_verified = False
    annotation.version += 1
    annotation.save(update_fields=["question", "options", "answer", "answer_type", "transform",
                                   "chain_verified", "version", "updated_at"])
    annotation.regions.all().delete()
    annotation.key_steps.all().delete()
    annotation.tool_calls.all().delete()
    Region.objects.bulk_create(
        Region(annotation=annotation, position=i, x1=r["box"][0], y1=r["box"][1], x2=r["box"][2], y2=r["box"][3],
               label=r["label"], image_ref=r.get("image", "img0")) for i, r in enumerate(payload["regions"]))  # fmt: skip
    KeyStep.objects.bulk_create(
        KeyStep(annotation=annotation, position=i, text=s["text"], origin=s["origin"], verified=s["verified"],
                note=s["note"]) for i, s in enumerate(payload["key_steps"]))  # fmt: skip
    calls = ReferenceToolCall.rows_for(annotation, [_call(c) for c in payload["toolchain"]])
    for call, c in zip(calls, payload["toolchain"], strict=True):
        call.verdict, call.note = c["verdict"], c["note"]
    ReferenceToolCall.objects.bulk_create(calls)


def annotation_save(
    *, annotation_id: int, user: AbstractBaseUser, base_version: int, data: Any, submit: bool = False,
    kind: str = RevisionKind.SAVE,
) -> SaveResult:
    """Save (and with `submit`, submit for review) the annotator's edit of their annotation."""
    with transaction.atomic():
        annotation = Annotation.objects.select_for_update().select_related("sample").get(pk=annotation_id)
        if annotation.status not in EDITABLE:
            return SaveResult(False, annotation.version, errors=[
                f"this annotation is {annotation.get_status_display().lower()} and can no longer be edited"])
        held: dict[str, list[str]] | None = None if submit else {}
        try:
            payload = payload_clean(annotation, data, complete=submit, held=held)
        except PayloadError as error:
            return SaveResult(False, annotation.version, errors=error.errors)
        if base_version != annotation.version:
            kept = Revision.objects.create(annotation=annotation, author=user, version=base_version,
                                           kind=RevisionKind.CONFLICT, snapshot=payload)
            return SaveResult(False, annotation.version, conflict=kept, message=(
                f"Not saved: this annotation changed since you opened it (you edited version {base_version}, "
                f"it is now version {annotation.version}). Your edit is kept as draft #{kept.pk} in the history; "
                "reload to see the current version, then restore your draft if you want it."))
        _write(annotation, payload)
        revision = Revision.objects.create(annotation=annotation, author=user, version=annotation.version,
                                           kind=RevisionKind.SUBMIT if submit else kind, snapshot=payload)
        if isinstance(data, dict) and "proposal" in data and "frame" not in (held or {}):
            # What was done with a model's proposal, on this save's revision (docs/annotation.md, "Proposals").
            decisions_record(annotation=annotation, revision=revision, data=data)
        assignment = Assignment.objects.filter(annotation=annotation).first()
        if submit:
            annotation.status = AnnotationStatus.SUBMITTED
            annotation.save(update_fields=["status", "updated_at"])
            if assignment is not None:
                assignment.status = AssignmentStatus.SUBMITTED
                assignment.locked_until = None
                assignment.save(update_fields=["status", "locked_until", "updated_at"])
        elif assignment is not None:
            from annotation.workbench.assignments import assignment_touch

            assignment_touch(assignment=assignment)
        if held:  # the rest saved; the parts with a problem kept as stored, their problems said
            names = " and ".join(PART_NAMES[name] for name in held)
            return SaveResult(True, annotation.version, held=list(held),
                              errors=[problem for problems in held.values() for problem in problems],
                              message=f"Saved, except {names}: fix the problems listed, and it is saved with the rest.")
        return SaveResult(True, annotation.version, message="Submitted for review." if submit else "Saved.")


def annotation_restore(*, revision: Revision, user: AbstractBaseUser) -> SaveResult:
    """Make a kept (or any earlier) snapshot the current annotation, as a new version."""
    current = Annotation.objects.only("version").get(pk=revision.annotation_id).version
    return annotation_save(annotation_id=revision.annotation_id, user=user, base_version=current,
                           data=revision.snapshot, kind=RevisionKind.RESTORE)

