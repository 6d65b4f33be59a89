"""Importing and exporting benchmark files, as a dataset builder would do it."""

from __future__ import annotations

import json
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Annotation, AnnotationStatus, Benchmark, KeyStep, Sample
from annotation.tests.benchmark_files import sample_line, write_benchmark

pytestmark = pytest.mark.django_db


def run_import(path: Path, slug: str = "bench", **kwargs: object) -> str:
    out = StringIO()
    call_command("import_benchmark", str(path), slug=slug, stdout=out, stderr=StringIO(), **kwargs)
    return out.getvalue()


def read_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "benchmark.jsonl").read_text().splitlines()]


def test_import_creates_samples_with_their_annotation(tmp_path: Path) -> None:
    lines = [
        sample_line("a"),
        sample_line(
            "b",
            options={"A": "two", "B": "three"},
            answer="b",
            answer_type=None,
            transform=[],
            regions=[],
            domain="ocr",
            category="chart",
            split="test",
        ),
    ]
    del lines[1]["answer_type"]
    out = run_import(write_benchmark(tmp_path, lines), name="Bench")
    assert "2 created, 0 updated, 0 unchanged" in out

    a = Sample.objects.select_related("category__domain").get(uid="a")
    assert (a.width, a.height, a.answer_type, a.split, a.category.domain.slug) == (80, 120, "number", "dev", "real_world")
    annotation = a.annotations.get()
    assert annotation.status == AnnotationStatus.APPROVED
    assert annotation.transform == [{"op": "rotate", "angle": 90}]
    assert [r.as_box() for r in annotation.regions.all()] == [[10, 10, 60, 40]]
    assert [s.text for s in annotation.key_steps.all()] == ["Rotate the image upright.", "Count the squares."]
    assert [c.as_dict()["output"] for c in annotation.tool_calls.all()] == ["img1", "img2"]
    # The answer type is inferred from the options, and a lower-case letter is normalised.
    b = Sample.objects.get(uid="b")
    assert (b.answer_type, b.answer) == ("choice", "B")
    assert Benchmark.objects.get(slug="bench").name == "Bench"


def test_missing_references_follow_the_format_defaults(tmp_path: Path) -> None:
    chain = [{"tool": "rotate", "args": {"angle": 90}}, {"tool": "Zoom in", "args": {"bbox": [0, 0, 20, 20]}}]
    run_import(write_benchmark(tmp_path, [sample_line("a", toolchain=chain)]))
    calls = [c.as_dict() for c in Annotation.objects.get().tool_calls.all()]
    assert [(c["tool"], c["input"], c["output"]) for c in calls] == [("rotate", "img0", "img1"), ("zoom_in", "img1", "img2")]


def test_reimport_updates_by_uid_and_reports_what_changed(tmp_path: Path) -> None:
    run_import(write_benchmark(tmp_path / "v1", [sample_line("a"), sample_line("b")]))
    first_ids = dict(Sample.objects.values_list("uid", "id"))
    changed = sample_line("b", answer="5", key_steps=["Count again."])
    out = run_import(write_benchmark(tmp_path / "v2", [sample_line("a"), changed, sample_line("c")]))
    assert "1 created, 1 updated, 1 unchanged" in out
    assert dict(Sample.objects.filter(uid__in=["a", "b"]).values_list("uid", "id")) == first_ids
    b = Sample.objects.get(uid="b")
    assert b.answer == "5"
    assert list(KeyStep.objects.filter(annotation__sample=b).values_list("text", flat=True)) == ["Count again."]
    assert Annotation.objects.filter(sample=b).count() == 1


def test_unknown_fields_are_kept_in_meta(tmp_path: Path) -> None:
    run_import(write_benchmark(tmp_path, [sample_line("a", difficulty="hard", meta={"kind": "shapes"})]))
    assert Sample.objects.get(uid="a").meta == {"difficulty": "hard", "kind": "shapes"}


def test_import_draws_a_progress_bar(tmp_path: Path) -> None:
    err = StringIO()
    call_command("import_benchmark", str(write_benchmark(tmp_path, [sample_line("a")])), slug="x", stdout=StringIO(), stderr=err)
    assert "validating" in err.getvalue() and "writing" in err.getvalue() and "100%" in err.getvalue()


def test_export_then_reimport_gives_back_the_same_benchmark(tmp_path: Path) -> None:
    manifest = {
        "name": "Round trip",
        "version": "2.1",
        "license": "CC BY 4.0",
        "tools": ["rotate", "zoom_in"],
        "cost_min": 0.0001,
        "cost_max": 0.5,
        "domains": {"math": {"name": "Math", "categories": {"geometry": "Geometry"}}},
    }
    lines = [
        sample_line("g1", domain="math", category="geometry", tolerance=0.5, answer="3.5"),
        sample_line(
            "g2",
            domain="math",
            category="geometry",
            options={"A": "acute", "B": "obtuse"},
            answer="A",
            answer_type="choice",
            aux_line=True,
            key_steps=["Draw the altitude.", {"text": "Compare the angles.", "origin": "llm", "verified": False}],
        ),
    ]
    source = tmp_path / "src"
    write_benchmark(source, lines)
    (source / "benchmark.json").write_text(json.dumps(manifest))
    run_import(source / "benchmark.jsonl", slug="rt")

    call_command("export_benchmark", "rt", str(tmp_path / "out1"), stdout=StringIO())
    call_command("import_benchmark", str(tmp_path / "out1"), slug="rt2", stdout=StringIO(), stderr=StringIO())
    call_command("export_benchmark", "rt2", str(tmp_path / "out2.zip"), stdout=StringIO())

    first = read_lines(tmp_path / "out1")
    with zipfile.ZipFile(tmp_path / "out2.zip") as zf:
        second = [json.loads(line) for line in zf.read("benchmark.jsonl").decode().splitlines()]
        exported_manifest = json.loads(zf.read("benchmark.json"))
        assert zf.read("images/g1.png") == (tmp_path / "out1" / "images" / "g1.png").read_bytes()
    assert first == second
    assert [line["uid"] for line in first] == ["g1", "g2"]
    assert first[1]["key_steps"] == ["Draw the altitude.", {"text": "Compare the angles.", "origin": "llm", "verified": False}]
    assert first[0]["tolerance"] == 0.5 and first[1]["aux_line"] is True
    for original, exported in zip(lines, first, strict=True):
        for key in ("question", "options", "answer", "domain", "category", "regions", "transform", "toolchain", "split"):
            assert exported[key] == original[key], key
    assert {k: exported_manifest[k] for k in ("name", "version", "license", "tools", "cost_min", "cost_max")} == {
        k: manifest[k] for k in ("name", "version", "license", "tools", "cost_min", "cost_max")
    }
    assert exported_manifest["domains"] == manifest["domains"]


def test_zip_holding_file_and_images_imports(tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    write_benchmark(folder, [sample_line("a"), sample_line("b")])
    archive = tmp_path / "bench.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in folder.rglob("*"):
            zf.write(path, Path("release") / path.relative_to(folder))
    assert "2 created" in run_import(archive)
    sample = Sample.objects.get(uid="b")
    with sample.image.open("rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_export_leaves_out_samples_without_an_approved_annotation(tmp_path: Path) -> None:
    run_import(write_benchmark(tmp_path / "src", [sample_line("a"), sample_line("b")]))
    Annotation.objects.filter(sample__uid="b").update(status=AnnotationStatus.SUBMITTED)
    out = StringIO()
    call_command("export_benchmark", "bench", str(tmp_path / "out"), stdout=out)
    assert "Exported 1 samples" in out.getvalue() and "1 without an approved annotation" in out.getvalue()
    assert [line["uid"] for line in read_lines(tmp_path / "out")] == ["a"]
