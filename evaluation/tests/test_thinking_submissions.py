"""V* Bench, HR-Bench, TreeBench and TIR-Bench end to end: each release layout imported without --format,
a prediction file in the authors' output shape submitted with `submit --format`, scored by the real
pipeline, and the stored figures equal to a hand computation of the authors' rule
(evaluation/metrics/author_figures.py, annotation/releases/vstar.py, tirbench.py, vlmevalkit.py)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import Benchmark
from annotation.tests import thinking_files as tf
from annotation.tests.release_files import run_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("hana", "hana@example.org", "pw")


def submit(slug: str, path: Path, fmt: str) -> dict:
    out = StringIO()
    call_command("submit", slug, str(path), "--model", "m", "--user", "hana", "--format", fmt, "--sync", stdout=out)
    return json.loads(out.getvalue().split("\n", 1)[1])


def result_tsv(path: Path, predictions: dict[int, str]) -> Path:
    """A VLMEvalKit result table: index and prediction (the dataset's other columns are not needed)."""
    lines = ["index\tprediction"] + [f"{i}\t{p}" for i, p in predictions.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_hrbench_scores_each_cycle_and_averages_them_as_the_authors_do(tmp_path: Path, owner) -> None:
    run_import(tf.write_hrbench(tmp_path / "release"), slug="hr4k")
    assert Benchmark.objects.get(slug="hr4k").scoring == "hrbench"
    # Gold letters cycle A B C D by index. Rows 0, 1, 4, 5, 7, 8 right; "b" (lower case) is not read.
    preds = {0: "A", 1: "The answer is B.", 2: "b", 3: "C", 4: "A", 5: "B", 6: "D", 7: "D", 8: "A", 9: "A"}
    results = submit("hr4k", result_tsv(tmp_path / "m_HRBench4K.tsv", preds), "vlmevalkit")
    assert results["modes"]["text"]["accuracy"]["overall"]["count"] == 6  # the plain share: 6 of 10
    figures = results["author_figures"]["text"]
    assert figures["cycles"]["cycle1"] == {"all": 0.5, "cross": 0.0, "single": 1.0}
    assert figures["cycles"]["cycle2"] == pytest.approx({"all": 0.75, "cross": 2 / 3, "single": 1.0})
    assert figures["cycles"]["cycle3"] == {"all": 0.5, "single": 0.5}
    # The average of the three cycles (not 6/10); "cross", absent from cycle 3, is divided by 3 all the same.
    assert figures["average"] == pytest.approx({"all": (0.5 + 0.75 + 0.5) / 3, "single": (1 + 1 + 0.5) / 3,
                                                "cross": (0 + 2 / 3) / 3})


def test_treebench_reads_letters_and_boxes_as_its_code_does(tmp_path: Path, owner) -> None:
    run_import(tf.write_treebench(tmp_path / "release"), slug="tree")
    bench = Benchmark.objects.get(slug="tree")
    assert bench.scoring == "treebench"
    preds = {
        # A right; the box covers half the target: IoU 200 / 400.
        0: "<think>It is at <box>[10,10,30,20]</box></think><answer>A</answer>",
        # "(c)" upper-cased from the tag reads C (gold B); the second box has spaces, so it is not read: (1 + 0) / 2.
        1: "<think>First <box>[0,0,20,20]</box> then <box>[40, 40, 60, 60]</box></think><answer>(c)</answer>",
        # No tag: the first capital A-E, the B of "Because" (gold C); boxes but no target: IoU 1.
        2: "Because the sign reads bird <box>[1,1,5,5]</box>",
    }
    results = submit("tree", result_tsv(tmp_path / "m_TreeBench.tsv", preds), "vlmevalkit")
    figures = results["author_figures"]["text"]
    assert figures["Overall"] == pytest.approx(1 / 3)
    assert figures["mIoU"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    # Per task and subtask, by their slugs (the scorer's names for domains and categories).
    assert figures["perception"] == {"attributes": 1.0, "ocr": 0.0} and figures["reasoning"] == {"ordering": 0.0}


def test_tirbench_gives_partial_credit_and_reads_the_ocr_reply(tmp_path: Path, owner) -> None:
    run_import(tf.write_tirbench(tmp_path / "release"), slug="tir")
    assert Benchmark.objects.get(slug="tir").scoring == "tirbench"
    responses = {
        # "25%" is none of "B. 25%", "B.25%", "B 25%", "B25%" in the prompt (it says "B: 25%"): the nearest
        # letter by edit distance is then A, the first of equals. Wrong, as in their code.
        "0": {"model_response": "It is about a quarter.", "extracted_answer": "25%"},
        "1": {"model_response": "...", "extracted_answer": "3, 1, 2, 4"},  # jigsaw: 2 of 4 places
        "2": {"model_response": "...", "extracted_answer": "**2, 5, 8**"},  # patches: IoU 2 / 4
        "3": "The sign says garden.",  # ocr: the reply holds the gold
        "4": {"model_response": "...", "extracted_answer": "7.0"},  # an int gold: 7.0 is 7
        "5": "It reads mob.",  # ocr: their code's answer for 60.jpg is "mobi"
    }
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(responses, indent=2))
    results = submit("tir", path, "tirbench")
    figures = results["author_figures"]["text"]
    assert figures["score"] == pytest.approx((0 + 0.5 + 0.5 + 1 + 1 + 0) / 6)
    assert figures["tasks"] == pytest.approx({"refcoco": 0.0, "jigsaw": 0.5, "spot_difference": 0.5, "ocr": 0.5,
                                              "symbolic": 1.0})
    assert results["modes"]["text"]["accuracy"]["overall"]["count"] == 2  # a row is right when its credit is 1


def test_a_tirbench_reply_without_its_llm_extraction_is_undecided_not_wrong(tmp_path: Path, owner) -> None:
    run_import(tf.write_tirbench(tmp_path / "release"), slug="tir")
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({str(i): "The answer is 7." for i in range(6)}))
    results = submit("tir", path, "tirbench")
    overall = results["modes"]["text"]["accuracy"]["overall"]
    assert overall["value"] is None and overall["undecided"] == 4  # the two OCR rows are read from the reply
    assert results["author_figures"]["text"]["not_available"] is True
    assert "4 of 6 rows need an LLM judge" in results["author_figures"]["text"]["reason"]


def test_vstar_authors_layout_and_their_eval_result(tmp_path: Path, owner) -> None:
    run_import(tf.write_vstar(tmp_path / "release"), slug="vstar")
    assert Benchmark.objects.get(slug="vstar").scoring == "vlmevalkit"
    path = tmp_path / "eval_result.json"
    path.write_bytes(tf.vstar_eval_result({"sa_101": 0, "sa_102": 2, "sa_201": 0}))
    results = submit("vstar", path, "vstar")
    accuracy = results["modes"]["adaptive"]["accuracy"]
    # Their rule: right when the chosen option is the first of theirs, whatever letter it is shown under.
    assert accuracy["overall"]["count"] == 2 and accuracy["overall"]["n"] == 3


def test_vstar_from_vlmevalkit_tsv_is_scored_with_vlmevalkit_matching(tmp_path: Path, owner) -> None:
    from annotation.tests.release_files import b64_image, write_tsv

    rows = [{"index": i, "image": b64_image(shade=i), "question": f"What colour is object {i}?", "A": "red",
             "B": "blue", "C": "green", "D": "white", "answer": "AB"[i % 2],
             "category": "direct_attributes" if i < 2 else "relative_position"} for i in range(3)]
    run_import(write_tsv(tmp_path / "VStarBench.tsv", ["index", "image", "question", "A", "B", "C", "D", "answer",
                                                       "category"], rows), slug="vstar-tsv")
    assert Benchmark.objects.get(slug="vstar-tsv").scoring == "vlmevalkit"
    # "(A)" is read; "blue" is option B's text; "a" (lower case) names no option: wrong under exact matching.
    results = submit("vstar-tsv", result_tsv(tmp_path / "m_VStarBench.tsv", {0: "(A)", 1: "blue", 2: "a"}),
                     "vlmevalkit")
    assert results["modes"]["text"]["accuracy"]["overall"]["count"] == 2
    assert "author_figures" not in results  # VLMEvalKit's report for VStarBench is the plain accuracy
