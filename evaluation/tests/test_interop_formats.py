"""VLMEvalKit's agent mode (converters/vlmevalkit_agent.py) and lmms-eval's samples (converters/lmms_eval.py),
without the database: each becomes the lines of the same predictions in our format, and what the format
cannot carry is the only difference (docs/interop.md, "What is lost")."""

from __future__ import annotations

import hashlib
import io
import json
from typing import Any

import pytest

from annotation.imagetools import resolve_tool_name
from evaluation.converters import BenchmarkContext, convert
from evaluation.tests import interop_shapes as shapes

UIDS = ("q1", "q2", "q3", "q4")
GOLD = {"q1": "A", "q2": "7", "q3": "B", "q4": "12"}


def ours() -> list[dict[str, Any]]:
    """Adaptive lines with calls (one failing), explicit references as our harness writes them."""
    lines = []
    for i, uid in enumerate(UIDS):
        steps: list[dict[str, Any]] = []
        for k in range(i % 3):
            steps.append({"thought": f"look {k}", "tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 10 + k, 10]},
                                                          "input": f"img{k}", "output": f"img{k + 1}", "error": None}})
        steps.append({"thought": f"so <answer>{GOLD[uid] if i != 2 else 'C'}</answer>"})
        lines.append({"sample_id": uid, "mode": "adaptive", "answer": GOLD[uid] if i != 2 else "C", "steps": steps,
                      "usage": {"input_tokens": 100 + i, "output_tokens": 10 + i}})
    return lines


def run(content: bytes, fmt: str, filename: str = "", context: BenchmarkContext | None = None) -> tuple[Any, list]:
    out = io.BytesIO()
    report = convert(io.BytesIO(content), out, fmt=fmt, filename=filename, sample_ids=UIDS,
                     resolve_tool=resolve_tool_name, context=context or BenchmarkContext(
                         splits={"test": list(UIDS)}, gold=GOLD, media=dict.fromkeys(UIDS, 1)))
    return report, [json.loads(x) for x in out.getvalue().splitlines()]


# ------------------------------------------------------------------------------------------ VLMEvalKit agent

@pytest.mark.parametrize("fmt,tagged", [("tsv", False), ("json", False), ("tsv", True)],
                         ids=["tsv-python-repr", "json", "tagged-tool-calls"])
def test_agent_mode_rows_carry_their_tool_calls(fmt: str, tagged: bool) -> None:
    table, _files = shapes.agent_table(ours(), fmt=fmt, tagged=tagged)
    report, got = run(table, "vlmevalkit", f"M_Bench.{fmt}")
    assert report.ok, report.errors
    for line, mine in zip(got, ours(), strict=True):
        assert line["mode"] == "adaptive" and line["answer"] == mine["answer"]
        assert line["steps"] == mine["steps"]
        assert line["turns"] == len(mine["steps"])
        # Without the images the file cannot say which image each call made: not recorded, so "not available".
        assert "tool_outputs" not in line["run"] and "images_sent" not in line["run"]


def test_agent_mode_in_a_zip_records_each_tool_image_by_its_hash() -> None:
    table, files = shapes.agent_table(ours())
    report, got = run(shapes.agent_zip(table, files), "vlmevalkit", "run.zip")
    assert report.ok, report.errors
    for line in got:
        calls = [s["tool"] for s in line["steps"] if "tool" in s]
        expected = {c["output"]: hashlib.sha256(f"{line['sample_id']}-adaptive-{c['output']}".encode()).hexdigest()
                    for c in calls}
        assert line["run"]["tool_outputs"] == expected
        media = hashlib.sha256(f"{line['sample_id']}-medium-0".encode()).hexdigest()
        assert line["run"]["images_sent"] == [[media], *([h] for h in expected.values())]


def test_agent_mode_a_missing_image_makes_the_record_unavailable_not_wrong() -> None:
    table, files = shapes.agent_table(ours())
    dropped = {k: v for i, (k, v) in enumerate(files.items()) if i != 2}
    report, got = run(shapes.agent_zip(table, dropped), "vlmevalkit", "run.zip")
    assert report.ok
    affected = [line for line in got if "tool_outputs" not in line["run"]]
    assert len(affected) == 1 and affected[0]["steps"]  # its calls kept, only the image record gone


def test_a_bad_extra_records_cell_names_its_row_and_field() -> None:
    table = b"index\tprediction\textra_records\nq1\tA\t{'conversation': [1, \nq2\t7\t\n"
    report, got = run(table, "vlmevalkit", "M_Bench.tsv")
    assert [(e.where, e.field) for e in report.errors] == [("line 2", "extra_records")]
    assert "neither JSON nor a Python literal" in report.errors[0].message


def test_a_table_without_extra_records_stays_text_mode() -> None:
    report, got = run(b"index\tprediction\nq1\tA\n", "vlmevalkit", "M_Bench.tsv")
    assert report.ok and got == [{"sample_id": "q1", "mode": "text", "answer": "A"}]


# ------------------------------------------------------------------------------------------ lmms-eval

def test_lmms_eval_samples_map_doc_ids_by_the_split_order() -> None:
    lines = ours()
    shuffled = [lines[2], lines[0], lines[3], lines[1]]  # the file's line order is not the split's
    report, got = run(shapes.lmms_samples(shuffled, UIDS, GOLD), "lmms-eval", "20260801_samples_bench.jsonl")
    assert report.ok, report.errors
    assert [g["sample_id"] for g in got] == ["q3", "q1", "q4", "q2"]
    first = got[1]
    assert first["mode"] == "text" and first["answer"] == "A" and first["response"] == "The answer is A."
    assert first["usage"] == {"input_tokens": 100, "output_tokens": 10}
    assert first["run"]["reasoning_tokens"] == 3 and first["run"]["external_verdict"] == {"exact_match": 1.0}
    # Lost, by the format: the steps (lmms-eval keeps none in a text run), the cost, the failure class.
    assert {"steps", "cost_usd", "failure"}.isdisjoint(first)


def test_lmms_eval_picks_the_split_the_file_ran_on() -> None:
    context = BenchmarkContext(splits={"dev": ["q1", "q2"], "test": ["q3", "q4"], "all": list(UIDS)}, gold=GOLD)
    lines = [x for x in ours() if x["sample_id"] in ("q3", "q4")]
    report, got = run(shapes.lmms_samples(lines, ["q3", "q4"], GOLD), "lmms-eval", context=context)
    assert report.ok and [g["sample_id"] for g in got] == ["q3", "q4"]


def test_lmms_eval_prefers_the_split_the_file_covers_whole_and_says_so() -> None:
    gold = {"q1": "A", "q2": "A", "q3": "A", "q4": "B"}
    context = BenchmarkContext(splits={"all": ["q1", "q3", "q2", "q4"], "dev": ["q1", "q2"], "test": ["q3", "q4"]},
                               gold=gold)
    lines = [{"sample_id": u, "mode": "text", "answer": "A"} for u in ("q1", "q2")]
    report, got = run(shapes.lmms_samples(lines, ["q1", "q2"], gold), "lmms-eval", context=context)
    assert report.ok and [g["sample_id"] for g in got] == ["q1", "q2"]  # dev's, not the whole benchmark's q1, q3
    assert report.warnings == ["the targets fit the splits 'all', 'dev'; the documents are read as the 'dev' "
                               "split's (the one the file covers whole, else the first)"]


def test_lmms_eval_in_another_order_is_refused_with_the_first_differing_line() -> None:
    order = ["q2", "q1", "q3", "q4"]  # their split lists q2 first; ours lists q1 first
    report, got = run(shapes.lmms_samples(ours(), order, GOLD), "lmms-eval")
    assert not got and len(report.errors) == 1
    error = report.errors[0]
    assert (error.where, error.field) == ("line 1", "target")
    # Line 1 is q1's, document 1 in their order; document 1 of ours is q2, whose gold is 7.
    assert "target 'A' differs from our gold for sample 'q2', which is document 1" in error.message
    assert "order of our export" in error.message


def test_lmms_eval_agentic_rounds_give_turns_and_a_call_count() -> None:
    report, got = run(shapes.lmms_samples(ours(), UIDS, GOLD, agentic=True), "lmms-eval")
    assert report.ok
    assert [(g["mode"], g["turns"], g["run"]["tool_call_count"]) for g in got] == [
        ("adaptive", 0, 0), ("adaptive", 1, 1), ("adaptive", 2, 2), ("adaptive", 0, 0)]
    assert all("steps" not in g for g in got)  # counts of calls, not the calls: lost


def test_lmms_eval_resps_left_out_when_equal_to_the_filtered_ones() -> None:
    report, got = run(shapes.lmms_samples(ours()[:1], UIDS, GOLD, same_resps=True), "lmms-eval")
    assert report.ok and got[0]["answer"] == got[0]["response"] == "The answer is A."


def test_lmms_eval_sent_as_our_format_is_named() -> None:
    out = io.BytesIO()
    report = convert(io.BytesIO(shapes.lmms_samples(ours(), UIDS, GOLD)), out, fmt="vtcbench")
    assert "lmms-eval samples" in report.errors[0].message and "'lmms-eval'" in report.errors[0].message
