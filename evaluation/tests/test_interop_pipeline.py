"""Other harnesses' logs through the real pipeline (docs/interop.md): an Inspect log, an lmms-eval samples
file and a VLMEvalKit agent-mode table, converted in the worker's validation stage, make the same row
(figures and per-sample results) as the same predictions uploaded in our format."""

from __future__ import annotations

import json

import pytest

from evaluation.tests import author_shapes as shapes
from evaluation.tests import inspect_logs
from evaluation.tests.test_conversion_pipeline import ANSWERS, UIDS, bench, owner, results, rows, submit  # noqa: F401

pytestmark = pytest.mark.django_db


def _lines(content: bytes) -> list[dict]:
    return [json.loads(x) for x in content.splitlines()]


def test_an_inspect_log_makes_the_row_of_the_same_predictions_in_our_format(
        bench, owner, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    preds = shapes.generate(UIDS, ANSWERS, seed=5)
    # The log names the model that answered; ours says the same (else only the model ids would differ).
    ours = b"".join(json.dumps({**line, "run": {"model_ids": ["openai/sim-model"]}}).encode() + b"\n"
                    for line in _lines(shapes.ours_adaptive(preds)))
    log = inspect_logs.log_of_lines(_lines(ours), media={u: [b"png"] for u in UIDS}, tool_images={},
                                    zstd=True, pooled=True)
    theirs = submit(bench, owner, log, django_capture_on_commit_callbacks, "2026-08-01_adaptmm.eval", "inspect")
    mine = submit(bench, owner, ours, django_capture_on_commit_callbacks, "ours.jsonl")
    assert theirs.status == "done", (theirs.failure_reason, theirs.errors)
    assert mine.status == "done", (mine.failure_reason, mine.errors)
    assert results(theirs) == results(mine)
    assert rows(theirs) == rows(mine)
    assert {r[2] for r in rows(mine)} == {True, False} and any(r[5] for r in rows(mine))  # right, wrong, calls


def test_an_inspect_log_of_another_benchmark_fails_with_one_message(
        bench, owner, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    line = {"sample_id": "x-1", "mode": "text", "answer": "3", "steps": [], "run": {"model_ids": ["m"]}}
    sample = inspect_logs.sample_of_line(line, media=[b"png"], tool_images={}, model="m", pooled=True)
    log = inspect_logs.eval_zip(inspect_logs.header(model="m", task_args={"mode": "text"}), [sample], zstd=True)
    sub = submit(bench, owner, log, django_capture_on_commit_callbacks, "run.eval", "inspect")
    assert sub.status == "failed"
    assert sub.failure_reason.startswith("The file could not be converted from Inspect AI log")
    assert sub.errors[0]["where"] == "samples/x-1_epoch_1.json" and sub.errors[0]["field"] == "id"
