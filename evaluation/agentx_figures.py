"""Agent-X's exact figures for one scored submission (evaluation/metrics/agentx.py; docs/metrics.md).

The figures need the prediction's tool calls *with their arguments* (goal accuracy with image
generation) which the stored records do not keep, so the validated file is read again (adaptive
lines only: Agent-X's outputs are agentic runs); the answer's correctness comes from the stored
records, as the scorer decided it (rules, then the judge).
"""

from __future__ import annotations

from collections.abc import Callable
import logging
from typing import Any

from django.conf import settings

from evaluation.benchmark_cache import tool_hooks
from evaluation.metrics.agentx import AgentXReport, Call, TaskInput, agentx_report
from evaluation.models import PredictionResult, Submission
from evaluation.selectors import scoring_samples
from evaluation.validation import iter_prediction_objects

MODE = "adaptive"
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


def submission_agentx(*, submission: Submission) -> AgentXReport | None:
    """None when the submission has no results or no file to read."""
    if not submission.results or not submission.file:
        return None
    benchmark = submission.benchmark
    resolve, _ = tool_hooks(benchmark)
    samples, pks = scoring_samples(benchmark=benchmark)
    correct = {pk: ok for pk, ok in PredictionResult.objects.filter(submission=submission, mode=MODE)
               .values_list("sample_id", "correct")}
    predicted: dict[str, tuple[Call, ...]] = {}
    try:
        with submission.file.open("rb") as stream:
            for obj in iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES):
                if isinstance(obj, dict) and obj.get("mode") == MODE and isinstance(obj.get("sample_id"), str):
                    predicted[obj["sample_id"]] = _calls(obj.get("steps"), resolve)
    except OSError:  # the stored file is gone (storage moved): no figures rather than a broken page
        log.warning("submission %s: prediction file unreadable, no Agent-X figures", submission.pk)
        return None
    tasks = [
        TaskInput(
            uid=s["uid"], category=s["category"] or "",
            reference=tuple(Call(_name(resolve, c["tool"]), c.get("args") or {}) for c in s["toolchain"]),
            predicted=predicted.get(s["uid"]), correct=bool(correct.get(pks[s["uid"]], False)),
        )
        for s in samples if not s["aux_line"]
    ]
    return agentx_report(tasks)
