"""The four kinds of question the scorer asks a judge (metrics.md section 9).

Plain data, so judges (``evaluation.judges``) and the scorer share them without the library
importing any judge. ``payload()`` is the canonical, JSON-ready content of a question: what a
remote judge is shown and what a verdict cache hashes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .types import Sample, Step, ToolCall, fast_constructor


def step_payload(steps: tuple[Step, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for s in steps:
        item: dict[str, Any] = {"thought": s.thought}
        if s.tool is not None:
            item["tool"] = {"name": s.tool.name, "args": dict(s.tool.args)}
        out.append(item)
    return out


@dataclass(frozen=True, slots=True)
class AnswerQuestion:
    """Is the extracted answer equivalent to the gold answer? -> bool"""

    sample: Sample
    extracted: str

    def payload(self) -> dict[str, Any]:
        s = self.sample
        return {"question": s.question, "options": dict(s.options) if s.options else None,
                "gold": s.answer, "answer_type": s.answer_type, "prediction": self.extracted}


@dataclass(frozen=True, slots=True)
class KeyStepQuestion:
    """Which of the sample's key steps do the prediction's steps carry out? -> tuple[bool, ...]"""

    sample: Sample
    steps: tuple[Step, ...]

    def payload(self) -> dict[str, Any]:
        return {"question": self.sample.question, "key_steps": list(self.sample.key_steps),
                "steps": step_payload(self.steps)}


@dataclass(frozen=True, slots=True)
class ToolCallQuestion:
    """Is this tool call a sensible, correctly aimed use of the tool? -> bool"""

    sample: Sample
    call: ToolCall
    thought: str

    def payload(self) -> dict[str, Any]:
        s = self.sample
        out: dict[str, Any] = {"question": s.question, "regions": [list(r) for r in s.regions],
               "transform": [dict(t) for t in s.transform], "thought": self.thought,
               "tool": {"name": self.call.name, "args": dict(self.call.args)}}
        if s.n_images > 1:  # several media: which one each region is on, and the call's input
            out["regions"] = [{"box": list(r), "image": ref}
                              for r, ref in zip(s.regions, s.region_images or ("img0",) * len(s.regions))]
            out["tool"]["input"] = self.call.input
        return out


@dataclass(frozen=True, slots=True)
class StepScoreQuestion:
    """Score each step 1 (correct), 0.5 (unverifiable) or 0 (incorrect). -> tuple[float, ...]

    ``call_valid[i]`` is the validity already decided for step i's tool call (None: no call).
    """

    sample: Sample
    steps: tuple[Step, ...]
    call_valid: tuple[bool | None, ...]

    def payload(self) -> dict[str, Any]:
        return {"question": self.sample.question, "reference": list(self.sample.key_steps),
                "gold": self.sample.answer, "steps": step_payload(self.steps)}


# Positional constructors that fill the slots directly (the scorer builds questions by the
# hundred thousand); same instances as the classes' own constructors.
make_answer_question = fast_constructor(AnswerQuestion)
make_key_step_question = fast_constructor(KeyStepQuestion)
make_tool_call_question = fast_constructor(ToolCallQuestion)
make_step_score_question = fast_constructor(StepScoreQuestion)
