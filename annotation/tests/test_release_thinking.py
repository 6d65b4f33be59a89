"""The readers of V* Bench (annotation/releases/vstar.py), TIR-Bench (tirbench.py) and the HR-Bench and
TreeBench columns of a VLMEvalKit TSV (vlmevalkit.py): recognised by content, and each quirk of
docs/formats.md ("V* Bench, HR-Bench, TreeBench, TIR-Bench")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import Benchmark, Region, Sample
from annotation.releases import sniff
from annotation.releases.vstar import option_order
from annotation.tests import thinking_files as tf
from annotation.tests.release_files import import_errors, run_import, write_tsv

pytestmark = pytest.mark.django_db


def test_each_layout_is_recognised_by_its_content(tmp_path: Path) -> None:
    vstar = tf.write_vstar(tmp_path / "v")
    assert sniff.detect_format([vstar]) == "vstar"
    assert sniff.kind_of_file(vstar / "direct_attributes" / "sa_101.json").format == "vstar"
    assert sniff.detect_format([tf.write_tirbench(tmp_path / "t")]) == "tirbench"
    assert sniff.detect_format([tf.write_hrbench(tmp_path / "h", name="data.tsv")]) == "vlmevalkit"
    responses = tmp_path / "answers.json"
    responses.write_text(json.dumps({"0": "It is A.", "1": "B"}))
    kind = sniff.kind_of_file(responses)
    assert kind.format is None and "--format tirbench" in kind.message(responses)


def test_vstar_shows_the_options_in_an_order_drawn_from_the_uid(tmp_path: Path) -> None:
    out, _ = run_import(tf.write_vstar(tmp_path / "v"), slug="vstar")
    assert "Scoring profile: vlmevalkit" in out
    answers = {}
    for s in Sample.objects.filter(benchmark__slug="vstar"):
        stem = s.uid.split(":", 1)[1]
        authors = next(opts for items in tf.VSTAR.values() for st, _, opts, _ in items if st == stem)
        assert s.meta["vstar_options"] == authors  # their order, correct first, kept
        assert s.options[s.answer] == authors[0]  # the answer letter follows the correct option
        assert [s.options[k] for k in sorted(s.options)] == [authors[i] for i in option_order(s.uid, len(authors))]
        answers[s.uid] = s.answer
    assert set(answers.values()) != {"A"}  # not always first
    # [x, y, w, h] boxes become [x1, y1, x2, y2] regions.
    boxes = list(Region.objects.filter(annotation__sample__uid="relative_position:sa_201").order_by("position")
                 .values_list("x1", "y1", "x2", "y2"))
    assert boxes == [(5, 5, 13, 13), (60, 5, 69, 14)]


def test_vstar_names_the_annotation_whose_image_is_missing(tmp_path: Path) -> None:
    root = tf.write_vstar(tmp_path / "v")
    (root / "direct_attributes" / "sa_102.jpg").unlink()
    message = import_errors(root, slug="vstar")
    assert "direct_attributes/sa_102.json" in message and "sa_102.*" in message


def test_hrbench_task_type_is_the_domain_and_the_cycle_its_category(tmp_path: Path) -> None:
    out, _ = run_import(tf.write_hrbench(tmp_path / "h"), slug="hr")
    assert "Scoring profile: hrbench" in out
    s = Sample.objects.get(benchmark__slug="hr", uid="5")
    assert (s.category.domain.name, s.category.name) == ("cross", "cycle2")
    assert s.meta["cycle_category"] == "cycle2" and s.meta["category"] == "cross"


def test_treebench_targets_become_regions(tmp_path: Path) -> None:
    out, _ = run_import(tf.write_treebench(tmp_path / "t"), slug="tree")
    assert "Scoring profile: treebench" in out
    regions = Region.objects.filter(annotation__sample__benchmark__slug="tree", annotation__sample__uid="1")
    assert sorted(regions.values_list("x1", "y1", "x2", "y2")) == [(0, 0, 20, 20), (40, 40, 60, 60)]
    assert not Region.objects.filter(annotation__sample__uid="2", annotation__sample__benchmark__slug="tree").exists()
    s = Sample.objects.get(benchmark__slug="tree", uid="1")
    assert (s.category.domain.name, s.category.name) == ("Reasoning", "Ordering")


def test_a_bad_treebench_target_cell_is_named(tmp_path: Path) -> None:
    rows = tf.tree_rows()
    rows[1]["target_instances"] = "[[0, 0, 20]]"
    bad = write_tsv(tmp_path / "bad" / "TreeBench.tsv", tf.TREE_COLUMNS, rows)
    message = import_errors(bad, slug="tree2")
    assert "row 2 of TreeBench.tsv" in message and "target_instances" in message and "[x1, y1, x2, y2]" in message


def test_tirbench_reads_images_from_the_archive_and_fixes_two_ocr_answers(tmp_path: Path) -> None:
    out, err = run_import(tf.write_tirbench(tmp_path / "t"), slug="tir")
    assert "Scoring profile: tirbench" in out
    assert "1 OCR answer(s) replaced" in err
    assert Benchmark.objects.get(slug="tir").samples.count() == len(tf.TIR_TASKS)
    fixed = Sample.objects.get(benchmark__slug="tir", uid="5")
    assert fixed.answer == "mobi" and fixed.meta["released_answer"] == "mob"
    spot = Sample.objects.get(benchmark__slug="tir", uid="2")
    assert spot.media.count() == 2  # image_1 and image_2, both from the zip beside the JSON
    assert Sample.objects.get(benchmark__slug="tir", uid="3").category.name == "ocr"  # `category` when no `task`


def test_tirbench_keyed_by_position_and_a_missing_image_is_named(tmp_path: Path) -> None:
    root = tmp_path / "t"
    tf.write_tirbench(root)
    (root / "TIR-Bench-images.zip").unlink()
    (root / "TIR-Bench.json").write_text(json.dumps({str(i): t for i, t in enumerate(tf.TIR_TASKS)}))
    message = import_errors(root / "TIR-Bench.json", slug="tir")
    assert "data/refcoco/p1.jpg" in message and "zip beside the JSON" in message
