"""A trace as a person needs to see it: the prediction line, the gold, the re-run images, the boxes.

Only what the model wrote and what the benchmark holds goes in here, never a judge's verdict or the
scorer's correctness: the review page is blind to the judge (tests check the rendered page).

Without ``gold`` (a test-split sample, for anyone but staff and the benchmark's admins), the view
holds no gold either: no answer, key steps, regions, recovery transform or reference toolchain.
The person then judges the final answer from the image and the question, and the tool calls; with
no key steps there are no key-step or step-score questions (docs/security.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings

from annotation.benchmark_format import frame_size as _frame_size
from annotation.declared_tools import declared_tool_names
from annotation.imagetools import (
    ChainResult,
    ToolError,
    apply_transform,
    load_image,
    run_chain,
)
from annotation.media import chain_inputs
from annotation.models import Annotation, AnnotationStatus, Sample
from evaluation.metrics import extract_answer
from evaluation.models import Submission
from evaluation.validation import iter_prediction_objects
from trace_review.models import Trace

BOX_ARGS = ("bbox", "box", "region")


@dataclass(frozen=True, slots=True)
class Shape:
    """How many verdicts of each kind a trace asks for; a verdict must match it."""

    n_key_steps: int
    n_calls: int
    n_steps: int


@dataclass
class TraceView:
    trace: Trace
    sample: Sample
    line: dict[str, Any]
    final_answer: str
    key_steps: list[str]
    reference_calls: list[dict[str, Any]]
    regions: list[list[float]]
    transform: list[dict]
    steps: list[dict[str, Any]] = field(default_factory=list)
    chain_error: str | None = None
    frame: tuple[int, int] = (0, 0)  # width, height of the frame the regions are in
    zoom_boxes: list[dict[str, Any]] = field(default_factory=list)
    other_regions: list[dict[str, Any]] = field(default_factory=list)  # on img1, img2, ...
    media: list[dict[str, Any]] = field(default_factory=list)  # for the page, when there are several
    gold: bool = True  # False: the sample's gold is withheld from this person (test split)

    @property
    def answer(self) -> str | None:
        """The gold answer, or None when it is withheld."""
        return self.sample.answer if self.gold else None

    @property
    def shape(self) -> Shape:
        n_calls = sum(1 for s in self.steps if s.get("tool"))
        # Steps are scored against the key steps (spec 6): no key steps, nothing to score them by.
        return Shape(len(self.key_steps), n_calls, len(self.steps) if self.key_steps else 0)


def as_json(value: Any) -> str:
    """Arguments as the model wrote them (JSON), not as Python prints a dict."""
    return json.dumps(value, ensure_ascii=False, default=str)


def prediction_line(submission: Submission, uid: str, mode: str) -> dict[str, Any]:
    """The one line of the kept prediction file for (sample, mode); {} when the file is gone."""
    try:
        with submission.file.open("rb") as stream:
            for obj in iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES):
                if isinstance(obj, dict) and str(obj.get("sample_id")) == uid and obj.get("mode") == mode:
                    return obj
    except (FileNotFoundError, ValueError):
        return {}
    return {}


def approved_annotation(sample: Sample) -> Annotation | None:
    return (Annotation.objects.filter(sample=sample, status=AnnotationStatus.APPROVED)
            .prefetch_related("key_steps", "regions", "tool_calls").first())


def _box(args: Any) -> list[float] | None:
    if not isinstance(args, dict):
        return None
    for key in BOX_ARGS:
        value = args.get(key)
        if isinstance(value, (list, tuple)) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
            return [float(v) for v in value]
    return None


def chain_of(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool calls of a prediction line, in the shape ``run_chain`` takes."""
    steps = [s for s in (line.get("steps") or []) if isinstance(s, dict)]
    return [s["tool"] for s in steps if isinstance(s.get("tool"), dict)]


def rerun(sample: Sample, line: dict[str, Any]) -> tuple[ChainResult | None, str | None]:
    chain = chain_of(line)
    if not chain:
        return None, None
    try:
        first, extras = chain_inputs(sample)  # img0 and the sample's other media (img1, ...)
        ran = run_chain(first, chain, extra_images=extras, declared=declared_tool_names(sample.benchmark))
    except (OSError, ValueError, ToolError) as exc:  # a missing or unreadable image: say so, not a 500
        return None, f"the image could not be loaded: {exc}"
    return ran, ran.error


def trace_view(trace: Trace, *, gold: bool, run: bool = True) -> TraceView:
    """The trace as its reviewer sees it; ``gold``: may this person see the sample's gold (access.sees_gold)."""
    sample = trace.sample
    line = prediction_line(trace.submission, sample.uid, trace.mode)
    ann = approved_annotation(sample) if gold else None
    view = TraceView(
        trace=trace, sample=sample, line=line, gold=gold,
        final_answer=extract_answer(str(line.get("answer") or ""), str(line.get("response") or "")),
        key_steps=[k.text for k in ann.key_steps.all()] if ann else [],
        reference_calls=[{"tool": c.tool, "args": as_json(c.args), "input": "" if c.name_only else c.input_ref,
                          "output": "" if c.name_only else c.output_ref}
                         for c in ann.tool_calls.all()] if ann else [],
        # The frame shows img0; regions on the sample's other media are listed with their image.
        regions=[[r.x1, r.y1, r.x2, r.y2] for r in ann.regions.all() if r.image_ref == "img0"] if ann else [],
        other_regions=[{"image": r.image_ref, "box": [r.x1, r.y1, r.x2, r.y2]}
                       for r in ann.regions.all() if r.image_ref != "img0"] if ann else [],
        transform=list(ann.transform or []) if ann else [],
    )
    ran, view.chain_error = rerun(sample, line) if run else (None, None)
    frame = frame_size(sample, view.transform)
    view.frame = frame
    others = {f"img{k}" for k in range(1, sample.media.count())}
    call_index = 0
    for i, step in enumerate(s for s in (line.get("steps") or []) if isinstance(s, dict)):
        item: dict[str, Any] = {"n": i + 1, "index": i, "thought": str(step.get("thought") or "")}
        tool = step.get("tool")
        if isinstance(tool, dict):
            item["tool"] = {"name": str(tool.get("name") or ""), "args": as_json(tool.get("args") or {}),
                            "input": tool.get("input") or "", "output": tool.get("output") or "",
                            "error": tool.get("error")}
            item["call_index"] = call_index
            result = ran.steps[call_index] if ran and call_index < len(ran.steps) else None
            if result is not None:
                item["run"] = {"output": result.output, "error": result.error,
                               "image": result.output if result.error is None and result.output in ran.images else None}
            box = _box((result.measurements if result else None) or None) or _box(tool.get("args"))
            source = ran.images.get(result.input) if ran and result else None
            # A box is drawn over the regions' frame only when its input image has that frame's size;
            # otherwise its pixels mean something else (a crop, a rotation) and drawing it would mislead.
            on_other_medium = result is not None and result.input in others
            if box is not None and not on_other_medium and (source is None and not view.transform or
                                    source is not None and (source.shape[1], source.shape[0]) == frame):
                view.zoom_boxes.append({"call": call_index + 1, "box": box})
            call_index += 1
        view.steps.append(item)
    return view


def frame_size(sample: Sample, transform: list[dict]) -> tuple[int, int]:
    """The importer's own rule, so the boxes and the frame agree to the pixel."""
    width, height = _frame_size(sample.width, sample.height, transform)
    return (width, height)


def frame_image(sample: Sample, transform: list[dict]) -> np.ndarray:
    image = load_image(sample.image.path)
    return apply_transform(image, transform) if transform else image


def run_images(trace: Trace) -> dict[str, np.ndarray]:
    ran, _ = rerun(trace.sample, prediction_line(trace.submission, trace.sample.uid, trace.mode))
    return ran.images if ran else {}
