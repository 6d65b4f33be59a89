"""Proposals in the workbench (docs/annotation.md, "Proposals"): the proposal an item's page offers, and what the
annotator did with each of its parts, recorded on the annotation's history (ProposalDecision, tied to the save's
Revision). The decision is read from the saved work, not only from the key pressed: a box accepted then moved is
"edited", with its IoU against the proposed box; a step or the chain, with its edit distance. A proposal is never
an annotation: agreement and review read Annotation rows only, so they count the annotator's final work."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from annotation.agreement import box_agreement, iou
from annotation.models import Annotation, Proposal, ProposalAction, ProposalDecision, Revision, Sample

PARTS = ("region", "transform", "key_step", "toolchain")


def proposal_for_item(sample: Sample) -> Proposal | None:
    """The sample's latest proposal that has something to offer (its reply was read)."""
    for proposal in Proposal.objects.filter(sample=sample).select_related("run").order_by("-created_at", "-pk")[:10]:
        if "reply" not in proposal.errors and "request" not in proposal.errors:
            return proposal
    return None


def proposal_view(proposal: Proposal | None) -> dict[str, Any] | None:
    """What the page shows: the parts that passed validation, the others' errors, the model and the prompt."""
    if proposal is None:
        return None
    return {"id": proposal.pk, "run": proposal.run_id, "model": proposal.model, "prompt": proposal.prompt_version,
            "simulated": bool(proposal.run.details.get("simulated")), "regions": proposal.regions,
            "transform": proposal.transform, "key_steps": proposal.key_steps, "toolchain": proposal.toolchain,
            "confidence": proposal.confidence, "errors": proposal.errors}


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance: insertions, deletions and substitutions turning ``a`` into ``b``."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _call_key(call: Any) -> str:
    call = call if isinstance(call, dict) else {}
    return json.dumps([call.get("tool"), call.get("args") or {}], sort_keys=True)


def _ops_key(ops: Any) -> str:
    return json.dumps(ops or [], sort_keys=True)


def decisions_record(*, annotation: Annotation, revision: Revision, data: dict[str, Any]) -> list[ProposalDecision]:
    """Record the decisions a save carries (``data["proposal"]``: ``{"id", "decisions": [{"part", "index",
    "action"}]}``; boxes, steps and the chain taken from the proposal carry ``"proposal": index``, the chain
    ``"proposal_chain": true`` on the payload). Unknown proposals and parts are ignored: the save stands."""
    given = data.get("proposal")
    if not isinstance(given, dict):
        return []
    proposal = Proposal.objects.filter(pk=given.get("id"), sample_id=annotation.sample_id).first()
    if proposal is None:
        return []
    taken_boxes = {r.get("proposal"): r for r in data.get("regions") or []
                   if isinstance(r, dict) and isinstance(r.get("proposal"), int)}
    taken_steps = {s.get("proposal"): s for s in data.get("key_steps") or []
                   if isinstance(s, dict) and isinstance(s.get("proposal"), int)}
    recorded = []
    for decision in given.get("decisions") or []:
        if not isinstance(decision, dict) or decision.get("part") not in PARTS:
            continue
        part, index, pressed = decision["part"], decision.get("index"), decision.get("action")
        if not isinstance(index, int) or index < 0 or pressed not in ProposalAction.values:
            continue
        proposed, final, measure, action = _judge(proposal, part, index, pressed, data, taken_boxes, taken_steps)
        if action is None:
            continue
        row, _ = ProposalDecision.objects.update_or_create(
            annotation=annotation, proposal=proposal, part=part, index=index,
            defaults={"revision": revision, "action": action, "measure": measure, "proposed": proposed,
                      "final": final})
        recorded.append(row)
    return recorded


def _judge(proposal: Proposal, part: str, index: int, pressed: str, data: dict[str, Any],
           taken_boxes: dict[Any, Any], taken_steps: dict[Any, Any]) -> tuple[Any, Any, float | None, str | None]:
    """(proposed, final, measure, action), the action read from the saved work; None: no such part."""
    if part == "region":
        boxes = proposal.regions or []
        if index >= len(boxes):
            return None, None, None, None
        proposed = boxes[index]["box"]
        taken = taken_boxes.get(index)
        if pressed == ProposalAction.REJECTED or taken is None:
            return proposed, None, None, ProposalAction.REJECTED
        final = [float(v) for v in taken.get("box") or []]
        overlap = iou(proposed, final) if len(final) == 4 else 0.0
        same = all(abs(a - b) < 0.5 for a, b in zip(proposed, final, strict=False)) and len(final) == 4
        return proposed, final, round(overlap, 4), ProposalAction.ACCEPTED if same else ProposalAction.EDITED
    if part == "key_step":
        steps = proposal.key_steps or []
        if index >= len(steps):
            return None, None, None, None
        taken = taken_steps.get(index)
        if pressed == ProposalAction.REJECTED or taken is None:
            return steps[index], None, None, ProposalAction.REJECTED
        final = str(taken.get("text") or "").strip()
        distance = edit_distance(steps[index], final)
        return steps[index], final, float(distance), ProposalAction.ACCEPTED if distance == 0 else ProposalAction.EDITED
    if part == "transform":
        if proposal.transform is None or index != 0:
            return None, None, None, None
        if pressed == ProposalAction.REJECTED:
            return proposal.transform, None, None, ProposalAction.REJECTED
        final = data.get("transform") or []
        same = _ops_key(final) == _ops_key(proposal.transform)
        return proposal.transform, final, None, ProposalAction.ACCEPTED if same else ProposalAction.EDITED
    if proposal.toolchain is None or index != 0:
        return None, None, None, None
    if pressed == ProposalAction.REJECTED or not data.get("proposal_chain"):
        return proposal.toolchain, None, None, ProposalAction.REJECTED
    final_calls = [c for c in data.get("toolchain") or [] if isinstance(c, dict)]
    distance = edit_distance([_call_key(c) for c in proposal.toolchain], [_call_key(c) for c in final_calls])
    final = [{"tool": c.get("tool"), "args": c.get("args") or {}} for c in final_calls]
    return proposal.toolchain, final, float(distance), ProposalAction.ACCEPTED if distance == 0 else ProposalAction.EDITED


QUEUE_ORDERS = {"": "in order", "confidence": "least confident proposal first",
                "disagreement": "most disagreement between two models' proposals first"}


def proposal_order_keys(sample_ids: Sequence[int], order: str) -> dict[int, float]:
    """A sort key per sample for the annotators' queue (lower first); samples without one are left out (they
    come after). ``confidence``: the confidence of the latest valid proposal that gives one. ``disagreement``: minus (1 - the
    mean matched box IoU) between the latest proposals of the two models that proposed last (agreement's
    matching), so the most disputed item comes first."""
    latest: dict[int, dict[str, Proposal]] = {}
    for proposal in (Proposal.objects.filter(sample_id__in=sample_ids).exclude(regions__isnull=True)
                     .order_by("-created_at", "-pk")):
        latest.setdefault(proposal.sample_id, {}).setdefault(proposal.model, proposal)
    keys: dict[int, float] = {}
    for sample_id, by_model in latest.items():
        newest = list(by_model.values())
        if order == "confidence":
            confident = [p for p in newest if p.confidence is not None]
            if confident:
                keys[sample_id] = confident[0].confidence
        elif order == "disagreement" and len(newest) >= 2:
            a, b = newest[0], newest[1]
            agreement = box_agreement([r["box"] for r in a.regions or []], [r["box"] for r in b.regions or []])
            keys[sample_id] = -(1.0 - agreement.mean_iou)
    return keys


__all__ = ["QUEUE_ORDERS", "decisions_record", "proposal_order_keys", "edit_distance", "proposal_for_item", "proposal_view"]
