"""The scoring profile (metrics.md section 13) named wherever a figure is read: the board's header,
the model page, leaderboard.json and the CSV (exports.row_dict), and the API's benchmark
(`scoring` on /api/v1/benchmarks/<slug>/)."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from annotation.models import Benchmark
from evaluation.models import PredictionResult
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db


@pytest.fixture
def vtc_board(tmp_path):  # noqa: ANN201
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    Benchmark.objects.filter(pk=benchmark.pk).update(scoring="vtcbench")
    benchmark.refresh_from_db()
    sub = helpers.submit(benchmark, helpers.ALPHA)
    assert sub.results["scoring"] == "vtcbench"
    return benchmark, sub


def test_the_board_header_names_the_profile(client, vtc_board) -> None:
    html = client.get("/b/hand/").content.decode()
    assert 'id="scoring-profile" data-scoring="vtcbench"' in html
    assert "Answers scored by VTC-Bench&#x27;s released rules" in html
    assert 'id="scoring-note"' not in html  # VTC-Bench's rules score every row without a judge


def test_the_board_header_says_vlmevalkit_has_no_judge_free_rule_for_free_text(client, vtc_board) -> None:
    Benchmark.objects.filter(pk=vtc_board[0].pk).update(scoring="vlmevalkit")
    html = client.get("/b/hand/").content.decode()
    assert "VLMEvalKit has no judge-free rule for free-text rows" in html
    assert "ignoring case" in html


def test_the_model_page_names_the_profile_its_row_was_scored_by(client, vtc_board) -> None:
    benchmark, sub = vtc_board
    html = client.get(reverse("leaderboard:model", args=[benchmark.slug, sub.pk])).content.decode()
    assert 'id="model-scoring" data-scoring="vtcbench"><code>vtcbench</code></dd>' in html


def test_the_exports_and_the_api_name_the_profile(client, vtc_board) -> None:
    _, sub = vtc_board
    data = client.get("/b/hand/leaderboard.json").json()
    assert data["benchmark"]["scoring"] == "vtcbench"
    assert [r["scoring"] for r in data["rows"] if r["submission_id"] == sub.pk] == ["vtcbench"]
    rows = list(csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode())))
    assert [r["scoring"] for r in rows if r["submission_id"] == str(sub.pk)] == ["vtcbench"]
    api = client.get("/api/v1/benchmarks/hand/").json()
    assert api["scoring"] == "vtcbench" and api["scoring_label"] == "VTC-Bench's released rules"
    assert client.get("/api/v1/benchmarks/").json()[0]["scoring"] == "vtcbench"
    assert client.get("/api/v1/benchmarks/hand/leaderboard/").json()["benchmark"]["scoring"] == "vtcbench"


def test_rows_only_an_llm_judge_may_decide_read_not_available_with_the_decided_share_everywhere(
        client, tmp_path) -> None:
    """MMReason scored with the offline judge (metrics.md section 13): the rows its exact match does not
    accept are undecided, so each accuracy is "not available: k of n rows need an LLM judge", never 0."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    Benchmark.objects.filter(pk=benchmark.pk).update(scoring="mmreason")
    benchmark.refresh_from_db()
    sub = helpers.submit(benchmark, helpers.ALPHA)
    # text: right on s2 and s5 (s9 is aux-line), the other six of the eight main samples undecided
    want = "6 of 8 rows need an LLM judge; 2 right of the 2 decided (100.0%)"
    overall = sub.results["modes"]["text"]["accuracy"]["overall"]
    assert overall["value"] is None and overall["reason"] == want and overall["decided_value"] == 1.0
    assert PredictionResult.objects.filter(submission=sub, mode="text", decided_by="undecided").count() == 6
    text = f"not available: {want}"
    board = client.get("/b/hand/").content.decode()
    assert text in board
    assert text in client.get(reverse("leaderboard:model", args=[benchmark.slug, sub.pk])).content.decode()
    row = next(r for r in client.get("/b/hand/leaderboard.json").json()["rows"] if r["submission_id"] == sub.pk)
    assert row["text"]["value"] is None and row["text"]["reason"] == want
    assert row["not_available"]["text_acc"] == want
    rows = list(csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode())))
    got = next(r for r in rows if r["submission_id"] == str(sub.pk))
    assert got["text"] == "" and f"text_acc: {want}" in got["not_available"]
    api = client.get("/api/v1/benchmarks/hand/leaderboard/").json()
    assert next(r for r in api["rows"] if r["submission_id"] == sub.pk)["text"]["reason"] == want
