"""Agent-X's exactly computable figures (its Table 3; metrics.md section 11; docs/metrics.md,
"Agent-X figures").

Agent-X's authors ask GPT-4o for every figure, the F1 included. Three need no judge:

- **toolset accuracy**: F1 of the predicted tool names against the reference's, both taken as
  *multisets*: a tool the reference calls twice must be called twice for full recall, and a
  second call of a tool the reference calls once lowers precision. (Section 5's toolset F1 of
  every benchmark is over sets; this one follows metrics.md section 11.)
- **tool precision**: the predicted calls aligned by order with the reference's calls; the
  share of predicted calls whose tool is the reference call's tool at the same position. A
  predicted call beyond the reference's length is wrong (extra steps cost); a reference call
  the prediction never reaches does not lower precision (missing steps show in the toolset
  recall and F1). A step without a tool is not a call.
- **goal accuracy**: the answer's correctness as the scorer decided it (rules, then the judge
  fallback), on factual and interpretive tasks; **goal accuracy with image generation**: on
  generative tasks, whether the prediction's last generation call has the reference's last
  generation call's arguments (normalised: keys as given, strings case- and space-folded,
  numbers by value). A reference chain without arguments (names only) cannot decide it: that
  task's value is None, never a guess.

A task whose prediction has no tool call (an unparseable reply included) gets toolset F1 0 and
tool precision 0 when its reference calls a tool; a task whose reference calls none has neither
figure (None). Means are over the tasks with a value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .stats import RESAMPLES, SEED, bootstrap_mean
from .types import Mean

# Agent-X's tools that produce an image as the answer (toolmeta.json); a task calling one in its
# reference is generative even when its query type does not say so.
GENERATION_TOOLS = frozenset({"ImageGenerator", "ImageStylization"})
JUDGED = ("grounding_score", "tool_accuracy", "faithfulness", "context_score", "factual_precision",
          "semantic_accuracy")  # need an LLM judge: never computed here
EXACT = ("toolset_accuracy", "tool_precision", "goal_accuracy", "goal_accuracy_generation")


def toolset_f1(predicted: Sequence[str], reference: Sequence[str]) -> float | None:
    """Multiset F1; None when the reference calls no tool."""
    if not reference:
        return None
    hit = sum((Counter(predicted) & Counter(reference)).values())
    if not hit:
        return 0.0
    precision, recall = hit / len(predicted), hit / len(reference)
    return 2 * precision * recall / (precision + recall)


def tool_precision(predicted: Sequence[str], reference: Sequence[str]) -> float | None:
    """Share of predicted calls equal to the reference call at the same position; None when the
    reference calls no tool, 0 when the prediction calls none."""
    if not reference:
        return None
    if not predicted:
        return 0.0
    return sum(1 for i, name in enumerate(predicted) if i < len(reference) and reference[i] == name) / len(predicted)


def _norm(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return " ".join(value.casefold().split())
    if isinstance(value, Mapping):
        return {str(k): _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def arguments_match(predicted: Mapping[str, Any], reference: Mapping[str, Any]) -> bool:
    return bool(_norm(dict(predicted)) == _norm(dict(reference)))


def is_generative(category: str, reference: Sequence[str]) -> bool:
    return "generat" in category.casefold() or any(name in GENERATION_TOOLS for name in reference)


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TaskInput:
    """One task: its reference calls (``args`` empty when the chain is names only) and category,
    the prediction's calls (None: no prediction) and whether its answer was judged correct."""

    uid: str
    category: str
    reference: tuple[Call, ...]
    predicted: tuple[Call, ...] | None
    correct: bool = False


@dataclass(frozen=True, slots=True)
class TaskFigures:
    uid: str
    generative: bool
    toolset_accuracy: float | None
    tool_precision: float | None
    goal_accuracy: float | None  # factual and interpretive tasks only
    goal_accuracy_generation: float | None  # generative tasks with reference arguments only


@dataclass(frozen=True, slots=True)
class AgentXReport:
    tasks: tuple[TaskFigures, ...]
    toolset_accuracy: Mean
    tool_precision: Mean
    goal_accuracy: Mean
    goal_accuracy_generation: Mean
    n_generative: int
    n_generative_undecided: int  # generative tasks whose reference has no generation arguments


def task_figures(task: TaskInput) -> TaskFigures | None:
    """None when the task has no prediction (it is left out of the means)."""
    if task.predicted is None:
        return None
    ref = [c.name for c in task.reference]
    pred = [c.name for c in task.predicted]
    generative = is_generative(task.category, ref)
    gen_value = None
    if generative:
        ref_gen = [c for c in task.reference if c.name in GENERATION_TOOLS]
        if ref_gen and ref_gen[-1].args:
            got = [c for c in task.predicted if c.name == ref_gen[-1].name]
            gen_value = 1.0 if got and arguments_match(got[-1].args, ref_gen[-1].args) else 0.0
    return TaskFigures(task.uid, generative, toolset_f1(pred, ref), tool_precision(pred, ref),
                       None if generative else float(task.correct), gen_value)


def _mean(values: list[float], seed: int, resamples: int) -> Mean:
    if not values:
        return Mean(None, 0)
    return Mean(sum(values) / len(values), len(values), bootstrap_mean(values, seed=seed, resamples=resamples))


def agentx_report(tasks: Iterable[TaskInput], *, seed: int = SEED, resamples: int = RESAMPLES) -> AgentXReport:
    figs = [f for f in map(task_figures, tasks) if f is not None]

    def col(name: str) -> list[float]:
        return [v for f in figs if (v := getattr(f, name)) is not None]

    gen = [f for f in figs if f.generative]
    return AgentXReport(
        tasks=tuple(figs),
        toolset_accuracy=_mean(col("toolset_accuracy"), seed, resamples),
        tool_precision=_mean(col("tool_precision"), seed, resamples),
        goal_accuracy=_mean(col("goal_accuracy"), seed, resamples),
        goal_accuracy_generation=_mean(col("goal_accuracy_generation"), seed, resamples),
        n_generative=len(gen),
        n_generative_undecided=sum(1 for f in gen if f.goal_accuracy_generation is None),
    )
