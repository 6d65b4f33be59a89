"""The converters alone (no database): each author's shape becomes the same lines as ours, and
bad files get messages naming the row or line and the field."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile

import pytest

from annotation.imagetools import resolve_tool_name
from evaluation.converters import convert
from evaluation.tests import author_shapes as shapes

UIDS = ("101", "102", "103", "104", "105", "106", "107", "108")
ANSWERS = {u: str(i + 1) for i, u in enumerate(UIDS)}


def run(content: bytes, fmt: str, filename: str = "", sample_ids=UIDS, **kw):
    out = io.BytesIO()
    report = convert(io.BytesIO(content), out, fmt=fmt, filename=filename, sample_ids=sample_ids,
                     resolve_tool=resolve_tool_name, **kw)
    return report, [json.loads(x) for x in out.getvalue().splitlines()]


def lines(content: bytes) -> list[dict]:
    return [json.loads(x) for x in content.splitlines()]


@pytest.fixture
def preds():
    return shapes.generate(UIDS, ANSWERS)


@pytest.mark.parametrize("make,filename", [
    (shapes.vlmevalkit_xlsx, "M_MMReason.xlsx"),
    (lambda p: shapes.vlmevalkit_table(p, "\t"), "M_MMReason.tsv"),
    (lambda p: shapes.vlmevalkit_table(p, ","), "M_MMReason.csv"),
    (shapes.vlmevalkit_json, "M_MMReason.json"),
    (lambda p: shapes.vlmevalkit_json(p, "columns"), "M_MMReason.json"),
])
def test_vlmevalkit_result_files_become_text_mode_answers(preds, make, filename) -> None:
    report, got = run(make(preds), "vlmevalkit", filename)
    assert report.ok, report.errors
    assert got == lines(shapes.ours_text(preds))


def test_a_spreadsheet_number_answer_reads_as_the_answer_text(preds) -> None:
    report, got = run(shapes.vlmevalkit_xlsx(preds, numeric_answers=True), "vlmevalkit", "m.xlsx")
    assert report.ok
    assert [g["answer"] for g in got] == [p.answer for p in preds]  # "3", not "3.0"


def test_vlmevalkit_rows_match_on_the_id_column_when_index_is_not_a_sample(preds) -> None:
    # VTC-Bench: the uid is `id`; VLMEvalKit's `index` is a running number.
    uids = tuple(f"vtc-{u}" for u in UIDS)
    renamed = [shapes.Generated(f"vtc-{p.uid}", p.answer) for p in preds]
    report, got = run(shapes.vlmevalkit_xlsx(renamed, id_column="id"), "vlmevalkit", "M_VTC_Bench.xlsx",
                      sample_ids=uids)
    assert report.ok, report.errors
    assert [g["sample_id"] for g in got] == list(uids)


def test_vtcbench_results_become_adaptive_steps_with_registry_names(preds) -> None:
    report, got = run(shapes.vtcbench_results(preds), "vtcbench", "results_20261101.jsonl")
    assert report.ok, report.errors
    expected = lines(shapes.ours_vtcbench(preds))
    for g in got:
        g.pop("response")
    assert got == expected
    names = {s["tool"]["name"] for g in got for s in g["steps"] if "tool" in s}
    assert names <= {"rotate", "zoom_in", "histogram_eq", "OCR"} and "zoom_in" in names  # "Zoom in" resolved


def test_vtcbench_tool_errors_and_bad_arguments_are_kept_on_the_call() -> None:
    conv = [{"role": "assistant", "content": "crop it",
             "tool_calls": [{"id": "a", "function": {"name": "Crop", "arguments": "{not json"}},
                            {"id": "b", "function": {"name": "Rotate", "arguments": "{\"angle\": 90}"}}]},
            {"role": "tool", "tool_call_id": "b", "content": "Error: angle out of range"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "Flip", "input": {}}]}]
    line = {"item_id": "101", "agent_answer": "A", "full_response": "", "conversation": conv}
    report, got = run((json.dumps(line) + "\n").encode(), "vtcbench", "results_1.jsonl")
    assert report.ok, report.errors
    steps = got[0]["steps"]
    assert [s["tool"]["name"] for s in steps] == ["crop", "rotate", "flip"]
    assert steps[0]["tool"]["error"].startswith("the arguments are not valid JSON")
    assert steps[1]["tool"]["error"] == "Error: angle out of range"
    assert steps[0]["thought"] == "crop it" and steps[1]["thought"] == ""
    assert got[0]["turns"] == 2


def test_agentx_outputs_become_adaptive_steps_and_an_unparseable_reply_has_none(preds) -> None:
    report, got = run(shapes.agentx_outputs(preds, unparseable=("103",)), "agentx", "outputs.json")
    assert report.ok, report.errors
    for g in got:
        g.pop("response")
        for s in g["steps"]:
            s.pop("task", None)
            s.pop("tool_output", None)
    assert got == lines(shapes.ours_agentx(preds, unparseable=("103",)))
    assert got[2]["steps"] == []


def test_agentx_steps_wrapped_in_one_more_list_and_several_tools_in_one_step() -> None:
    item = [{"101": {"reasoning_steps": [[{"step": 1, "task": "read", "tool": "OCR, Calculator", "thought": "t"}]],
                     "final_answer": {"value": 12, "justification": "j"}}}]
    report, got = run(json.dumps(item).encode(), "agentx")
    assert report.ok
    assert [s["tool"]["name"] for s in got[0]["steps"]] == ["OCR", "Calculator"]
    assert got[0]["answer"] == "12" and got[0]["turns"] == 1


# ------------------------------------------------------------------------------- bad files

@pytest.mark.parametrize("content,fmt,filename,says", [
    (b'{"sample_id": "101", "mode": "text", "answer": "1"}\n', "vtcbench", "p.jsonl",
     "it looks like JSON Lines in our prediction format. Submit it with the format 'jsonl'"),
    (b'{"item_id": "101", "agent_answer": "1", "conversation": []}\n', "agentx", "r.jsonl",
     "it looks like VTC-Bench agent results (JSON Lines with item_id, agent_answer). Submit it with the format "
     "'vtcbench'"),
    (b'[{"101": {"reasoning_steps": "", "final_answer": {"value": "1"}}}]', "vlmevalkit", "o.json",
     "it looks like an Agent-X output list (reasoning_steps, final_answer). Submit it with the format 'agentx'"),
    (b"index\tquestion\tanswer\tA\tB\timage\n1\tq\tA\tx\ty\tiVBOR\n", "vlmevalkit", "MMReason.tsv",
     "a benchmark table (TSV with question and answer columns"),
    (b"PAR1\x00\x00", "vlmevalkit", "AdaptMMBench_ocr.parquet", "a Parquet file"),
    (b'{\n  "0": [{"query": "q", "file_path": "a.jpg", "tool_metadata": []}]\n}', "agentx", "data.json",
     "Agent-X's benchmark (data.json"),
    (b"", "agentx", "o.json", "an empty file"),
])
def test_a_file_of_another_kind_gets_one_message_saying_what_it_looks_like(content, fmt, filename, says) -> None:
    report, got = run(content, fmt, filename)
    assert len(report.errors) == 1 and not got
    assert report.errors[0].where == "file"
    assert says in report.errors[0].message, report.errors[0].message


def test_an_xlsx_sent_as_vtcbench_results_is_named_as_a_workbook(preds) -> None:
    report, _ = run(shapes.vlmevalkit_xlsx(preds), "vtcbench", "M_VTC_Bench.xlsx")
    assert [e.message for e in report.errors] == [
        "This file does not look like a VTC-Bench agent results file (results_*.jsonl with item_id and "
        "agent_answer): it looks like an Excel workbook (.xlsx). Submit it with the format 'vlmevalkit'."]


def test_a_vlmevalkit_table_without_prediction_column_names_the_header_row() -> None:
    from openpyxl import Workbook
    book = Workbook()
    book.active.append(["index", "question", "answer", "extract"])
    book.active.append([101, "q", "A", "A"])
    buf = io.BytesIO()
    book.save(buf)
    report, _ = run(buf.getvalue(), "vlmevalkit", "m.xlsx")
    assert len(report.errors) == 1
    assert report.errors[0].message.startswith("row 1: the table has no 'prediction' column")


def test_vlmevalkit_row_errors_name_the_sheet_row_and_column(preds) -> None:
    from openpyxl import Workbook
    book = Workbook()
    sheet = book.active
    sheet.append(["index", "prediction"])
    sheet.append([101, "A"])
    sheet.append([None, "B"])  # row 3: no index
    sheet.append([999, "C"])  # row 4: not a sample
    sheet.append([101, "D"])  # row 5: a second prediction for 101
    buf = io.BytesIO()
    book.save(buf)
    report, _ = run(buf.getvalue(), "vlmevalkit", "m.xlsx")
    assert [(e.where, e.field) for e in report.errors] == [("row 3", "index"), ("row 4", "index"), ("row 5", "")]
    assert "'999' is not a sample of this benchmark (its samples are named like '101', '102', '103')" in \
        report.errors[1].message
    assert report.errors[2].message == "duplicate: sample '101' in mode 'text' is already on row 2"


def test_vtcbench_line_errors_name_the_line_and_field() -> None:
    good = {"item_id": "101", "agent_answer": "A", "conversation": []}
    bad_lines = [json.dumps(good), '{"item_id": "102", "agent_answer": ', json.dumps({**good, "item_id": "102",
                 "conversation": "assistant: rotate"}),
                 json.dumps({**good, "item_id": "103", "conversation": [{"role": "assistant", "tool_calls": [
                     {"function": {"arguments": "{}"}}]}]})]
    report, _ = run(("\n".join(bad_lines) + "\n").encode(), "vtcbench", "results_1.jsonl")
    assert [(e.where, e.field) for e in report.errors] == [
        ("line 2", ""), ("line 3", "conversation"), ("line 4", "conversation[0].tool_calls[0].function.name")]
    assert report.errors[0].message.startswith("not valid JSON")
    assert report.errors[1].message == "expected a list of messages, got 'assistant: rotate'"


def test_agentx_item_errors_name_the_item_and_field() -> None:
    items = [{"101": {"reasoning_steps": [], "final_answer": {"value": "1"}}},
             {"102": {"reasoning_steps": "could not parse", "final_answer": {"value": "1"}}},
             {"103": {"reasoning_steps": [{"tool_used": 5}], "final_answer": {"value": "1"}}},
             {"104": "nothing", "105": {}},
             {"777": {"reasoning_steps": "", "final_answer": {"value": "1"}}}]
    report, got = run(json.dumps(items).encode(), "agentx", "o.json")
    assert [(e.where, e.field) for e in report.errors] == [
        ("item 2", "102.reasoning_steps"), ("item 3", "103.reasoning_steps[0].tool_used"), ("item 4", ""),
        ("item 5", "(task id)")]


def test_more_bad_rows_than_the_cap_stop_at_the_cap() -> None:
    rows = "index\tprediction\n" + "".join(f"{9000 + i}\tA\n" for i in range(80))
    report, _ = run(rows.encode(), "vlmevalkit", "m.tsv", max_errors=50)
    assert len(report.errors) == 50 and report.truncated
    assert report.errors[-1].where == "line 51"


def test_an_over_long_line_drops_the_raw_response_first() -> None:
    line = {"item_id": "101", "agent_answer": "A", "full_response": "x" * 5000, "conversation": []}
    report, got = run((json.dumps(line) + "\n").encode(), "vtcbench", max_line_bytes=2000)
    assert report.ok and report.n_dropped_responses == 1
    assert "response" not in got[0] and got[0]["answer"] == "A"


def test_the_converters_import_nothing_of_django() -> None:
    code = "import sys, evaluation.converters; print(any(m.startswith('django') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_agentx_keeps_task_and_a_clipped_tool_output_on_the_step() -> None:
    item = [{"101": {"reasoning_steps": [{"step": 1, "task": "read", "tool_used": "OCR", "tool_output": "y" * 5000,
                                          "thought": ""}], "final_answer": {"value": "1"}}}]
    report, got = run(json.dumps(item).encode(), "agentx")
    (step,) = got[0]["steps"]
    assert step["thought"] == "read" and step["task"] == "read"  # no thought: the task stands in
    assert step["tool_output"] == "y" * 2000 + " [...]"


def test_one_id_column_serves_the_whole_file_even_when_index_values_look_like_ids(preds) -> None:
    # VTC-Bench: `id` is the uid, `index` a permutation of the same numbers: row by row, `index`
    # would name another sample. The `id` column is chosen once, for every row.
    from openpyxl import Workbook
    book = Workbook()
    sheet = book.active
    sheet.append(["index", "id", "prediction"])
    for k, uid in enumerate(UIDS):
        sheet.append([int(UIDS[-1 - k]), uid, f"answer of {uid}"])
    buf = io.BytesIO()
    book.save(buf)
    report, got = run(buf.getvalue(), "vlmevalkit", "M_VTC_Bench.xlsx")
    assert report.ok
    assert all(g["answer"] == f"answer of {g['sample_id']}" for g in got)


def test_a_first_line_longer_than_the_part_sniffed_is_still_known_by_its_keys() -> None:
    # A VTC-Bench conversation carries base64 images; our own lines can carry long responses.
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 200_000}}
    line = {"item_id": "101", "agent_answer": "1", "full_response": "<answer>1</answer>",
            "conversation": [{"role": "user", "content": [{"type": "text", "text": "q"}, image]},
                             {"role": "assistant", "content": "look", "tool_calls": [
                                 {"id": "a", "function": {"name": "Zoom in", "arguments": "{}"}}]}]}
    report, got = run((json.dumps(line) + "\n").encode(), "vtcbench", "results_1.jsonl")
    assert report.ok, report.errors
    assert got[0]["steps"] == [{"thought": "look", "tool": {"name": "zoom_in", "args": {}}}]
    ours = {"sample_id": "101", "mode": "text", "answer": "1", "response": "x" * 200_000}
    from evaluation.converters import check_kind
    kind, wrong = check_kind(io.BytesIO((json.dumps(ours) + "\n").encode()), fmt="jsonl")
    assert kind.name == "ours" and wrong is None


def _vtc_line(conversation: list[dict]) -> bytes:
    return (json.dumps({"item_id": "101", "agent_answer": "1", "full_response": "<answer>1</answer>",
                        "conversation": conversation}) + "\n").encode()


def test_a_vtcbench_reasoning_record_is_not_a_step_nor_a_turn() -> None:
    # Their harness appends a thinking model's reasoning as an assistant message of its own.
    _, (got,) = run(_vtc_line([
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": [{"image": "images/ocr/101.jpg"}, {"text": "What is written?"}]},
        {"role": "assistant", "content": "<answer>1</answer>"},
        {"role": "assistant", "reasoning_content": "Let me think about the sign first..."},
    ]), "vtcbench", "results_1.jsonl")
    assert got["turns"] == 1 and got["steps"] == [{"thought": "<answer>1</answer>"}]


def test_vtcbench_calls_are_read_in_tool_calls_and_function_call_form_with_their_agent_names() -> None:
    _, (got,) = run(_vtc_line([
        {"role": "assistant", "content": "Crop the sign.", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "opencv_crop", "arguments": '{"bbox": [0, 0, 10, 10]}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Binarize it.",
         "function_call": {"name": "opencv_threshold", "arguments": "{}"}},
        {"role": "assistant", "content": "<answer>1</answer>"},
    ]), "vtcbench", "results_1.jsonl")
    assert [s["tool"]["name"] for s in got["steps"] if "tool" in s] == ["crop", "binarize"]
    assert got["steps"][0]["tool"]["args"] == {"bbox": [0, 0, 10, 10]} and got["turns"] == 3


def _vtc_zip(results: list[dict], response_lists: dict[str, list]) -> bytes:
    """Their harness's output folder zipped: results_*.jsonl and response_list_<item_id>.json beside it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("run/results_20261101.jsonl", "".join(json.dumps(r) + "\n" for r in results))
        for item_id, messages in response_lists.items():
            zf.writestr(f"run/response_list_{item_id}.json",
                        json.dumps({"timestamp": "2026-11-01T10:00:00", "response_list": [messages]}))
    return buf.getvalue()


def test_vtcbench_zip_reads_tool_calls_from_the_response_list_files_beside_the_results() -> None:
    # `conversation` holds only the final reply (as their harness writes it); the calls are in the lists.
    final = [{"role": "assistant", "content": "<answer>1</answer>"}]
    content = _vtc_zip(
        [{"item_id": "101", "agent_answer": "1", "conversation": final},
         {"item_id": "102", "agent_answer": "2", "conversation": final}],
        {"101": [
            {"role": "user", "content": [{"image": "images/ocr/101.jpg"}, {"text": "What is written?"}]},
            {"role": "assistant", "content": "The sign is small; crop it."},
            {"role": "assistant", "content": "", "function_call": {"name": "opencv_crop",
                                                                   "arguments": '{"bbox": [0, 0, 10, 10]}'}},
            {"role": "function", "name": "opencv_crop", "content": [{"text": "Error: bbox outside the image"}]},
            {"role": "assistant", "content": "Binarize.", "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "opencv_threshold", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "ok"},
            {"role": "assistant", "content": "<answer>1</answer>", "reasoning_content": "It reads 1."},
        ]})
    report, got = run(content, "vtcbench", "vtc_run.zip")
    assert report.ok, report.errors
    first, second = got
    calls = [s["tool"] for s in first["steps"] if "tool" in s]
    assert [c["name"] for c in calls] == ["crop", "binarize"]
    assert calls[0]["args"] == {"bbox": [0, 0, 10, 10]} and calls[0]["error"].startswith("Error: bbox")
    # The text before a qwen-agent call is that call's thought, in the same turn.
    assert first["steps"][0]["thought"] == "The sign is small; crop it." and first["turns"] == 3
    assert second["steps"] == [{"thought": "<answer>1</answer>"}] and second["turns"] == 1


def test_a_zip_without_a_results_file_is_named_for_what_it_holds() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("response_list_101.json", "{}")
    report, got = run(buf.getvalue(), "vtcbench", "run.zip")
    assert not got and len(report.errors) == 1
    assert "does not look like a VTC-Bench agent results file" in report.errors[0].message
    assert "zip archive" in report.errors[0].message


def test_mmreason_extraction_file_gives_the_extracted_answer_and_keeps_the_reply() -> None:
    """VLMEvalKit's MMReason writes ``*_extract.xlsx``: the judge's extracted answer in ``extract``
    beside the reply; the ``mmreason`` profile's exact match reads the extraction (metrics.md section 13)."""
    from openpyxl import Workbook

    book = Workbook()
    book.active.append(["index", "question", "answer", "prediction", "extract", "log_extract"])
    book.active.append([101, "q", "1", "Summing both sides gives 1. The answer is 1.", "1", "Succeed"])
    book.active.append([102, "q", "2", "I think it is 2.", None, "All 5 retries failed."])
    buf = io.BytesIO()
    book.save(buf)
    report, got = run(buf.getvalue(), "vlmevalkit", "M_MMReason_extract.xlsx")
    assert report.ok, report.errors
    assert got == [
        {"sample_id": "101", "mode": "text", "answer": "1", "response": "Summing both sides gives 1. The answer is 1."},
        {"sample_id": "102", "mode": "text", "answer": "I think it is 2."},  # no extraction: the reply, as before
    ]


def test_a_repeated_vtcbench_item_keeps_its_last_line_with_a_warning() -> None:
    """VTC-Bench reads its results into a dict by item id: the last line of a repeated item is scored."""
    rows = [{"item_id": "101", "agent_answer": "A"}, {"item_id": "102", "agent_answer": "B"},
            {"item_id": "101", "agent_answer": "C"}]
    report, got = run(b"".join(json.dumps(r).encode() + b"\n" for r in rows), "vtcbench", "results_1.jsonl")
    assert report.ok, report.errors
    assert [(g["sample_id"], g["answer"]) for g in got] == [("101", "C"), ("102", "B")]
    assert report.warnings == ["line 3: item '101' is also on line 1; the last line is kept, "
                               "as VTC-Bench's evaluation keeps it"]


@pytest.mark.parametrize("filename,dataset", [("MyVLM_b_MCQ.xlsx", "b_MCQ"), ("MyVLM_b_OpenEnded_extract.xlsx",
                                                                             "b_OpenEnded")])
def test_a_result_file_of_one_of_several_tsvs_is_matched_by_its_file_name_and_index(filename, dataset) -> None:
    """Imported from two VLMEvalKit TSVs, the benchmark's uids are "<dataset>:<index>"; VLMEvalKit's own
    result file for one dataset names the dataset in the file name and numbers its rows by index."""
    from openpyxl import Workbook

    book = Workbook()
    book.active.append(["index", "question", "answer", "prediction"])
    book.active.append([1, "q", "A", "A"])
    book.active.append([2, "q", "B", "C"])
    buf = io.BytesIO()
    book.save(buf)
    uids = ("b_MCQ:1", "b_MCQ:2", "b_OpenEnded:1", "b_OpenEnded:2", "MCQ:1")
    report, got = run(buf.getvalue(), "vlmevalkit", filename, sample_ids=uids)
    assert report.ok, report.errors
    assert [g["sample_id"] for g in got] == [f"{dataset}:1", f"{dataset}:2"]
