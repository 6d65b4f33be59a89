"""What import_benchmark says about the rough edges of real releases (issue 24, "Messages"): a UTF-16
table read as it is, an Agent-X folder of images, a `None` cell, a prediction file given to the
importer, missing images counted in one line, a re-import that leaves samples out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import Sample, SampleMedia
from annotation.tests import release_files
from annotation.tests.release_files import b64_image, image_bytes, write_tsv
from annotation.tests.test_release_agentx import TOOLMETA, step, task
from annotation.tests.test_release_vtcbench import vtc_row, write_repo

pytestmark = pytest.mark.django_db

VLM_COLUMNS = ["index", "image", "question", "A", "B", "answer", "category"]


def vlm_row(index: int, **overrides: object) -> dict:
    row = {"index": index, "image": b64_image(shade=index), "question": f"Which colour is box {index}?",
           "A": "red", "B": "blue", "answer": "B", "category": "colour"}
    row.update(overrides)
    return row


def test_a_utf16_tsv_from_excel_is_read_as_it_is(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "bench.tsv", VLM_COLUMNS, [vlm_row(1), vlm_row(2, question="Quelle boîte est bleue ?")])
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-16")  # Excel's "Unicode Text": BOM + UTF-16LE
    out, _ = release_files.run_import(path, slug="u16")
    assert "2 created" in out
    assert Sample.objects.get(uid="2").question == "Quelle boîte est bleue ?"


def test_utf16_text_that_is_not_a_table_is_told_to_be_saved_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps({"uid": "a", "question": "q"}) + "\n", encoding="utf-16")
    message = release_files.import_errors(path, slug="u16")
    assert "bench.jsonl: this is UTF-16 text; save it as UTF-8" in message
    assert "binary" not in message


def test_an_agentx_file_path_naming_a_folder_imports_its_images_in_order(tmp_path: Path) -> None:
    frames = tmp_path / "files" / "pages"
    frames.mkdir(parents=True)
    for n in (10, 2, 1):  # natural order: 1, 2, 10
        (frames / f"page_{n}.png").write_bytes(image_bytes("PNG", shade=n * 20))
    (frames / "notes.txt").write_text("not a medium")
    (tmp_path / "data.json").write_text(json.dumps({"0": task("How many pages mention a price?", "pages",
                                                             [step(1, "OCR", "Read the pages.")])}))
    (tmp_path / "toolmeta.json").write_text(json.dumps(TOOLMETA))
    out, _ = release_files.run_import(tmp_path, slug="agentx")
    assert "1 created" in out
    media = list(SampleMedia.objects.filter(sample__uid="0").order_by("position"))
    expected = [image_bytes("PNG", shade=n * 20) for n in (1, 2, 10)]
    assert [m.file.read() for m in media] == expected


def test_a_cell_reading_none_is_said_to_read_as_empty(tmp_path: Path) -> None:
    path = write_tsv(tmp_path / "bench.tsv", VLM_COLUMNS, [vlm_row(1), vlm_row(2, answer="None", A="", B="")])
    message = release_files.import_errors(path, slug="none")
    assert "row 2 of bench.tsv, field 'answer': the cell reads 'None', which is read as empty" in message


@pytest.mark.parametrize("name,content,expected", [
    ("results_20261101.jsonl",
     json.dumps({"item_id": "ocr_001", "category": "ocr", "agent_answer": "A", "conversation": []}) + "\n",
     "results_20261101.jsonl: this is VTC-Bench agent results (results_*.jsonl: item_id, agent_answer), a prediction "
     "file, not a benchmark; submit it with `manage.py submit SLUG results_20261101.jsonl --format vtcbench"),
    ("M_bench.tsv", "index\tquestion\tanswer\tprediction\n1\tq\tA\tB\n",
     "M_bench.tsv: this is a VLMEvalKit result table (index, prediction), a prediction file, not a benchmark; submit "
     "it with `manage.py submit SLUG M_bench.tsv --format vlmevalkit"),
    ("preds.jsonl", json.dumps({"sample_id": "a", "mode": "text", "answer": "B"}) + "\n",
     "submit it with `manage.py submit SLUG preds.jsonl --model NAME --user USER`"),
])
def test_a_prediction_file_given_to_the_importer_gets_one_message_with_the_submit_command(
        tmp_path: Path, name: str, content: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    message = release_files.import_errors(path, slug="b")
    assert expected in message
    assert "field" not in message  # one message, not a field error per line


def test_missing_images_are_one_line_with_the_count_and_where_the_release_keeps_them(tmp_path: Path) -> None:
    rows = [vtc_row(i, f"ocr_{i:03d}", "ocr") for i in range(60)]
    repo = write_repo(tmp_path, rows)
    for row in rows[5:]:
        (repo / "data" / row["image"]).unlink()
    message = release_files.import_errors(repo / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc")
    assert message.count("not found under") == 1 and "1 error(s)" in message
    assert ("55 of 60 samples have media not found (the first: row 6 of VTC-Bench_GTToolChain.tsv, field 'image': "
            "image file") in message
    assert "Hugging Face dataset zzzhu/VTC-Bench" in message and "--images DIR" in message


def test_missing_images_among_other_errors_still_show_the_other_errors(tmp_path: Path) -> None:
    rows = [vtc_row(1, "ocr_001", "ocr"), vtc_row(2, "ocr_002", "ocr", answer="")]
    repo = write_repo(tmp_path, rows)
    (repo / "data" / rows[0]["image"]).unlink()
    message = release_files.import_errors(repo / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc")
    assert "1 of 2 samples have media not found" in message
    assert "row 2 of VTC-Bench_GTToolChain.tsv, field 'answer'" in message


def test_a_reimport_that_leaves_samples_out_warns_with_their_ids_and_remove_missing_removes_them(tmp_path: Path) -> None:
    gt = write_repo(tmp_path / "gt", [vtc_row(i, f"ocr_{i:03d}", "ocr") for i in range(25)])
    release_files.run_import(gt / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc")
    fewer = write_repo(tmp_path / "plain", [vtc_row(i, f"ocr_{i:03d}", "ocr") for i in range(2)])
    out, err = release_files.run_import(fewer / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc")
    assert "23 sample(s) of the benchmark are not in this file and were kept: ocr_002, ocr_003" in err
    assert "ocr_021 and 3 more" in err and "--remove-missing" in err
    assert Sample.objects.count() == 25
    out, err = release_files.run_import(fewer / "data" / "VTC-Bench_GTToolChain.tsv", slug="vtc", remove_missing=True)
    assert "23 removed" in out and "23 sample(s) of the benchmark not in this file were removed" in err
    assert sorted(Sample.objects.values_list("uid", flat=True)) == ["ocr_000", "ocr_001"]
