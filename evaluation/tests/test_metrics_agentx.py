"""Agent-X's exact figures, computed by hand (evaluation/metrics/agentx.py; docs/metrics.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evaluation.metrics.agentx import (
    Call,
    TaskInput,
    agentx_report,
    arguments_match,
    task_figures,
    tool_precision,
    toolset_f1,
)


def calls(*names: str) -> tuple[Call, ...]:
    return tuple(Call(n, {}) for n in names)


def test_toolset_f1_counts_duplicates_as_a_multiset() -> None:
    # ref {OCR x2, Calculator}; pred {OCR x1, Calculator}: hit 2, P 2/2, R 2/3 -> F1 0.8
    assert toolset_f1(["OCR", "Calculator"], ["OCR", "OCR", "Calculator"]) == pytest.approx(0.8)
    # pred repeats OCR three times against one: hit 1, P 1/3, R 1/1 -> F1 0.5 (a set F1 would say 1)
    assert toolset_f1(["OCR", "OCR", "OCR"], ["OCR"]) == pytest.approx(0.5)
    assert toolset_f1([], ["OCR"]) == 0.0
    assert toolset_f1(["OCR"], []) is None
    assert toolset_f1(["WebSearch"], ["OCR"]) == 0.0


def test_tool_precision_aligns_by_order_with_missing_and_extra_steps() -> None:
    ref = ["OCR", "Calculator", "OverlayText"]
    assert tool_precision(["OCR", "Calculator", "OverlayText"], ref) == 1.0
    # missing the last step: 2 of 2 predicted are right (the miss shows in recall, not here)
    assert tool_precision(["OCR", "Calculator"], ref) == 1.0
    # two extra steps: positions 4 and 5 have no reference step -> 3 of 5
    assert tool_precision(["OCR", "Calculator", "OverlayText", "OCR", "OCR"], ref) == pytest.approx(0.6)
    # order matters: swapped first two -> only position 3 right, 1 of 3
    assert tool_precision(["Calculator", "OCR", "OverlayText"], ref) == pytest.approx(1 / 3)
    # a step skipped early shifts everything after it: 0 of 2
    assert tool_precision(["Calculator", "OverlayText"], ref) == 0.0
    assert tool_precision([], ref) == 0.0
    assert tool_precision(["OCR"], []) is None


def test_generation_arguments_are_compared_normalised() -> None:
    assert arguments_match({"keywords": "A  Red Car", "n": 1}, {"keywords": "a red car", "n": 1.0})
    assert not arguments_match({"keywords": "a red car"}, {"keywords": "a blue car"})
    assert not arguments_match({"keywords": "a red car", "style": "x"}, {"keywords": "a red car"})


def test_generative_tasks_have_their_own_goal_accuracy() -> None:
    ref = (Call("SceneDescriber", {}), Call("ImageGenerator", {"keywords": "a cat on a mat"}))
    right = TaskInput("g1", "generative", ref,
                      (Call("SceneDescriber", {}), Call("ImageGenerator", {"keywords": "A cat on a mat"})), correct=False)
    wrong = TaskInput("g2", "Generative", ref, (Call("ImageGenerator", {"keywords": "a dog"}),), correct=True)
    # names-only reference: undecidable, never guessed
    names_only = TaskInput("g3", "factual", calls("ImageGenerator"), calls("ImageGenerator"), correct=True)
    f = task_figures(right)
    assert f.generative and f.goal_accuracy is None and f.goal_accuracy_generation == 1.0
    assert task_figures(wrong).goal_accuracy_generation == 0.0  # its answer being "correct" does not count
    g3 = task_figures(names_only)
    assert g3.generative and g3.goal_accuracy_generation is None and g3.goal_accuracy is None


def test_goal_accuracy_with_generation_reads_the_last_generation_call() -> None:
    # An agent that gets the image wrong, then right on a second try, has generated the right image.
    ref = (Call("SceneDescriber", {}), Call("ImageGenerator", {"keywords": "a cat on a mat"}))
    retried = TaskInput("g1", "generative", ref, (Call("SceneDescriber", {}), Call("ImageGenerator", {"keywords": "a dog"}),
                                                  Call("ImageGenerator", {"keywords": "a cat on a mat"})))
    spoiled = TaskInput("g2", "generative", ref, (Call("ImageGenerator", {"keywords": "a cat on a mat"}),
                                                  Call("ImageGenerator", {"keywords": "a dog"})))
    assert task_figures(retried).goal_accuracy_generation == 1.0
    assert task_figures(spoiled).goal_accuracy_generation == 0.0
    assert agentx_report([retried, spoiled], resamples=10).goal_accuracy_generation.value == 0.5


def test_benchmark_means_over_tasks_with_a_value() -> None:
    tasks = [
        # t1: F1 1, precision 1, correct
        TaskInput("t1", "factual", calls("OCR", "Calculator"), calls("OCR", "Calculator"), correct=True),
        # t2: ref OCR, OCR; pred OCR, WebSearch, OCR: hit 2, P 2/3, R 1 -> F1 0.8; precision 1/3; wrong
        TaskInput("t2", "interpretive", calls("OCR", "OCR"), calls("OCR", "WebSearch", "OCR"), correct=False),
        # t3: unparseable reply: no steps -> F1 0, precision 0; answer right
        TaskInput("t3", "factual", calls("ObjectCounter"), (), correct=True),
        # t4: no prediction at all: left out of every mean
        TaskInput("t4", "factual", calls("OCR"), None),
        # t5: reference calls no tool: no F1, no precision; answer wrong
        TaskInput("t5", "factual", (), calls("OCR"), correct=False),
        # t6: generative, matching generation call; precision: ImageGenerator at position 1 vs ref pos 1 -> 1/1
        TaskInput("t6", "generative", (Call("ImageGenerator", {"keywords": "sunset"}),),
                  (Call("ImageGenerator", {"keywords": "Sunset"}),)),
    ]
    report = agentx_report(tasks, resamples=200)
    assert [t.uid for t in report.tasks] == ["t1", "t2", "t3", "t5", "t6"]
    assert report.toolset_accuracy.n == 4 and report.toolset_accuracy.value == pytest.approx((1 + 0.8 + 0 + 1) / 4)
    assert report.tool_precision.value == pytest.approx((1 + 1 / 3 + 0 + 1) / 4)
    assert (report.goal_accuracy.value, report.goal_accuracy.n) == (pytest.approx(2 / 4), 4)  # t1, t3 of t1, t2, t3, t5
    assert (report.goal_accuracy_generation.value, report.goal_accuracy_generation.n) == (1.0, 1)
    assert report.n_generative == 1 and report.n_generative_undecided == 0
    lo_hi = report.toolset_accuracy.interval
    assert lo_hi is not None and lo_hi.low <= report.toolset_accuracy.value <= lo_hi.high
    empty = agentx_report([])
    assert empty.goal_accuracy.value is None and empty.goal_accuracy.n == 0


def test_the_new_library_modules_import_no_django() -> None:
    code = ("import sys, evaluation.metrics.agentx, evaluation.metrics.guessability;"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('django','rest_framework','celery','annotation','leaderboard')];"
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
