"""Other harnesses' logs through the real pipeline (docs/interop.md): an Inspect log, an lmms-eval samples
file and a VLMEvalKit agent-mode table, converted in the worker's validation stage, make the same row
(figures and per-sample results) as the same predictions uploaded in our format."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from evaluation.tests import author_shapes as shapes
from evaluation.tests import inspect_logs, interop_shapes
from evaluation.models import Submission
from evaluation.tests.submission_helpers import upload
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


def _ours_adaptive_lines(seed: int) -> list[dict]:
    """Adaptive lines with explicit references (as our harness writes them), some calls, right and wrong."""
    lines = []
    for p in shapes.generate(UIDS, ANSWERS, seed=seed):
        steps, number = [], 1
        for thought, _display, name, args in p.steps:
            if name is None or name == "OCR":  # a registry tool: its image is one VLMEvalKit would have saved
                steps.append({"thought": thought})
                continue
            steps.append({"thought": thought, "tool": {"name": name, "args": args, "input": f"img{number - 1}",
                                                       "output": f"img{number}", "error": None}})
            number += 1
        lines.append({"sample_id": p.uid, "mode": "adaptive", "answer": p.answer, "steps": steps,
                      "turns": len(steps)})
    return lines


def test_a_vlmevalkit_agent_mode_zip_makes_the_row_of_the_same_predictions_in_our_format(
        bench, owner, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    import hashlib

    lines = _ours_adaptive_lines(seed=9)
    table, files = interop_shapes.agent_table(lines)
    upload = interop_shapes.agent_zip(table, files)
    # Ours records the same images: the medium first, then each call's output (tool outputs shown).
    for line in lines:
        outputs = [s["tool"]["output"] for s in line["steps"] if "tool" in s]
        made = {o: hashlib.sha256(f"{line['sample_id']}-adaptive-{o}".encode()).hexdigest() for o in outputs}
        sent = [[hashlib.sha256(f"{line['sample_id']}-medium-0".encode()).hexdigest()]]
        for step in line["steps"]:
            sent.append([made[step["tool"]["output"]]] if "tool" in step else [])
        line["run"] = {"tool_outputs": made, "images_sent": sent[:len(line["steps"])]}
    ours = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    theirs = submit(bench, owner, upload, django_capture_on_commit_callbacks, "agent_run.zip", "vlmevalkit")
    mine = submit(bench, owner, ours, django_capture_on_commit_callbacks, "ours.jsonl")
    assert theirs.status == "done", (theirs.failure_reason, theirs.errors)
    assert mine.status == "done", (mine.failure_reason, mine.errors)
    assert results(theirs) == results(mine)
    assert rows(theirs) == rows(mine)
    assert any(r[5] for r in rows(mine)) and results(mine)["tool_effect"]["shown"]["n"] > 0


def test_an_lmms_eval_samples_file_makes_the_row_of_the_same_predictions_in_our_format(
        bench, owner, django_capture_on_commit_callbacks) -> None:  # noqa: F811
    test_split = [u for i, u in enumerate(UIDS) if i % 2 == 0]  # the bench fixture's test samples, in order
    preds = [p for p in shapes.generate(UIDS, ANSWERS, seed=3) if p.uid in test_split]
    lines = [{"sample_id": p.uid, "mode": "text", "answer": p.answer, "response": f"The answer is {p.answer}.",
              "usage": {"input_tokens": p.usage[0], "output_tokens": p.usage[1]}} for p in preds]
    upload = interop_shapes.lmms_samples(lines, test_split, ANSWERS)
    theirs = submit(bench, owner, upload, django_capture_on_commit_callbacks, "20260801_samples_bench.jsonl",
                    "lmms-eval")
    mine = submit(bench, owner, b"".join(json.dumps(x).encode() + b"\n" for x in lines),
                  django_capture_on_commit_callbacks, "ours.jsonl")
    assert theirs.status == "done", (theirs.failure_reason, theirs.errors)
    assert results(theirs) == results(mine) and rows(theirs) == rows(mine)
    assert {r[2] for r in rows(mine)} == {True, False}


def test_the_upload_form_and_submit_take_the_new_formats(bench, owner, client, tmp_path,  # noqa: F811
                                                         django_capture_on_commit_callbacks) -> None:
    line = {"sample_id": "11", "mode": "text", "answer": ANSWERS["11"], "steps": [], "run": {"model_ids": ["m"]}}
    sample = inspect_logs.sample_of_line(line, media=[b"png"], tool_images={}, model="m", pooled=True)
    log = inspect_logs.eval_zip(inspect_logs.header(model="m", task_args={"mode": "text"}), [sample], zstd=True)
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        res = client.post("/submissions/new/", {"benchmark": "numeric", "model_name": "inspect-model",
                                                "format": "inspect", "file": upload(log, "run.eval")})
    assert res.status_code == 302
    sub = Submission.objects.get(model_name="inspect-model")
    assert sub.format == "inspect" and sub.status == "done", (sub.failure_reason, sub.errors)
    path = tmp_path / "20260801_samples_bench.jsonl"
    path.write_bytes(interop_shapes.lmms_samples([line], ["11"], ANSWERS))
    out = StringIO()
    call_command("submit", "numeric", str(path), "--model", "lmms", "--user", "grace", "--format", "lmms-eval",
                 "--sync", stdout=out)
    assert json.loads(out.getvalue().split("\n", 1)[1])["modes"]["text"]["accuracy"]["overall"]["count"] == 1
