"""The published JSON Schemas say what the validators accept: the spec's own examples pass both,
and a few broken lines fail both."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from evaluation.metrics import PredictionFormatError, parse_prediction

DOCS = Path(__file__).resolve().parents[1] / "docs" / "schemas"
DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "benchmark.jsonl"

SPEC_PREDICTION = {
    "sample_id": "ocr-0007",
    "mode": "adaptive",
    "answer": "<answer>831K</answer>",
    "response": "full raw text, optional",
    "steps": [
        {"thought": "The table is sideways; rotate it.",
         "tool": {"name": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1", "error": None}},
        {"thought": "Zoom into the last row.",
         "tool": {"name": "zoom_in", "args": {"bbox": [400, 870, 660, 950]}, "input": "img1", "output": "img2"}},
        {"thought": "The total reads 831K."},
    ],
    "answer_image": "img2",
    "usage": {"input_tokens": 5120, "output_tokens": 388},
    "turns": 3,
    "latency_ms": 4100,
    "cost_usd": None,
}  # fmt: skip


def schema(name: str) -> jsonschema.Draft202012Validator:
    loaded = json.loads((DOCS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(loaded)
    return jsonschema.Draft202012Validator(loaded)


def test_every_demo_benchmark_line_matches_the_benchmark_schema() -> None:
    validator = schema("benchmark-line.schema.json")
    lines = [json.loads(line) for line in DEMO.read_text().splitlines()]
    assert len(lines) >= 120
    for line in lines:
        assert not list(validator.iter_errors(line)), line["uid"]


def test_a_line_with_several_media_matches_the_benchmark_schema() -> None:
    validator = schema("benchmark-line.schema.json")
    line = json.loads(DEMO.read_text().splitlines()[0])
    del line["image"]
    assert list(validator.iter_errors(line))  # neither image nor images
    line.update(images=["a.png", "clip.mp4"], regions=[[1, 2, 3, 4], {"box": [1, 2, 3, 4], "image": "img1"}])
    assert not list(validator.iter_errors(line))
    line["regions"] = [{"box": [1, 2, 3, 4], "image": "second"}]
    assert list(validator.iter_errors(line))


def test_the_spec_prediction_example_passes_schema_and_validator() -> None:
    assert not list(schema("prediction-line.schema.json").iter_errors(SPEC_PREDICTION))
    assert parse_prediction(SPEC_PREDICTION).sample_id == "ocr-0007"


@pytest.mark.parametrize(
    ("broken", "field"),
    [
        ({"mode": "agentic"}, "mode"),
        ({"steps": "rotate then zoom"}, "steps"),
        ({"usage": {"input_tokens": -5, "output_tokens": 1}}, "usage.input_tokens"),
        ({"sample_id": ""}, "sample_id"),
        ({"answer": None, "failure": "gave_up"}, "failure"),
        ({"answer": "<answer>831K</answer>", "failure": "timeout"}, "answer"),
        ({"answer": None, "failure": "timeout", "failure_detail": 504}, "failure_detail"),
    ],
)
def test_broken_predictions_fail_schema_and_validator_alike(broken: dict, field: str) -> None:
    line = {**SPEC_PREDICTION, **broken}
    assert list(schema("prediction-line.schema.json").iter_errors(line))
    with pytest.raises(PredictionFormatError) as excinfo:
        parse_prediction(line)
    assert field in str(excinfo.value)


def test_a_failure_line_with_its_run_record_passes_schema_and_validator() -> None:
    line = {**SPEC_PREDICTION, "answer": None, "failure": "max_turns", "failure_detail": "no answer after 8 turns",
            "turns": 8, "run": {"model_ids": ["m-1"], "prompt_version": "v1"}}
    assert not list(schema("prediction-line.schema.json").iter_errors(line))
    assert parse_prediction(line).failure == "max_turns"
