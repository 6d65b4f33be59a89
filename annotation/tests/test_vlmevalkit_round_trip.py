"""The round trip ours -> VLMEvalKit TSV -> ours: a benchmark exported with
``export_benchmark --format vlmevalkit`` and imported with ``import_benchmark --format vlmevalkit``
is the same benchmark (same JSON Lines export, same images)."""

from __future__ import annotations

import base64
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.media import media_of
from annotation.models import Sample
from annotation.tests.benchmark_files import sample_line
from annotation.tests.media_files import write_image

pytestmark = pytest.mark.django_db


def export_lines(slug: str, out: Path) -> list[dict]:
    call_command("export_benchmark", slug, str(out), stdout=StringIO())
    return [json.loads(x) for x in (out / "benchmark.jsonl").read_text().splitlines()]


def test_ours_to_a_vlmevalkit_tsv_and_back_gives_the_same_benchmark(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "images").mkdir(parents=True)
    for name, color in (("c1", (200, 10, 10)), ("n2", (10, 200, 10)), ("shared", (9, 9, 9)),
                        ("p-left", (1, 2, 3)), ("p-right", (4, 5, 6))):
        write_image(src / "images" / f"{name}.png", (80, 120), color)
    lines = [
        sample_line("c1", options={"A": "two", "B": "three", "C": "four\twith a tab"}, answer="B",
                    answer_type="choice", question="How many?\nCount them.", domain="ocr", category="chart",
                    key_steps=["Find the bars.", {"text": "Compare them.", "origin": "llm", "verified": False}]),
        sample_line("n2", answer="3.5", tolerance=0.5, split="test", meta={"origin": "synthetic"},
                    domain="math", category="geometry", regions=[], transform=[]),
        sample_line("17", image="images/shared.png", aux_line=True, answer="4", answer_type="text",
                    source="hand-made"),
        sample_line("18", image="images/shared.png", toolchain=[]),
        sample_line("p5", image=None, images=["images/p-left.png", "images/p-right.png"], transform=[],
                    regions=[[5, 5, 40, 40], {"box": [10, 20, 50, 60], "image": "img1"}],
                    toolchain=[{"tool": "rotate", "args": {"angle": 90}, "input": "img1", "output": "img2"}]),
    ]
    (src / "benchmark.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    call_command("import_benchmark", str(src / "benchmark.jsonl"), slug="ours", stdout=StringIO(),
                 stderr=StringIO(), no_progress=True)
    before = export_lines("ours", tmp_path / "before")

    call_command("export_benchmark", "ours", str(tmp_path / "ours.tsv"), "--format", "vlmevalkit", stdout=StringIO())
    # One file per kind (multiple choice, open-ended); both read back as one benchmark, uids as they were.
    call_command("import_benchmark", str(tmp_path / "ours_MCQ.tsv"), str(tmp_path / "ours_OpenEnded.tsv"),
                 "--format", "vlmevalkit", slug="back", stdout=StringIO(), stderr=StringIO(), no_progress=True)
    after = sorted(export_lines("back", tmp_path / "after"), key=lambda x: x["uid"])
    before = sorted(before, key=lambda x: x["uid"])

    assert [x["uid"] for x in after] == [x["uid"] for x in before]
    for old, new in zip(before, after, strict=True):
        for key in ("question", "options", "answer", "answer_type", "tolerance", "domain", "category", "regions",
                    "transform", "key_steps", "toolchain", "aux_line", "split", "source", "meta"):
            assert new[key] == old[key], (old["uid"], key, old[key], new[key])
        assert new.get("images") == old.get("images")

    def media(slug: str) -> dict:
        return {s.uid: [(m.kind, m.sha256, m.width, m.height) for m in media_of(s)]
                for s in Sample.objects.filter(benchmark__slug=slug)}

    assert media("back") == media("ours")


def test_our_columns_that_cannot_be_read_name_the_row_and_column(tmp_path: Path) -> None:
    b64 = base64.b64encode(write_image(tmp_path / "x.png").read_bytes()).decode()
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("index\timage\tquestion\tanswer\tregions\tmeta\ttolerance\n"
                   f"1\t{b64}\tq\t3\t[[1, 2, 3\t\t\n"
                   f"2\t{b64}\tq\t3\t\t[1]\tabout 2\n", encoding="utf-8")
    with pytest.raises(CommandError) as excinfo:
        call_command("import_benchmark", str(tsv), "--format", "vlmevalkit", slug="bad", stdout=StringIO(),
                     stderr=StringIO(), no_progress=True)
    message = str(excinfo.value)
    assert "row 1 of bad.tsv" in message and "regions" in message and "not valid JSON" in message
    assert "row 2 of bad.tsv" in message and "meta" in message and "expected a JSON object, got list" in message
    assert "tolerance" in message and "expected a number, got 'about 2'" in message
    assert not Sample.objects.filter(benchmark__slug="bad").exists()
