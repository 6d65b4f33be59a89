"""The authors' figures in the board's exports (leaderboard/exports.py, authors_figures): leaderboard.json and
leaderboard.csv carry TreeBench's accuracy and mean IoU and TIR-Bench's score per mode, labelled with their
rule; a figure the rule leaves undefined is null (an empty cell) with the reason, never 0."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.tests import thinking_files as tf
from annotation.tests.release_files import run_import

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def owner():
    return get_user_model().objects.create_user("hana", "hana@example.org", "pw")


def submit(slug: str, path: Path, fmt: str, model: str) -> None:
    call_command("submit", slug, str(path), "--model", model, "--user", "hana", "--format", fmt, "--sync",
                 "--public", stdout=StringIO())


def exports(client, slug: str) -> tuple[dict, list[dict[str, str]]]:
    payload = json.loads(client.get(f"/b/{slug}/leaderboard.json").content)
    rows = list(csv.DictReader(io.StringIO(client.get(f"/b/{slug}/leaderboard.csv").content.decode())))
    return payload, rows


def test_treebench_accuracy_and_mean_iou_in_json_and_csv(client, tmp_path: Path) -> None:
    run_import(tf.write_treebench(tmp_path / "release"), slug="tree")
    preds = {0: "<think>It is at <box>[10,10,30,20]</box></think><answer>A</answer>",  # right, IoU 0.5
             1: "<answer>C</answer>",  # wrong, no box: IoU 0
             2: "<answer>C</answer>"}  # right, no box: IoU 0
    path = tmp_path / "m_TreeBench.tsv"
    path.write_text("index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in preds.items()))
    submit("tree", path, "vlmevalkit", "Boxer")

    payload, rows = exports(client, "tree")
    row = next(r for r in payload["rows"] if r["model"] == "Boxer")
    figures = row["author_figures"]
    assert figures["rule"] == "TreeBench's get_dimension_rating" and figures["not_available"] is None
    by = {(f["key"], f["mode"]): f for f in figures["figures"]}
    assert by[("overall", "text")]["label"] == "Overall accuracy"
    assert by[("overall", "text")]["value"] == pytest.approx(200 / 3)
    assert by[("miou", "text")]["label"] == "Mean IoU of the boxes"
    assert by[("miou", "text")]["value"] == pytest.approx(50 / 3)
    assert "author_figures" in payload["units"]

    cells = next(r for r in rows if r["model"] == "Boxer")
    assert cells["author_rule"] == "TreeBench's get_dimension_rating"
    assert float(cells["author_overall_text"]) == pytest.approx(200 / 3, rel=1e-5)
    assert float(cells["author_miou_text"]) == pytest.approx(50 / 3, rel=1e-5)
    assert cells["author_miou_adaptive"] == ""  # no adaptive lines in the file


def test_an_undefined_tirbench_score_is_not_available_with_the_reason(client, tmp_path: Path) -> None:
    run_import(tf.write_tirbench(tmp_path / "release"), slug="tir")
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({str(i): "The answer is 7." for i in range(6)}))  # 4 rows need the LLM extraction
    submit("tir", path, "tirbench", "Unjudged")

    payload, rows = exports(client, "tir")
    figure = next(r for r in payload["rows"] if r["model"] == "Unjudged")["author_figures"]["figures"][0]
    assert figure["mode"] == "text" and figure["label"] == "Score" and figure["value"] is None
    assert "4 of 6 rows need an LLM judge" in figure["not_available"]

    cells = next(r for r in rows if r["model"] == "Unjudged")
    assert cells["author_score_text"] == ""  # never 0
    assert "author_score_text: 4 of 6 rows need an LLM judge" in cells["not_available"]


def test_a_benchmark_without_the_authors_figures_has_no_author_columns(client, tmp_path: Path) -> None:
    run_import(tf.write_vstar(tmp_path / "release"), slug="vstar")
    path = tmp_path / "eval_result.json"
    path.write_bytes(tf.vstar_eval_result({"sa_101": 0, "sa_102": 2, "sa_201": 0}))
    submit("vstar", path, "vstar", "Looker")

    payload, rows = exports(client, "vstar")
    assert next(r for r in payload["rows"] if r["model"] == "Looker")["author_figures"] is None
    assert not any(k.startswith("author_") for k in rows[0])
