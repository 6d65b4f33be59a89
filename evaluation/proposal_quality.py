"""How good were a model's proposals (issue 39, docs/annotation.md "How good were the proposals"): per proposal
run and per model, against each item's approved annotation and what annotators did. Reads only.

- Box IoU: the approved img0 boxes matched one to one to the proposed ones (Hungarian on IoU, as agreement
  matches two annotators'); an approved box left unmatched counts 0. Mean over approved boxes, and the share
  above 0.5. Items whose proposed transform turns or flips the image otherwise than the approved one are left
  out (their boxes are in another frame), and counted.
- Transforms accepted unchanged: of the proposed transforms annotators decided on, the share accepted as is.
- Key-step coverage: the board's measure (metrics.process.key_step_coverage) with the approved steps as the
  key steps and a verdict per step: some proposed step shares at least half its words (agreement's
  step_similarity >= 0.5). kcov (the matched prefix) and kcov_any (matched over all).
- Chain edit distance: proposed calls against the approved chain's (tool and arguments), in calls.
- Time per item: from an assignment's creation to its first submit, median minutes, for annotations where the
  annotator decided on this run's proposal, and for the benchmark's other submitted annotations.
A figure with nothing to stand on is "not available", with the reason.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import mean, median
from typing import Any

from annotation.agreement import box_agreement, step_similarity
from annotation.models import (AnnotationStatus, Assignment, Benchmark, Proposal, ProposalAction, ProposalDecision,
                               ProposalRun, RevisionKind)
from annotation.selectors import approved_annotations_for_export
from annotation.workbench.proposals import edit_distance
from evaluation.metrics.process import key_step_coverage

STEP_MATCH = 0.5


@dataclass
class Figure:
    value: float | None
    n: int = 0
    reason: str = ""

    def shown(self, digits: int = 3) -> str:
        return "not available" if self.value is None else f"{self.value:.{digits}f}"

    def as_dict(self) -> dict[str, Any]:
        return {"value": None if self.value is None else round(self.value, 4), "n": self.n,
                **({"not_available": self.reason} if self.value is None else {})}


def _figure(values: list[float], reason: str) -> Figure:
    return Figure(mean(values), len(values)) if values else Figure(None, 0, reason)


@dataclass
class Quality:
    label: str  # "run #3" or the model's name
    model: str
    runs: list[int]
    items: int
    figures: dict[str, Figure] = field(default_factory=dict)
    frame_differs: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "model": self.model, "runs": self.runs, "items": self.items,
                "boxes_left_out_other_frame": self.frame_differs,
                **{name: figure.as_dict() for name, figure in self.figures.items()}}


FIGURES = (("box_iou_mean", "Box IoU, mean"), ("box_iou_share_over_half", "Box IoU > 0.5, share"),
           ("transform_accepted_unchanged", "Transforms accepted unchanged"), ("kcov", "Key-step coverage (kcov)"),
           ("kcov_any", "Key-step coverage (any)"), ("chain_edit_distance", "Chain edit distance (calls)"),
           ("minutes_with_proposals", "Minutes per item, with proposals"),
           ("minutes_without_proposals", "Minutes per item, without"))


def _geometry(ops: Iterable[Any]) -> str:
    return json.dumps([op for op in ops or [] if isinstance(op, dict) and op.get("op") in ("rotate", "flip")],
                      sort_keys=True)


def _call_key(call: Any) -> str:
    return json.dumps([call.get("tool"), call.get("args") or {}], sort_keys=True)


def _minutes(annotation_ids: set[int]) -> list[float]:
    """Assignment creation to its first submit, in minutes, for these annotations."""
    out = []
    for assignment in Assignment.objects.filter(annotation_id__in=annotation_ids).prefetch_related(
            "annotation__revisions"):
        submits = [r.created_at for r in assignment.annotation.revisions.all() if r.kind == RevisionKind.SUBMIT]
        if submits:
            out.append((min(submits) - assignment.created_at).total_seconds() / 60)
    return out


def _quality(label: str, model: str, runs: list[ProposalRun], proposals: list[Proposal], approved: dict[int, Any],
             decisions: list[ProposalDecision], others: set[int]) -> Quality:
    quality = Quality(label=label, model=model, runs=[r.pk for r in runs], items=len(proposals))
    box_ious: list[float] = []
    kcov: list[float] = []
    kcov_any: list[float] = []
    chain: list[float] = []
    for proposal in proposals:
        gold = approved.get(proposal.sample_id)
        if gold is None:
            continue
        gold_boxes = [r.as_box() for r in gold.regions.all() if r.image_ref == "img0"]
        if proposal.regions is not None and gold_boxes:
            if _geometry(proposal.transform or []) != _geometry(gold.transform or []):
                quality.frame_differs += 1
            else:
                matched = box_agreement(gold_boxes, [r["box"] for r in proposal.regions]).matches
                by_gold = {i: value for i, _, value in matched}
                box_ious += [by_gold.get(i, 0.0) for i in range(len(gold_boxes))]
        gold_steps = [s.text for s in gold.key_steps.all()]
        if proposal.key_steps is not None and gold_steps:
            verdicts = [any(step_similarity(g, p) >= STEP_MATCH for p in proposal.key_steps) for g in gold_steps]
            prefix, anywhere = key_step_coverage(verdicts)
            kcov.append(prefix or 0.0)
            kcov_any.append(anywhere or 0.0)
        gold_calls = [c.as_dict() for c in gold.tool_calls.all()]
        if proposal.toolchain is not None and gold_calls:
            chain.append(float(edit_distance([_call_key(c) for c in proposal.toolchain],
                                             [_call_key(c) for c in gold_calls])))
    no_gold = "no item of these proposals has an approved annotation with "
    quality.figures["box_iou_mean"] = _figure(box_ious, no_gold + "boxes (in the same frame) and valid proposed boxes")
    share = [1.0 if v > 0.5 else 0.0 for v in box_ious]
    quality.figures["box_iou_share_over_half"] = _figure(share, quality.figures["box_iou_mean"].reason)
    transforms = [1.0 if d.action == ProposalAction.ACCEPTED else 0.0 for d in decisions if d.part == "transform"]
    quality.figures["transform_accepted_unchanged"] = _figure(
        transforms, "no annotator has decided on a proposed transform of these runs yet")
    quality.figures["kcov"] = _figure(kcov, no_gold + "key steps and valid proposed steps")
    quality.figures["kcov_any"] = _figure(kcov_any, quality.figures["kcov"].reason)
    quality.figures["chain_edit_distance"] = _figure(chain, no_gold + "a chain and a valid proposed chain")
    with_ids = {d.annotation_id for d in decisions}
    quality.figures["minutes_with_proposals"] = _figure(
        [median(m)] if (m := _minutes(with_ids)) else [], "no annotation that used these proposals is submitted yet")
    quality.figures["minutes_with_proposals"].n = len(m)
    quality.figures["minutes_without_proposals"] = _figure(
        [median(w)] if (w := _minutes(others)) else [], "no annotation of the benchmark was submitted without proposals")
    quality.figures["minutes_without_proposals"].n = len(w)
    return quality


def proposal_quality(benchmark: Benchmark) -> list[Quality]:
    """One row per proposal run (newest first), then one per model over its runs."""
    runs = list(ProposalRun.objects.filter(benchmark=benchmark).order_by("-created_at", "-pk"))
    proposals_by_run: dict[int, list[Proposal]] = defaultdict(list)
    for proposal in Proposal.objects.filter(run__benchmark=benchmark):
        proposals_by_run[proposal.run_id].append(proposal)
    decisions_by_run: dict[int, list[ProposalDecision]] = defaultdict(list)
    for decision in ProposalDecision.objects.filter(proposal__run__benchmark=benchmark).select_related("proposal"):
        decisions_by_run[decision.proposal.run_id].append(decision)
    approved = approved_annotations_for_export(benchmark)
    decided = {d.annotation_id for ds in decisions_by_run.values() for d in ds}
    submitted = set(Assignment.objects.filter(sample__benchmark=benchmark, annotation__status__in=[
        AnnotationStatus.SUBMITTED, AnnotationStatus.APPROVED, AnnotationStatus.REJECTED]).values_list(
        "annotation_id", flat=True))
    others = submitted - decided
    rows = [_quality(f"run #{run.pk}", run.model, [run], proposals_by_run[run.pk], approved, decisions_by_run[run.pk],
                     others) for run in runs]
    by_model: dict[str, list[ProposalRun]] = defaultdict(list)
    for run in runs:
        by_model[run.model].append(run)
    for model, model_runs in sorted(by_model.items()):
        rows.append(_quality(model, model, model_runs, [p for r in model_runs for p in proposals_by_run[r.pk]],
                             approved, [d for r in model_runs for d in decisions_by_run[r.pk]], others))
    return rows


__all__ = ["FIGURES", "Figure", "Quality", "proposal_quality"]
