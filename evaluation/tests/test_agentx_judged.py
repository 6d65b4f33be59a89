"""Agent-X's six judged figures: hand-computed per-task values from given verdicts
(evaluation/metrics/agentx_judged.py), and the questions against a local OpenAI-compatible server
(payloads, prompt versions in the cache key, strict 0-1 parsing, malformed replies)."""

from __future__ import annotations

import json

import pytest

from evaluation.judges import InMemoryVerdictCache, JudgeError, load_prompt
from evaluation.judges.base import PROMPT_VERSIONS
from evaluation.metrics.agentx_judged import (
    AgentXStep,
    AgentXStepQuestion,
    AgentXTask,
    AgentXToolQuestion,
    AgentXTraceQuestion,
    is_unit,
    judged_means,
    step_box,
    task_judged,
)
from evaluation.tests.test_judges_openai import AGENTX_TRACE, _judge, server  # noqa: F401 - fixture

OCR = AgentXStep(thought="Read the sign.", task="Read the prices", tool="OCR", args={"image": "sign.jpg"}, output="2, 3")
CALC = AgentXStep(thought="Add them.", task="Add", tool="Calculator", args={"expression": "2+3"}, output="5")
DRAW = AgentXStep(thought="Mark the car.", task="Box the car", tool="DrawBoundingBox", args={"bbox": [0, 0, 10, 10]})
THINK = AgentXStep(thought="So the answer is 5.")


def task(reference: tuple, predicted: tuple | None) -> AgentXTask:
    return AgentXTask(uid="t", query="What is the sum?", reference=reference, reference_answer="5",
                      reference_justification="2 + 3", predicted=predicted, answer="5", justification="added",
                      tools={"OCR": ("Reads text.", {"type": "object"})})


# ---------------------------------------------------------------------------------- by hand


def test_grounding_and_context_count_extra_and_missing_steps_as_zero() -> None:
    # reference 3 steps, prediction 4: three aligned pairs, one extra -> the sums over max(4, 3) = 4
    t = task((OCR, CALC, THINK), (OCR, CALC, THINK, THINK))
    got = task_judged(t, [(1.0, 1.0), (0.5, 1.0), (0.0, 0.5)], [1.0, 0.5], (0.5, 1.0, 0.25))
    assert got["grounding_score"] == pytest.approx(1.5 / 4)
    assert got["context_score"] == pytest.approx(2.5 / 4)
    # prediction stops after one step: the two missing reference steps count 0 -> 1 / 3
    got = task_judged(task((OCR, CALC, THINK), (OCR,)), [(1.0, 1.0)], [1.0], (1.0, 1.0, 1.0))
    assert got["grounding_score"] == pytest.approx(1 / 3) and got["context_score"] == pytest.approx(1 / 3)


def test_grounding_averages_the_judged_score_with_the_boxes_iou_where_both_name_one() -> None:
    half = AgentXStep(thought="Mark it.", task="Box the car", tool="DrawBoundingBox", args={"bbox": [0, 0, 10, 5]})
    t = task((DRAW, CALC), (half, CALC))
    got = task_judged(t, [(1.0, 1.0), (1.0, 1.0)], [1.0, 1.0], (1.0, 1.0, 1.0))
    # step 1: (judged 1 + IoU 0.5) / 2 = 0.75; step 2: no box, judged 1 -> (0.75 + 1) / 2
    assert got["grounding_score"] == pytest.approx(0.875)
    assert got["context_score"] == 1.0  # the boxes count for grounding only
    # a predicted step that names no box: the judged score alone
    plain = AgentXStep(thought="Mark it.", task="Box the car", tool="DrawBoundingBox", args={})
    assert task_judged(task((DRAW,), (plain,)), [(0.5, 1.0)], [1.0], (1.0, 1.0, 1.0))["grounding_score"] == 0.5


def test_boxes_written_as_strings_of_four_numbers_count_too() -> None:
    ref = AgentXStep(task="Box it", tool="DrawBoundingBox", args={"image": "img0", "bbox": "0, 0, 10, 10"})
    got = AgentXStep(task="Box it", tool="DrawBoundingBox", args={"coordinates": "[0, 5, 10, 10]"})
    assert step_box(ref.args) == (0.0, 0.0, 10.0, 10.0)
    assert task_judged(task((ref,), (got,)), [(0.0, 1.0)], [1.0], (1.0, 1.0, 1.0))["grounding_score"] == 0.25
    assert step_box({"bbox": "near the top"}) is None and step_box({"bbox": "1, 2, 3"}) is None


def test_tool_accuracy_is_the_mean_over_calls_and_zero_when_a_needed_call_is_missing() -> None:
    got = task_judged(task((OCR, CALC), (OCR, THINK, CALC)), [(1.0, 1.0)] * 2, [1.0, 0.5], (1.0, 1.0, 1.0))
    assert got["tool_accuracy"] == 0.75  # the thought-only step is not a call
    none = task_judged(task((OCR,), (THINK,)), [(1.0, 1.0)], None, (1.0, 1.0, 1.0))
    assert none["tool_accuracy"] == 0.0  # the reference calls a tool, the prediction none
    neither = task_judged(task((THINK,), (THINK,)), [(1.0, 1.0)], None, (1.0, 1.0, 1.0))
    assert neither["tool_accuracy"] is None  # no call anywhere: no value, not a made-up 0 or 1


def test_the_deep_reasoning_figures_are_the_judges_per_task_scores() -> None:
    got = task_judged(task((OCR,), (OCR,)), [(1.0, 1.0)], [1.0], (0.5, 1.0, 0.25))
    assert (got["faithfulness"], got["factual_precision"], got["semantic_accuracy"]) == (0.5, 1.0, 0.25)


def test_a_task_without_prediction_has_no_values_and_an_empty_trace_scores_zero_steps() -> None:
    assert task_judged(task((OCR,), None), None, None, None) is None
    assert task((OCR,), None).questions() == (None, None, None)
    empty = task((OCR, CALC), ())
    step_q, tool_q, trace_q = empty.questions()
    assert step_q is None and tool_q is None and trace_q is not None  # nothing aligned, nothing to call
    got = task_judged(empty, None, None, (0.0, 1.0, 0.0))
    assert got["grounding_score"] == 0.0 and got["context_score"] == 0.0 and got["tool_accuracy"] == 0.0


def test_means_leave_out_tasks_without_a_value() -> None:
    means = judged_means([{"tool_accuracy": 1.0, "faithfulness": 0.5}, {"tool_accuracy": None, "faithfulness": 0.0}])
    assert means["tool_accuracy"].value == 1.0 and means["tool_accuracy"].n == 1
    assert means["faithfulness"].value == 0.25 and means["faithfulness"].n == 2
    assert means["grounding_score"].value is None and means["grounding_score"].interval is None


def test_is_unit_refuses_booleans_out_of_range_and_non_numbers() -> None:
    assert is_unit(0) and is_unit(1) and is_unit(0.3)
    assert not any(is_unit(v) for v in (True, False, -0.1, 1.01, "0.5", None, float("nan")))


# ---------------------------------------------------------------------------------- against a server


def questions() -> tuple[AgentXStepQuestion, AgentXToolQuestion, AgentXTraceQuestion]:
    step_q, tool_q, trace_q = task((OCR, CALC), (OCR, CALC, THINK)).questions()
    return step_q, tool_q, trace_q


def test_each_kind_sends_its_versioned_prompt_and_the_traces(server) -> None:  # noqa: F811
    cache = InMemoryVerdictCache()
    judge = _judge(server, cache=cache)
    step_q, tool_q, trace_q = questions()
    assert judge.agentx_steps([step_q]) == [((0.5, 1.0), (0.5, 1.0))]  # two aligned pairs, the extra step not asked
    assert judge.agentx_tool_accuracy([tool_q]) == [(0.75, 0.75)]
    assert judge.agentx_trace([trace_q]) == [(0.5, 1.0, 0.25)]
    sent = {}
    for req in server.requests:
        system, user = req["messages"][0]["content"], json.loads(req["messages"][1]["content"])
        kind = next(k for k in ("agentx_steps", "agentx_tool_accuracy", "agentx_trace") if system == load_prompt(k))
        sent[kind] = user["questions"]
    assert [p["prediction"]["tool"]["name"] for p in sent["agentx_steps"][0]["pairs"]] == ["OCR", "Calculator"]
    assert sent["agentx_steps"][0]["pairs"][0]["reference"]["tool"] == {
        "name": "OCR", "args": {"image": "sign.jpg"}, "output": "2, 3"}
    assert sent["agentx_steps"][0]["reference_answer"] == "5"
    assert [c["tool"]["name"] for c in sent["agentx_tool_accuracy"][0]["calls"]] == ["OCR", "Calculator"]
    tools = {t["name"]: t for t in sent["agentx_tool_accuracy"][0]["tools"]}
    assert tools["OCR"]["description"] == "Reads text." and tools["Calculator"]["description"] == "(not a declared tool)"
    trace = sent["agentx_trace"][0]
    assert trace["reference"]["answer"] == "5" and trace["reference"]["justification"] == "2 + 3"
    assert trace["prediction"]["answer"] == "5" and len(trace["prediction"]["steps"]) == 3
    # verdicts are cached under the prompt's version: a second ask sends nothing
    assert {v for (_, v, _) in cache._data} == {f"{k}.{PROMPT_VERSIONS[k]}" for k in sent}
    n = len(server.requests)
    assert judge.agentx_trace([trace_q]) == [(0.5, 1.0, 0.25)]
    assert len(server.requests) == n


def test_one_question_per_request_uses_the_v1_prompts(server) -> None:  # noqa: F811
    judge = _judge(server, batch_size=1)
    _, _, trace_q = questions()
    assert judge.agentx_trace([trace_q, trace_q]) == [(0.5, 1.0, 0.25)]  * 2
    req = server.requests[0]
    assert req["messages"][0]["content"] == load_prompt("agentx_trace", "v1")
    assert "questions" not in json.loads(req["messages"][1]["content"])


@pytest.mark.parametrize("bad", [
    {**AGENTX_TRACE, "faithfulness": 1.5},  # out of range
    {**AGENTX_TRACE, "semantic_accuracy": -0.2},
    {**AGENTX_TRACE, "factual_precision": True},  # a boolean is not a score
    {**AGENTX_TRACE, "factual_precision": "0.5"},
    {"faithfulness": 0.5, "factual_precision": 1},  # one missing
])
def test_a_malformed_trace_verdict_is_asked_again_never_clamped(server, bad) -> None:  # noqa: F811
    server.script = [("content", json.dumps(bad))]
    judge = _judge(server, batch_size=1)
    assert judge.agentx_trace([questions()[2]]) == [(0.5, 1.0, 0.25)]  # the retry's answer, not 1 or 0
    assert len(server.requests) == 2


def test_step_lists_of_the_wrong_length_or_out_of_range_are_malformed(server) -> None:  # noqa: F811
    step_q, tool_q, _ = questions()
    server.script = [("content", json.dumps({"grounding": [0.5], "context": [1, 1]})),  # one short
                     ("content", json.dumps({"grounding": [0.5, 2], "context": [1, 1]}))]  # 2 > 1
    judge = _judge(server, batch_size=1)
    assert judge.agentx_steps([step_q]) == [((0.5, 1.0), (0.5, 1.0))]
    assert len(server.requests) == 3
    server.script = [("content", json.dumps({"tool_accuracy": [0.75, 0.75, 0.75]}))]  # three for two calls
    assert judge.agentx_tool_accuracy([tool_q]) == [(0.75, 0.75)]
    assert len(server.requests) == 5


def test_a_batch_with_one_bad_score_is_split_and_only_its_half_asked_again(server) -> None:  # noqa: F811
    trace_q = questions()[2]
    other = AgentXTraceQuestion("Another query?", (), "", "", (), "x", "")
    bad = json.dumps({"answers": [{"id": 0, **AGENTX_TRACE}, {"id": 1, **AGENTX_TRACE, "faithfulness": 7}]})
    server.script = [("content", bad)]
    judge = _judge(server)
    assert judge.agentx_trace([trace_q, other]) == [(0.5, 1.0, 0.25)] * 2
    assert [len(json.loads(r["messages"][1]["content"])["questions"]) for r in server.requests] == [2, 1, 1]


def test_a_score_out_of_range_every_time_fails_with_a_judge_error(server) -> None:  # noqa: F811
    server.script = [("content", json.dumps({**AGENTX_TRACE, "faithfulness": 1.2}))] * 3
    judge = _judge(server, batch_size=1, max_retries=2)
    with pytest.raises(JudgeError, match="'faithfulness' must be a number from 0 to 1"):
        judge.agentx_trace([questions()[2]])
