"""Agent-X's six judged figures (its Table 3; docs/metrics.md, "Agent-X figures"): the questions a
judge is asked, and how its verdicts become per-task values.

Read from the authors' evaluation prompts (one GPT-4o call per figure and task, each a 0-1 score):

- **grounding score** and **context score** (step by step, against the reference): each predicted
  step is judged against the reference step at the same position (``AgentXStepQuestion``, both
  scores in one verdict); a predicted step beyond the reference, and a reference step the
  prediction never reaches, score 0, as the authors' prompt tells its judge. That part needs no
  judge, so it is counted here: the task's value is the sum of the aligned steps' scores over
  ``max(predicted steps, reference steps)``. Where an aligned pair's tool calls both name a box
  (``bbox``/``box``/``region``), the step's grounding is the mean of the judged score and the
  boxes' IoU (exact, no judge).
- **tool accuracy**: each predicted tool call judged against the declared tool (its description
  and argument schema): arguments and output well formed and useful for the step
  (``AgentXToolQuestion``); the task's value is the mean over the calls. A prediction without a
  call scores 0 when the reference calls a tool, and has no value when it calls none either.
- **faithfulness**, **factual precision**, **semantic accuracy** (deep reasoning): one verdict per
  task for the whole trace and answer against the reference trace and answer
  (``AgentXTraceQuestion``).

Plain data, no judge and no Django here: ``evaluation.judges`` answers the questions and
``evaluation.agentx_figures`` builds them from a submission.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .agentx import JUDGED
from .process import box_from_args, iou
from .stats import RESAMPLES, SEED, bootstrap_mean
from .types import Mean

STEP_KIND, TOOL_KIND, TRACE_KIND = "agentx_steps", "agentx_tool_accuracy", "agentx_trace"
KINDS = (STEP_KIND, TOOL_KIND, TRACE_KIND)
TRACE_FIGURES = ("faithfulness", "factual_precision", "semantic_accuracy")


@dataclass(frozen=True, slots=True)
class AgentXStep:
    """One step of a trace, the reference's or the prediction's: what it set out to do, the tool it
    called (None: no call) with its arguments and output, and its thought."""

    thought: str = ""
    task: str = ""
    tool: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    output: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"task": self.task, "thought": self.thought}
        if self.tool is not None:
            out["tool"] = {"name": self.tool, "args": dict(self.args), "output": self.output}
        return out


def _steps(steps: Sequence[AgentXStep]) -> list[dict[str, Any]]:
    return [s.as_dict() for s in steps]


@dataclass(frozen=True, slots=True)
class AgentXStepQuestion:
    """Grounding and context of each predicted step against the reference step at the same
    position -> one (grounding, context) pair per aligned pair, each in [0, 1]."""

    query: str
    reference_answer: str
    reference: tuple[AgentXStep, ...]
    predicted: tuple[AgentXStep, ...]

    @property
    def n_pairs(self) -> int:
        return min(len(self.reference), len(self.predicted))

    def payload(self) -> dict[str, Any]:
        return {"query": self.query, "reference_answer": self.reference_answer,
                "pairs": [{"reference": r.as_dict(), "prediction": p.as_dict()}
                          for r, p in zip(self.reference, self.predicted)]}


@dataclass(frozen=True, slots=True)
class AgentXToolQuestion:
    """How well each tool call is used, given the tool's declaration -> one score in [0, 1] a call."""

    query: str
    tools: tuple[tuple[str, str, Mapping[str, Any]], ...]  # (name, description, argument schema)
    calls: tuple[AgentXStep, ...]

    def payload(self) -> dict[str, Any]:
        return {"query": self.query,
                "tools": [{"name": n, "description": d, "args_schema": dict(s)} for n, d, s in self.tools],
                "calls": _steps(self.calls)}


@dataclass(frozen=True, slots=True)
class AgentXTraceQuestion:
    """The whole trace and answer against the reference's -> (faithfulness, factual precision,
    semantic accuracy), each in [0, 1]."""

    query: str
    reference: tuple[AgentXStep, ...]
    reference_answer: str
    reference_justification: str
    predicted: tuple[AgentXStep, ...]
    answer: str
    justification: str

    def payload(self) -> dict[str, Any]:
        return {"query": self.query,
                "reference": {"steps": _steps(self.reference), "answer": self.reference_answer,
                              "justification": self.reference_justification},
                "prediction": {"steps": _steps(self.predicted), "answer": self.answer,
                               "justification": self.justification}}


def is_unit(value: Any) -> bool:
    """A judge's score: a real number (not a boolean) in [0, 1]."""
    return (type(value) in (int, float)) and math.isfinite(value) and 0 <= value <= 1


@dataclass(frozen=True, slots=True)
class AgentXTask:
    """What one task's judged figures are made of. ``predicted`` is None when the task has no
    prediction (it gets no value)."""

    uid: str
    query: str
    reference: tuple[AgentXStep, ...]
    reference_answer: str
    reference_justification: str
    predicted: tuple[AgentXStep, ...] | None
    answer: str = ""
    justification: str = ""
    tools: Mapping[str, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)  # name -> (description, schema)

    def questions(self) -> tuple[AgentXStepQuestion | None, AgentXToolQuestion | None, AgentXTraceQuestion | None]:
        """The questions this task needs (None where the judge has nothing to say)."""
        if self.predicted is None:
            return None, None, None
        pred = self.predicted
        step_q = (AgentXStepQuestion(self.query, self.reference_answer, self.reference, pred)
                  if self.reference and pred else None)
        calls = tuple(s for s in pred if s.tool is not None)
        tool_q = None
        if calls:
            names = sorted({s.tool for s in calls if s.tool is not None})
            tool_q = AgentXToolQuestion(
                self.query, tuple((n, *self.tools.get(n, ("(not a declared tool)", {}))) for n in names), calls)
        trace_q = AgentXTraceQuestion(self.query, self.reference, self.reference_answer,
                                      self.reference_justification, pred, self.answer, self.justification)
        return step_q, tool_q, trace_q


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
BOX_KEYS = ("bbox", "box", "region", "bbox_2d", "coordinates")


def step_box(args: Mapping[str, Any]) -> tuple[float, float, float, float] | None:
    """A call's box: ``box_from_args``'s forms, or (Agent-X's steps often write it so) a string of
    exactly four numbers under one of ``BOX_KEYS`` ("12, 30, 80, 95" or "[12, 30, 80, 95]")."""
    box = box_from_args(args)
    if box is not None:
        return box
    for key in BOX_KEYS:
        v = args.get(key)
        if isinstance(v, (list, tuple)) and len(v) == 4 and all(type(x) in (int, float) for x in v):
            x1, y1, x2, y2 = (float(x) for x in v)
        elif isinstance(v, str) and len(nums := _NUMBER.findall(v)) == 4:
            x1, y1, x2, y2 = (float(x) for x in nums)
        else:
            continue
        return (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
    return None


def step_box_iou(reference: AgentXStep, predicted: AgentXStep) -> float | None:
    """IoU of the two calls' boxes when both name one, else None."""
    if reference.tool is None or predicted.tool is None:
        return None
    a, b = step_box(reference.args), step_box(predicted.args)
    return None if a is None or b is None else iou(a, b)


def task_judged(task: AgentXTask, steps: Sequence[tuple[float, float]] | None, tool: Sequence[float] | None,
                trace: Sequence[float] | None) -> dict[str, float | None] | None:
    """One task's six values from the judge's verdicts on its questions (None: not asked)."""
    pred = task.predicted
    if pred is None:
        return None
    n = max(len(pred), len(task.reference))
    grounding = context = None
    if n:
        pairs = list(zip(task.reference, pred))
        scored = list(steps or ())
        if len(scored) != len(pairs):
            raise ValueError(f"task {task.uid}: {len(scored)} step verdicts for {len(pairs)} aligned steps")
        g_total = c_total = 0.0
        for (ref, got), (g, c) in zip(pairs, scored):
            box = step_box_iou(ref, got)
            g_total += g if box is None else (g + box) / 2
            c_total += c
        grounding, context = g_total / n, c_total / n  # unaligned steps (extra or missing) count 0
    calls = [s for s in pred if s.tool is not None]
    if calls:
        got_tool = list(tool or ())
        if len(got_tool) != len(calls):
            raise ValueError(f"task {task.uid}: {len(got_tool)} tool verdicts for {len(calls)} calls")
        tool_value: float | None = sum(got_tool) / len(got_tool)
    else:
        tool_value = 0.0 if any(s.tool is not None for s in task.reference) else None
    if trace is None or len(trace) != 3:
        raise ValueError(f"task {task.uid}: the trace verdict is missing")
    faith, factual, semantic = trace
    return {"grounding_score": grounding, "tool_accuracy": tool_value, "faithfulness": faith,
            "context_score": context, "factual_precision": factual, "semantic_accuracy": semantic}


def judged_means(per_task: Iterable[Mapping[str, float | None]], *, seed: int = SEED,
                 resamples: int = RESAMPLES) -> dict[str, Mean]:
    """Each figure's mean over the tasks with a value, with its bootstrap interval."""
    cols: dict[str, list[float]] = {k: [] for k in JUDGED}
    for values in per_task:
        for k in JUDGED:
            v = values.get(k)
            if v is not None:
                cols[k].append(float(v))
    return {k: Mean(sum(v) / len(v), len(v), bootstrap_mean(v, seed=seed, resamples=resamples)) if v else Mean(None, 0)
            for k, v in cols.items()}
