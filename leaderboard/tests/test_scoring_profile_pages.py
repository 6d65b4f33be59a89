"""The scoring profile (metrics.md section 13) named wherever a figure is read: the board's header,
the model page, leaderboard.json and the CSV (exports.row_dict), and the API's benchmark
(`scoring` on /api/v1/benchmarks/<slug>/)."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from annotation.models import Benchmark
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
