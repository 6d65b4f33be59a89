"""The streamed validator against the bad-file corpus: each problem names its line and field."""

from __future__ import annotations

import io

import pytest

from evaluation.tests.submission_helpers import BAD_FILES, UIDS, jsonl, prediction
from evaluation.validation import iter_prediction_objects, validate_predictions


def check(data: bytes, *, max_line_bytes: int = 1 << 20, max_errors: int = 50):
    return validate_predictions(io.BytesIO(data), sample_ids=UIDS, benchmark="tiny",
                                max_line_bytes=max_line_bytes, max_errors=max_errors)


CORPUS = [
    # file, line, field, a piece of the message a person reads
    ("broken_json.jsonl", 2, "", "not valid JSON"),
    ("truncated_last_line.jsonl", 2, "", "the file seems truncated"),
    ("bom.jsonl", 1, "", "byte-order mark (BOM)"),
    ("latin1.jsonl", 2, "", "not valid UTF-8 (byte 0xe9 at column"),
    ("utf16.jsonl", 1, "", "the file is UTF-16; save it as UTF-8"),
    ("unknown_sample.jsonl", 2, "sample_id", "'nope-42' is not a sample of benchmark 'tiny'"),
    ("duplicate.jsonl", 3, "sample_id", "duplicate: sample 's1' in mode 'text' is already on line 1"),
    ("bad_mode.jsonl", 2, "mode", "expected one of text, adaptive, oracle, blind, got 'agentic'"),
    ("steps_wrong_type.jsonl", 1, "steps", "expected a list, got 'rotate then zoom'"),
    ("negative_tokens.jsonl", 1, "usage.input_tokens", "expected a non-negative number or null, got -5"),
    ("empty.jsonl", None, "", "the file is empty"),
]


@pytest.mark.parametrize(("name", "line", "field", "message"), CORPUS, ids=[c[0] for c in CORPUS])
def test_each_bad_file_is_rejected_with_its_line_field_and_reason(name, line, field, message) -> None:
    report = check((BAD_FILES / name).read_bytes())
    assert not report.ok
    first = report.errors[0]
    assert (first.line, first.field) == (line, field)
    assert message in first.message


def test_a_line_over_the_length_limit_is_named_and_the_next_lines_are_still_read() -> None:
    data = (BAD_FILES / "long_line.jsonl").read_bytes() + jsonl([prediction("s3", "text", steps=5)])
    report = check(data, max_line_bytes=2048)
    assert [(e.line, e.field) for e in report.errors] == [(2, ""), (3, "steps")]
    assert "longer than the limit of 2,048 bytes" in report.errors[0].message


def test_only_the_first_errors_are_listed() -> None:
    data = jsonl([{"sample_id": f"x{i}", "mode": "text"} for i in range(80)])
    report = check(data, max_errors=50)
    assert len(report.errors) == 50 and report.truncated
    assert report.errors[-1].line == 50


def test_a_valid_file_has_a_coverage_report_of_missing_samples_per_mode() -> None:
    data = jsonl([prediction(u, "text") for u in UIDS] + [prediction(u, "adaptive") for u in ("s1", "s4")])
    report = check(data)
    assert report.ok and report.n_predictions == 8
    assert report.coverage["text"] == {"predicted": 6, "missing": 0, "missing_examples": []}
    assert report.coverage["adaptive"] == {"predicted": 2, "missing": 4,
                                           "missing_examples": ["s2", "s3", "s5", "s6"]}
    assert "oracle" not in report.coverage


def test_blank_lines_and_windows_line_ends_are_accepted_and_numbering_follows_the_editor() -> None:
    data = b'{"sample_id": "s1", "mode": "text"}\r\n\r\n{"sample_id": "s1", "mode": "text"}\r\n'
    report = check(data)
    assert [(e.line, e.field) for e in report.errors] == [(3, "sample_id")]


def test_unknown_fields_are_not_errors() -> None:
    report = check(jsonl([prediction("s1", "text", harness="vlmevalkit", extra={"a": 1})]))
    assert report.ok


def test_the_scorer_reads_back_exactly_the_validated_objects() -> None:
    lines = [prediction(u, "text") for u in UIDS]
    data = b"\xef\xbb\xbf" + jsonl(lines) + b"\n\n"
    assert list(iter_prediction_objects(io.BytesIO(data), 1 << 20)) == lines


# ---- failure classes (spec runs.md): an attempt that ended without an answer


def failed(uid: str, failure: object, **extra: object) -> dict:
    """A harness's line for an attempt that ended without an answer (the run record kept)."""
    return {"sample_id": uid, "mode": "adaptive", "answer": None, "failure": failure,
            "failure_detail": "no answer after 8 turns", "turns": 8,
            "steps": [{"thought": "Zoom again."}], "usage": {"input_tokens": 900, "output_tokens": 80},
            "run": {"model_ids": ["m-2025-01"], "prompt_version": "v1"}, **extra}


def test_a_line_with_a_failure_class_and_its_run_record_is_accepted() -> None:
    report = check(jsonl([failed("s1", "max_turns"), failed("s2", "timeout", answer=""),
                          prediction("s3", "adaptive", failure=None)]))
    assert report.ok, report.errors
    assert report.coverage["adaptive"]["predicted"] == 3


def test_an_unknown_failure_class_is_one_error_naming_the_line_and_the_allowed_classes() -> None:
    report = check(jsonl([prediction("s1", "adaptive"), failed("s2", "gave_up")]))
    assert [(e.line, e.field) for e in report.errors] == [(2, "failure")]
    message = report.errors[0].message
    assert "'gave_up'" in message
    for name in ("provider_error", "timeout", "content_filter", "tool_error", "max_turns"):
        assert name in message


def test_a_line_with_a_failure_class_and_an_answer_is_an_error() -> None:
    report = check(jsonl([failed("s1", "timeout", answer="<answer>1</answer>")]))
    assert [(e.line, e.field) for e in report.errors] == [(1, "answer")]
    assert "a line with a failure class has no answer" in report.errors[0].message


def test_a_failure_detail_that_is_not_a_string_is_an_error() -> None:
    report = check(jsonl([failed("s1", "timeout", failure_detail={"code": 504})]))
    assert [(e.line, e.field) for e in report.errors] == [(1, "failure_detail")]


@pytest.mark.parametrize(("extra", "field", "message"), [
    ({"usage": {"input_tokens": 2**63, "output_tokens": 1}}, "usage.input_tokens",
     "expected a number below 10^12 on one line, got 9223372036854775808"),
    ({"usage": {"input_tokens": 1, "output_tokens": 10**12}}, "usage.output_tokens", "below 10^12"),
    ({"cost_usd": 1e308}, "cost_usd", "expected a number below 10^9 on one line, got 1e+308"),
    ({"latency_ms": 1e300}, "latency_ms", "below 10^12"),
    ({"turns": 10**7}, "turns", "below 10^6"),
])
def test_a_number_out_of_range_is_one_error_naming_its_line_and_field(extra, field, message) -> None:
    data = jsonl([prediction("s1", "text"), prediction("s2", "text", **extra), prediction("s3", "text")])
    report = check(data)
    assert [(e.line, e.field) for e in report.errors] == [(2, field)]
    assert message in report.errors[0].message


def test_numbers_just_inside_the_range_are_accepted() -> None:
    line = prediction("s1", "text", usage={"input_tokens": 10**12 - 1, "output_tokens": 0}, cost_usd=999_999_999.0)
    assert check(jsonl([line])).ok


def test_bad_json_names_our_line_and_its_column_not_the_decoders_line() -> None:
    report = check(jsonl([prediction("s1", "text"), prediction("s2", "text")]) + b'{"sample_id": "s3",, "mode": "text"}\n')
    (error,) = report.errors
    assert error.line == 3
    assert error.message == "not valid JSON at column 20: unexpected character, expected a string key"
