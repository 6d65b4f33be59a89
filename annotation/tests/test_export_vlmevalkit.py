"""export_benchmark --format vlmevalkit: a VLMEvalKit dataset TSV that VLMEvalKit users can run,
and whose result file comes back through ``submit --format vlmevalkit`` scored on our samples."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from openpyxl import Workbook

from annotation.media import media_of, read_file
from annotation.models import Annotation, AnnotationStatus, Sample
from annotation.tests.benchmark_files import sample_line
from annotation.tests.media_files import write_image, write_video

pytestmark = pytest.mark.django_db


def write_lines(folder: Path, lines: list[dict]) -> Path:
    path = folder / "benchmark.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def build(tmp_path: Path) -> list[dict]:
    """Five samples: a choice, a number with tolerance, two sharing one image, a pair, a video."""
    src = tmp_path / "src"
    (src / "images").mkdir(parents=True)
    for uid, color in (("c1", (200, 10, 10)), ("n2", (10, 200, 10)), ("p-left", (1, 2, 3)), ("p-right", (4, 5, 6))):
        write_image(src / "images" / f"{uid}.png", (80, 120), color)
    write_image(src / "images" / "shared.png", (80, 120), (9, 9, 9))
    write_video(src / "clip.mp4", frames=12)
    lines = [
        sample_line("c1", options={"A": "two", "B": "three", "C": "four\twith a tab"}, answer="B",
                    answer_type="choice", question="How many?\nCount them.", domain="ocr", category="chart"),
        sample_line("n2", answer="3.5", tolerance=0.5, split="test", key_steps=["Rotate.", "Read."],
                    meta={"origin": "synthetic"}),
        sample_line("s3", image="images/shared.png"),
        sample_line("s4", image="images/shared.png", aux_line=True),
        sample_line("p5", image=None, images=["images/p-left.png", "images/p-right.png"], transform=[], regions=[],
                    toolchain=[{"tool": "rotate", "args": {"angle": 90}, "input": "img1"}]),
        sample_line("v6", image=None, images=["clip.mp4"], transform=[], regions=[], toolchain=[]),
    ]
    call_command("import_benchmark", str(write_lines(src, lines)), slug="built", stdout=StringIO(),
                 stderr=StringIO(), no_progress=True)
    return lines


def read_tsv(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader)
        return header, [dict(zip(header, row, strict=True)) for row in reader]


def read_both(stem: Path) -> tuple[list[str], list[str], list[dict]]:
    """A mixed benchmark's two files: (MCQ header, open-ended header, the rows of both)."""
    choice_header, choice = read_tsv(stem.with_name(f"{stem.name}_MCQ.tsv"))
    open_header, free = read_tsv(stem.with_name(f"{stem.name}_OpenEnded.tsv"))
    return choice_header, open_header, choice + free


def test_the_tsv_has_vlmevalkit_columns_base64_images_and_options_as_columns(tmp_path: Path) -> None:
    build(tmp_path)
    Annotation.objects.filter(sample__uid="s4").update(status=AnnotationStatus.SUBMITTED)  # not approved: left out
    out = StringIO()
    call_command("export_benchmark", "built", str(tmp_path / "out"), "--format", "vlmevalkit", stdout=out)
    assert "Exported 1 samples to" in out.getvalue() and "Exported 4 samples to" in out.getvalue()
    header, open_header, rows = read_both(tmp_path / "out" / "built")
    assert header[:6] == ["index", "image", "question", "A", "B", "C"]
    assert not {"A", "B", "C"} & set(open_header)  # no option columns: VLMEvalKit takes it as a VQA dataset
    assert {"answer", "category", "l2-category", "split", "regions", "key_steps", "toolchain"} <= set(header)
    by = {r["index"]: r for r in rows}
    assert list(by) == ["c1", "n2", "s3", "p5", "v6"]
    c1 = Sample.objects.get(uid="c1")
    assert base64.b64decode(by["c1"]["image"]) == read_file(c1.image.name)
    assert (by["c1"]["A"], by["c1"]["C"], by["c1"]["answer"]) == ("two", "four\twith a tab", "B")
    assert by["c1"]["question"] == "How many?\nCount them."
    assert (by["c1"]["category"], by["c1"]["l2-category"], by["c1"]["split"]) == ("chart", "ocr", "dev")
    assert (by["n2"]["answer"], by["n2"]["tolerance"], by["n2"]["split"]) == ("3.5", "0.5", "test")
    assert json.loads(by["n2"]["key_steps"]) == ["Rotate.", "Read."]
    assert json.loads(by["n2"]["meta"]) == {"origin": "synthetic"}
    assert json.loads(by["c1"]["regions"]) == [[10, 10, 60, 40]]
    # Several images: a JSON list of base64 strings, in order.
    pair = [base64.b64decode(x) for x in json.loads(by["p5"]["image"])]
    assert [hashlib.sha256(b).hexdigest() for b in pair] == [m.sha256 for m in media_of(Sample.objects.get(uid="p5"))]
    # A video: its sampled frames, as images VLMEvalKit can take.
    (video,) = media_of(Sample.objects.get(uid="v6"))
    frames = json.loads(by["v6"]["image"])
    assert len(frames) == len(video.frames) > 1 and base64.b64decode(frames[0]) == read_file(video.frames[0]["name"])


def test_a_repeated_image_is_written_once_and_referenced_by_index(tmp_path: Path) -> None:
    build(tmp_path)
    call_command("export_benchmark", "built", str(tmp_path / "b.tsv"), "--format", "vlmevalkit", stdout=StringIO())
    _, rows = read_tsv(tmp_path / "b_OpenEnded.tsv")
    by = {r["index"]: r for r in rows}
    assert by["s4"]["image"] == "s3"  # VLMEvalKit: an image cell of 64 characters or fewer is another row's index
    assert len(by["s3"]["image"]) > 64


def test_a_vlmevalkit_result_file_of_the_exported_tsv_scores_on_our_samples(tmp_path: Path,
                                                                           django_capture_on_commit_callbacks) -> None:
    """What a VLMEvalKit user does: run the TSV, get <model>_<dataset>.xlsx back, submit it."""
    lines = build(tmp_path)
    call_command("export_benchmark", "built", str(tmp_path / "b.tsv"), "--format", "vlmevalkit", stdout=StringIO())
    header, open_header, rows = read_both(tmp_path / "b")  # the two result files' rows, in one table
    book = Workbook()
    sheet = book.active
    columns = [c for c in header if c != "image"] + ["prediction"]
    sheet.append(columns)
    right = {"c1", "n2", "p5"}
    for row in rows:  # the dataset's columns minus image, plus prediction, as VLMEvalKit writes them
        prediction = row["answer"] if row["index"] in right else "no idea"
        sheet.append([row.get(c, prediction) if c != "prediction" else prediction for c in columns])
    xlsx = tmp_path / "MyVLM_built.xlsx"
    book.save(xlsx)
    get_user_model().objects.create_user("vlm", "v@example.org", "pw")
    out = StringIO()
    call_command("submit", "built", str(xlsx), "--model", "MyVLM", "--user", "vlm", "--format", "vlmevalkit",
                 "--sync", stdout=out)
    results = json.loads(out.getvalue().split("\n", 1)[1])
    overall = results["modes"]["text"]["accuracy"]["overall"]
    assert len(rows) == len(lines), [r["index"] for r in rows]
    # Overall accuracy leaves the aux-line sample out (s4), as the paper's figures do.
    assert (overall["count"], overall["n"]) == (3, len(lines) - 1)


def test_a_benchmark_of_one_kind_is_one_file_and_the_command_says_how_vlmevalkit_scores_each(tmp_path: Path) -> None:
    build(tmp_path)
    out = StringIO()
    call_command("export_benchmark", "built", str(tmp_path / "b.tsv"), "--format", "vlmevalkit", stdout=out)
    text = out.getvalue()
    assert "b_MCQ.tsv: multiple-choice rows" in text and "--data b_MCQ" in text
    assert "b_OpenEnded.tsv: free-text rows. Put it in LMUData and run VLMEvalKit with --data b_OpenEnded --mode infer" in text
    assert "ImageShortQADataset" not in text  # it cannot load a custom dataset (a KeyError in VLMEvalKit)
    assert "submit SLUG FILE --format vlmevalkit" in text
    Sample.objects.filter(options__isnull=False).delete()
    call_command("export_benchmark", "built", str(tmp_path / "free.tsv"), "--format", "vlmevalkit", stdout=StringIO())
    assert sorted(p.name for p in tmp_path.glob("free*.tsv")) == ["free_OpenEnded.tsv"]
