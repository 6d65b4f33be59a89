"""Agent-X's figures for one scored submission (docs/metrics.md, "Agent-X figures"): the exact ones
(evaluation/metrics/agentx.py), computed when a page asks, and the six judged ones
(evaluation/metrics/agentx_judged.py), asked of the remote judge while the submission is scored and
stored with its results (``results["agentx_judged"]``); the offline judge asks nothing, so they stay
absent and the pages say "needs an LLM judge".

The figures need the prediction's tool calls *with their arguments* (goal accuracy with image
generation) which the stored records do not keep, so the validated file is read again (adaptive
lines only: Agent-X's outputs are agentic runs); the answer's correctness comes from the stored
records, as the scorer decided it (rules, then the judge).
"""

from __future__ import annotations

from collections.abc import Callable
import logging
from typing import Any

import orjson
from django.conf import settings

from annotation.models import Sample as SampleModel

from evaluation.benchmark_cache import tool_hooks
from evaluation.derived import derived_refresh
from evaluation.metrics.agentx import AgentXReport, Call, TaskInput, agentx_report
from evaluation.metrics.agentx_judged import KINDS, AgentXStep, AgentXTask, judged_means, task_judged
from evaluation.metrics.types import Mean
from evaluation.models import PredictionResult, Submission
from evaluation.selectors import scoring_samples
from evaluation.validation import iter_prediction_objects

MODE = "adaptive"

EXACT_COLUMNS = (
    ("toolset_accuracy", "Toolset acc.", "F1 of the tool names against the reference's (multisets)"),
    ("tool_precision", "Tool precision", "Share of calls whose tool is the reference call's at the same position"),
    ("goal_accuracy", "Goal acc.", "Answer correct (rules, then the judge), factual and interpretive tasks"),
    ("goal_accuracy_generation", "Goal acc. w/ image gen.",
     "Generation call's arguments match the reference's, generative tasks"),
)
JUDGED_COLUMNS = ("Grounding score", "Tool accuracy", "Faithfulness", "Context score", "Factual precision",
                  "Semantic accuracy")
JUDGED_KEYS = ("grounding_score", "tool_accuracy", "faithfulness", "context_score", "factual_precision",
               "semantic_accuracy")
FIGURE_SET = "agentx"
NEEDS_JUDGE = "needs an LLM judge"


def _cell(key: str, m: Mean, note: str = "") -> dict:
    iv = m.interval
    return {"key": key, "n": m.n, "value": None if m.value is None else f"{100 * m.value:.1f}",
            "interval": f"[{100 * iv.low:.1f}, {100 * iv.high:.1f}]" if iv else "", "note": note,
            "mean": m.value, "low": iv.low if iv else None, "high": iv.high if iv else None}


def exact_cells(report: AgentXReport) -> list[dict]:
    """Per exact figure: the mean in %, its n and interval (None: no task has a value)."""
    out = []
    for key, _, _ in EXACT_COLUMNS:
        undecided = report.n_generative_undecided if key == "goal_accuracy_generation" else 0
        out.append(_cell(key, getattr(report, key),
                         f"{undecided} generative task{'s' if undecided != 1 else ''} undecided: the reference "
                         "names the generation tool without its arguments" if undecided else ""))
    return out


def judged_stored(results: dict | None) -> dict | None:
    """The remote judge's per-task values stored with the results; None: scored without one."""
    stored = (results or {}).get("agentx_judged")
    return stored if isinstance(stored, dict) and isinstance(stored.get("tasks"), dict) else None


def judged_cells(results: dict | None) -> list[dict]:
    """Per judged figure: the mean over the tasks with a value and its interval, or, when no LLM
    judge scored the submission, ``needs_judge`` (the pages say so instead of a number)."""
    stored = judged_stored(results)
    if stored is None:
        return [{"key": key, "needs_judge": True, "value": None} for key in JUDGED_KEYS]
    means = judged_means(stored["tasks"].values())
    return [{**_cell(key, means[key]), "needs_judge": False, "judge": stored.get("judge", "")} for key in JUDGED_KEYS]


def agentx_build(benchmark: Any) -> dict[str, Any] | None:
    """The derived kind "agentx" (evaluation/derived.py): Agent-X's ten figures of every submission on the
    board, on a benchmark that declares them (its manifest's ``figures: ["agentx"]``; None elsewhere). The
    exact four are computed from each file and its reference chains, the judged six read from its results."""
    if FIGURE_SET not in (benchmark.figures or ()):
        return None
    rows: dict[str, Any] = {}
    for sub in Submission.objects.on_board().filter(benchmark=benchmark).select_related("benchmark"):
        report = submission_agentx(submission=sub)
        if report is not None and report.tasks:
            rows[str(sub.pk)] = {"cells": exact_cells(report), "judged": judged_cells(sub.results),
                                 "goal": report.goal_accuracy.value}
    return {"rows": rows}


def agentx_refresh(*, benchmark_id: int) -> int | None:
    return derived_refresh(benchmark_id=benchmark_id, kind="agentx", build=agentx_build)
log = logging.getLogger(__name__)


def _name(resolve: Callable[[str], str | None] | None, name: str) -> str:
    return (resolve(name) if resolve else None) or name


def _calls(steps: Any, resolve: Callable[[str], str | None] | None) -> tuple[Call, ...]:
    out = []
    for step in steps if isinstance(steps, list) else ():
        tool = step.get("tool") if isinstance(step, dict) else None
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            args = tool.get("args")
            out.append(Call(_name(resolve, tool["name"]), args if isinstance(args, dict) else {}))
    return tuple(out)


def _adaptive_lines(submission: Submission) -> dict[str, dict] | None:
    """The file's adaptive predictions by sample id; None when the stored file cannot be read."""
    out: dict[str, dict] = {}
    try:
        with submission.file.open("rb") as stream:
            for obj in iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES):
                if isinstance(obj, dict) and obj.get("mode") == MODE and isinstance(obj.get("sample_id"), str):
                    out[obj["sample_id"]] = obj
    except OSError:  # the stored file is gone (storage moved): no figures rather than a broken page
        log.warning("submission %s: prediction file unreadable, no Agent-X figures", submission.pk)
        return None
    return out


def submission_agentx(*, submission: Submission) -> AgentXReport | None:
    """None when the submission has no results or no file to read."""
    if not submission.results or not submission.file:
        return None
    benchmark = submission.benchmark
    resolve, _ = tool_hooks(benchmark)
    samples, pks = scoring_samples(benchmark=benchmark)
    correct = dict(PredictionResult.objects.filter(submission=submission, mode=MODE)
                   .values_list("sample_id", "correct"))
    lines = _adaptive_lines(submission)
    if lines is None:
        return None
    predicted = {uid: _calls(obj.get("steps"), resolve) for uid, obj in lines.items()}
    tasks = [
        TaskInput(
            uid=s["uid"], category=s["category"] or "",
            reference=tuple(Call(_name(resolve, c["tool"]), c.get("args") or {}) for c in s["toolchain"]),
            predicted=predicted.get(s["uid"]), correct=bool(correct.get(pks[s["uid"]], False)),
        )
        for s in samples if not s["aux_line"]
    ]
    return agentx_report(tasks)


# ------------------------------------------------------------------------------------ judged


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


_NO_TOOL = {"", "none", "null", "n/a", "no tool", "-"}


def _reference_steps(sample: dict, meta: dict, resolve: Callable[[str], str | None] | None) -> tuple[AgentXStep, ...]:
    """The reference trace: the release's raw steps (kept in the sample's meta by the Agent-X
    importer: task, tool, input, output, thought), else the reference chain with the key steps as
    thoughts."""
    raw = meta.get("reasoning_steps") if isinstance(meta, dict) else None
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list):
        raw = raw[0]
    if isinstance(raw, list) and raw and all(isinstance(st, dict) for st in raw):
        out = []
        for st in raw:
            tool = st.get("tool")
            name = tool.strip() if isinstance(tool, str) and tool.strip().lower() not in _NO_TOOL else None
            inp = st.get("input")
            out.append(AgentXStep(thought=_text(st.get("thought")), task=_text(st.get("task")),
                                  tool=_name(resolve, name) if name else None,
                                  args=inp if isinstance(inp, dict) else ({"input": inp} if inp not in (None, "") else {}),
                                  output=_text(st.get("output"))))
        return tuple(out)
    chain, keys = sample["toolchain"], sample["key_steps"]
    if not chain:
        return tuple(AgentXStep(thought=k) for k in keys)
    thoughts = keys if len(keys) == len(chain) else [""] * len(chain)
    return tuple(AgentXStep(thought=t, tool=_name(resolve, c["tool"]), args=c.get("args") or {},
                            output=_text(c.get("output"))) for c, t in zip(chain, thoughts))


def _predicted_steps(steps: Any, resolve: Callable[[str], str | None] | None) -> tuple[AgentXStep, ...]:
    out = []
    for st in steps if isinstance(steps, list) else ():
        if not isinstance(st, dict):
            continue
        tool = st.get("tool")
        name = tool.get("name") if isinstance(tool, dict) and isinstance(tool.get("name"), str) else None
        args = tool.get("args") if isinstance(tool, dict) and isinstance(tool.get("args"), dict) else {}
        output = st.get("tool_output", tool.get("output") if isinstance(tool, dict) else None)
        out.append(AgentXStep(thought=_text(st.get("thought")), task=_text(st.get("task")),
                              tool=_name(resolve, name) if name else None, args=args, output=_text(output)))
    return tuple(out)


def agentx_tasks(*, submission: Submission) -> list[AgentXTask] | None:
    """Every task of the benchmark with what its judged figures need (None: the file is unreadable)."""
    benchmark = submission.benchmark
    resolve, _ = tool_hooks(benchmark)
    samples, _ = scoring_samples(benchmark=benchmark)
    metas = dict(SampleModel.objects.filter(benchmark=benchmark).values_list("uid", "meta"))
    lines = _adaptive_lines(submission)
    if lines is None:
        return None
    tools = {d["name"]: (d.get("description", ""), d.get("args_schema") or {})
             for d in benchmark.declared_tools or () if isinstance(d, dict) and "name" in d}
    out = []
    for s in samples:
        if s["aux_line"]:
            continue
        meta = metas.get(s["uid"]) or {}
        obj = lines.get(s["uid"])
        out.append(AgentXTask(
            uid=s["uid"], query=s["question"] or "", reference=_reference_steps(s, meta, resolve),
            reference_answer=s["answer"] or "", reference_justification=_text(meta.get("justification")),
            predicted=None if obj is None else _predicted_steps(obj.get("steps"), resolve),
            answer=_text(obj.get("answer")) if obj else "", justification=_text(obj.get("response")) if obj else "",
            tools=tools))
    return out


def agentx_questions(tasks: list[AgentXTask]) -> dict[str, list[Any]]:
    """The questions of every task, by kind (the judge asks each distinct one once)."""
    out: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    for task in tasks:
        for kind, q in zip(KINDS, task.questions()):
            if q is not None:
                out[kind].append(q)
    return out


def submission_agentx_judge(*, submission: Submission, judge: Any) -> dict | None:
    """Ask ``judge`` (a remote one) the Agent-X questions of a scored submission's file; the per-task
    values to store with its results, or None when the file cannot be read. Verdicts go through the
    judge's cache: a re-score asks nothing already answered."""
    tasks = agentx_tasks(submission=submission)
    if tasks is None:
        return None
    asked = agentx_questions(tasks)
    answers = {kind: iter(getattr(judge, kind)(asked[kind])) for kind in KINDS}
    per_task: dict[str, dict[str, float | None]] = {}
    for task in tasks:
        verdicts = [None if q is None else next(answers[kind]) for kind, q in zip(KINDS, task.questions())]
        values = task_judged(task, *verdicts)
        if values is not None:
            per_task[task.uid] = values
    versions = getattr(judge, "versions", None) or getattr(getattr(judge, "inner", None), "versions", {})
    return {"judge": judge.name, "prompts": {kind: f"{kind}.{versions.get(kind, '?')}" for kind in KINDS},
            "tasks": per_task}
