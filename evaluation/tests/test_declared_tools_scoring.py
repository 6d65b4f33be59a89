"""Scoring against declared tools and name-only reference chains (metrics.md sections 4 and 5)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model

from annotation.imagetools import resolve_tool_name
from annotation.models import Benchmark
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from evaluation import services
from evaluation.benchmark_cache import benchmark_tool_set, tool_hooks
from evaluation.judges import OfflineJudge
from evaluation.metrics import score_submission
from evaluation.models import PredictionResult
from evaluation.tests.submission_helpers import jsonl, upload

OCR = {
    "name": "OCR",
    "description": "Read the text in an image.",
    "args_schema": {"type": "object", "properties": {"image": {"type": "string"}}, "required": ["image"],
                    "additionalProperties": False},
}


def test_a_name_only_reference_chain_counts_for_toolset_edit_distance_and_length() -> None:
    # VTC-Bench's shape: display names, no arguments or references.
    samples = [{"uid": "v", "answer": "7", "answer_type": "number",
                "toolchain": [{"tool": "Crop"}, {"tool": "Flip"}, {"tool": "Resize"}]}]
    prediction = {"sample_id": "v", "mode": "adaptive", "answer": "7", "steps": [
        {"tool": {"name": "crop_image", "args": {"x": 0, "y": 0, "width": 4, "height": 4}}},
        {"tool": {"name": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img2"}},
        {"tool": {"name": "flip", "args": {}, "input": "img2", "output": "img3"}},
    ]}
    report = score_submission(samples, [prediction], judge=OfflineJudge(), resolve_tool=resolve_tool_name)
    rec = report.records[0]
    # The answer image is img3 (the last one): flip <- rotate; the crop is a dead end.
    assert rec.effective == (1, 2) and (rec.l_total, rec.l_eff, rec.l_gt) == (3, 2, 3)
    # {crop, rotate, flip} against {crop, flip, resize}: two of three either way.
    assert rec.toolset_prf == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    # [rotate, flip] -> [crop, flip, resize]: substitute one, insert one = 2 edits over 3.
    assert rec.edit_distance == pytest.approx(2 / 3)
    chain = report.modes["adaptive"].toolchain
    assert (chain.mae_total.value, chain.mae_total.n) == (0.0, 1)
    assert (chain.mae_eff.value, chain.mae_eff.n) == (1.0, 1)
    assert chain.toolset_f1.value == pytest.approx(2 / 3) and chain.toolset_f1.n == 1
    assert chain.edit_distance.value == pytest.approx(2 / 3)


def test_a_prediction_without_calls_against_a_name_only_chain() -> None:
    samples = [{"uid": "v", "answer": "7", "toolchain": [{"tool": "Crop"}, {"tool": "Flip"}]}]
    report = score_submission(samples, [{"sample_id": "v", "mode": "adaptive", "answer": "7"}],
                              judge=OfflineJudge(), resolve_tool=resolve_tool_name)
    (record,) = report.records
    assert (record.l_total, record.toolset_prf, record.edit_distance) == (0, (0.0, 0.0, 0.0), 1.0)
    # A file with no call at all: the figures are not available (metrics.md section 14), not 0.
    chain = report.modes["adaptive"].toolchain
    assert (chain.mae_total.value, chain.toolset_f1.value, chain.edit_distance.value) == (None, None, None)
    assert chain.toolset_f1.reason == "no tool calls in this file"
    calls = {"sample_id": "w", "mode": "adaptive", "answer": "7", "steps": [{"tool": {"name": "Crop", "args": {}}}]}
    report = score_submission(samples + [{**samples[0], "uid": "w"}],
                              [{"sample_id": "v", "mode": "adaptive", "answer": "7"}, calls],
                              judge=OfflineJudge(), resolve_tool=resolve_tool_name)
    chain = report.modes["adaptive"].toolchain
    assert chain.mae_total.value == (2 + 1) / 2 and chain.toolset_f1.value == pytest.approx((0 + 2 / 3) / 2)


def test_calls_to_declared_tools_are_checked_against_their_schema() -> None:
    bench = SimpleNamespace(tools=["zoom_in"], declared_tools=[OCR])
    resolve, validate = tool_hooks(bench)
    tools = benchmark_tool_set(bench, resolve)
    assert tools == frozenset({"zoom_in", "OCR"})
    samples = [{"uid": "a", "answer": "STOP", "toolchain": [{"tool": "OCR", "args": {"image": "img0"}}]}]
    prediction = {"sample_id": "a", "mode": "adaptive", "answer": "STOP", "steps": [
        {"tool": {"name": "ocr", "args": {"image": "img0"}}},
        {"tool": {"name": "OCR", "args": {"picture": "img0"}}},
        {"tool": {"name": "WebSearch", "args": {"query": "stop sign"}}},
    ]}
    report = score_submission(samples, [prediction], judge=OfflineJudge(), tool_validator=validate,
                              benchmark_tools=tools, resolve_tool=resolve)
    calls = report.records[0].calls
    assert calls[0].decided_by != "rule"  # valid by name and arguments: the judge decides
    assert calls[1].valid is False and calls[1].errors == (
        'argument "image" is missing (it is required)', 'argument "picture" is unknown; this tool accepts: image')
    assert calls[2].valid is False and calls[2].errors == ("tool 'WebSearch' is not in this benchmark's tool set",)
    # "ocr" and "OCR" are one tool: {OCR, websearch} against {OCR}.
    assert report.records[0].toolset_prf == pytest.approx((0.5, 1.0, 2 / 3))


@pytest.mark.django_db
def test_the_pipeline_scores_declared_calls_and_a_name_only_chain(tmp_path: Path,
                                                                  django_capture_on_commit_callbacks) -> None:
    (tmp_path / "benchmark.json").write_text(json.dumps({"name": "Agentish", "tools": ["zoom_in", OCR]}))
    path = write_benchmark(tmp_path, [sample_line("a", toolchain=["Zoom in", "OCR"])])
    benchmark_import(path=path, slug="agentish")
    bench = Benchmark.objects.get(slug="agentish")
    user = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    line = {"sample_id": "a", "mode": "adaptive", "answer": "3", "steps": [
        {"tool": {"name": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}}},
        {"tool": {"name": "OCR", "args": {"image": 5}}},
    ]}
    with django_capture_on_commit_callbacks(execute=True):
        sub = services.submission_create(benchmark=bench, owner=user, file=upload(jsonl([line])), model_name="m")
    sub.refresh_from_db()
    assert sub.status == "done", sub.failure_reason
    row = PredictionResult.objects.get(submission=sub)
    assert row.calls[1]["valid"] is False and row.calls[1]["errors"] == ['argument "image": expected a string, got 5']
    assert row.calls[0]["decided_by"] != "rule"
    adaptive = sub.results["modes"]["adaptive"]["toolchain"]
    assert adaptive["toolset_f1"]["value"] == 1.0 and adaptive["mae_total"]["value"] == 0.0


# ---- the prediction file: invalid calls noted with their line and field ----------------------


def test_validation_notes_each_invalid_call_with_its_line_and_field() -> None:
    import io

    from evaluation.validation import tool_call_checker, validate_predictions

    bench = SimpleNamespace(tools=["zoom_in"], declared_tools=[OCR])
    resolve, validate = tool_hooks(bench)
    check = tool_call_checker(resolve, validate, benchmark_tool_set(bench, resolve))
    lines = [
        {"sample_id": "a", "mode": "adaptive", "answer": "x", "steps": [
            {"tool": {"name": "Zoom in", "args": {"bbox": [0, 0, 5, 5]}}},
            {"tool": {"name": "ocr", "args": {"image": "img1"}}}]},
        {"sample_id": "b", "mode": "adaptive", "answer": "x", "steps": [
            {"thought": "look"}, {"tool": {"name": "OCR", "args": {}}}]},
        {"sample_id": "c", "mode": "adaptive", "answer": "x", "steps": [
            {"tool": {"name": "rotate", "args": {"angle": 90}}},
            {"tool": {"name": "teleport", "args": {}}},
            {"tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 5]}}}]},
    ]
    report = validate_predictions(io.BytesIO(jsonl(lines)), sample_ids=["a", "b", "c"], benchmark="agentish",
                                  max_line_bytes=1 << 20, max_errors=50, check_call=check)
    assert report.ok and report.n_predictions == 3  # notes are not errors: the file is scored
    assert [str(n) for n in report.tool_notes] == [
        "line 2, field 'steps[1].tool.args': OCR: argument \"image\" is missing (it is required) "
        "(this call counts as invalid)",
        "line 3, field 'steps[0].tool.name': tool 'rotate' is not in this benchmark's tool set "
        "(this call counts as invalid)",
        "line 3, field 'steps[1].tool.name': unknown tool \"teleport\" (this call counts as invalid)",
        "line 3, field 'steps[2].tool.args': zoom_in: argument \"bbox\": expected exactly 4 items, got 3 "
        "(this call counts as invalid)",
    ]
    assert report.tool_notes_json()["count"] == 4


@pytest.mark.django_db
def test_the_status_page_lists_the_calls_counted_invalid(tmp_path: Path, django_capture_on_commit_callbacks,
                                                          client) -> None:  # noqa: ANN001
    from django.urls import reverse

    (tmp_path / "benchmark.json").write_text(json.dumps({"name": "Agentish", "tools": [OCR]}))
    benchmark_import(path=write_benchmark(tmp_path, [sample_line("a", toolchain=None)]), slug="agentish")
    bench = Benchmark.objects.get(slug="agentish")
    user = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    line = {"sample_id": "a", "mode": "adaptive", "answer": "3",
            "steps": [{"tool": {"name": "OCR", "args": {"image": "img0", "lang": "en"}}}]}
    with django_capture_on_commit_callbacks(execute=True):
        sub = services.submission_create(benchmark=bench, owner=user, file=upload(jsonl([line])), model_name="m")
    sub.refresh_from_db()
    assert sub.status == "done"
    message = 'OCR: argument "lang" is unknown; this tool accepts: image (this call counts as invalid)'
    assert sub.tool_notes == {"count": 1, "examples": [{"line": 1, "field": "steps[0].tool.args", "message": message}]}
    client.force_login(user)
    html = client.get(reverse("evaluation:detail", args=[sub.pk])).content.decode()
    assert "Tool calls counted invalid" in html and "1 tool call names an unknown tool" in html
    assert "<code>steps[0].tool.args</code>" in html and 'argument &quot;lang&quot; is unknown' in html
