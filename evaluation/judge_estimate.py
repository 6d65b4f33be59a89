"""What a remote judge will be asked about a validated submission, before it is paid: questions
(those already answered in the verdict cache left out), requests, tokens and dollars.

The file is scored once with a stand-in judge that answers as the offline judge and writes down
every question it is asked (the questions a scorer asks depend on the rules, not on the judge's
verdicts); nothing is stored but the estimate. Tokens are estimated as the judge's rate gate
does (4 characters a token, 12 output tokens a question, more for Agent-X's longer verdicts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import orjson
from django.conf import settings

from evaluation.benchmark_cache import benchmark_tool_set, prepared_benchmarks, tool_hooks
from evaluation.judges import OfflineJudge, input_hash
from evaluation.judges.openai_judge import OpenAIJudge, estimate_tokens, output_tokens_per_question
from evaluation.metrics import score_submission
from evaluation.models import Submission
from evaluation.validation import iter_prediction_objects

KINDS = ("answer_equivalence", "key_step_matching", "tool_call_validity", "step_scores")
AGENTX_KINDS = ("agentx_steps", "agentx_tool_accuracy", "agentx_trace")  # on benchmarks with the "agentx" figure set


class _Recorder:
    """Answers as the offline judge; keeps each distinct question's size in characters, by kind."""

    name = "estimate"

    def __init__(self) -> None:
        self.offline = OfflineJudge()
        self.asked: dict[str, dict[str, int]] = {kind: {} for kind in (*KINDS, *AGENTX_KINDS)}

    def record(self, kind: str, questions: Sequence[Any]) -> None:
        seen = self.asked[kind]
        for q in questions:
            payload = q.payload()
            seen.setdefault(input_hash(payload), len(orjson.dumps(payload)) + 10)  # + its "id"

    def _record(self, kind: str, questions: Sequence[Any]) -> list:
        self.record(kind, questions)
        return getattr(self.offline, kind)(questions)

    def answer_equivalence(self, questions: Sequence[Any]) -> list:
        return self._record("answer_equivalence", questions)

    def key_step_matching(self, questions: Sequence[Any]) -> list:
        return self._record("key_step_matching", questions)

    def tool_call_validity(self, questions: Sequence[Any]) -> list:
        return self._record("tool_call_validity", questions)

    def step_scores(self, questions: Sequence[Any]) -> list:
        return self._record("step_scores", questions)


def judge_estimate(*, submission: Submission, judge: OpenAIJudge) -> dict[str, Any]:
    """The estimate for ``judge`` (its batch size, prompts, prices and cache)."""
    benchmark = submission.benchmark
    prepared, _, _ = prepared_benchmarks.get(benchmark)
    resolve, validate = tool_hooks(benchmark)
    recorder = _Recorder()
    with submission.file.open("rb") as stream:
        score_submission(
            prepared, iter_prediction_objects(stream, settings.SUBMISSION_MAX_LINE_BYTES), judge=recorder,
            tool_validator=validate, benchmark_tools=benchmark_tool_set(benchmark, resolve),
            prices=submission.prices, resolve_tool=resolve, on_records=lambda records: None, resamples=1,
            full_pipeline=submission.full_pipeline,
        )
    if "agentx" in (benchmark.figures or ()):  # Agent-X's judged figures: asked once the file is scored
        from evaluation.agentx_figures import agentx_questions, agentx_tasks

        tasks = agentx_tasks(submission=submission)
        for kind, questions in agentx_questions(tasks or []).items():
            recorder.record(kind, questions)
    out = {"questions": 0, "cached": 0, "requests": 0, "input_tokens": 0, "output_tokens": 0}
    for kind, sizes in recorder.asked.items():
        cached: dict = {}
        if sizes and judge.cache is not None:
            cached = judge.cache.get_many(judge.name, f"{kind}.{judge.versions[kind]}", list(sizes))
        todo = [n for h, n in sizes.items() if h not in cached]
        requests = math.ceil(len(todo) / judge.batch_size)
        out["questions"] += len(todo)
        out["cached"] += len(cached)
        out["requests"] += requests
        out["input_tokens"] += requests * estimate_tokens(judge._prompts[kind]) + sum(n // 4 + 1 for n in todo)
        out["output_tokens"] += output_tokens_per_question(kind) * len(todo)
    out["cost_usd"] = judge.cost_usd(out["input_tokens"], out["output_tokens"])
    return out
