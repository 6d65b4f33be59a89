"""A figure with nothing under it is not zero (metrics.md section 14): a results file with no tool calls
shows its toolchain and tool figures as "not available" with the reason, never 0 with [0, 0], in the
results JSON, on the submission page, the board, the model page and the JSON export
(evaluation.metrics.aggregate.not_available, leaderboard.services.entry_fields, the figure filters)."""

from __future__ import annotations

import re

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from evaluation import pipeline, services
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db
WHY = "no tool calls in this file"


@pytest.fixture
def no_calls(tmp_path):  # noqa: ANN201
    """A file of adaptive answers that records no tool call (as VTC-Bench's results files do), no usage."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    lines = [{"sample_id": uid, "mode": "adaptive", "answer": helpers.answer_of(uid)} for uid in helpers.UIDS]
    owner = helpers.owner()
    sub = services.submission_create(benchmark=benchmark, owner=owner,
                                     file=ContentFile(helpers.jsonl(lines), name="p.jsonl"), model_name="Quiet",
                                     is_public=True, enforce_limits=False, enqueue=False)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    helpers.refreshed(benchmark)
    return benchmark, sub, owner


def test_the_results_json_holds_null_and_the_reason(no_calls) -> None:
    _, sub, _ = no_calls
    mode = sub.results["modes"]["adaptive"]
    for key in ("toolset_precision", "toolset_recall", "toolset_f1", "edit_distance", "mae_total", "tcr"):
        node = mode["toolchain"][key]
        assert node["value"] is None and node["reason"] == WHY and node.get("interval") is None, key
    assert mode["process"]["tool_eff"]["value"] is None and mode["process"]["tool_eff"]["reason"] == WHY
    assert mode["cost"]["mean_cost_usd"]["reason"] == "no token usage or cost in this file"
    assert "reason" not in mode["accuracy"]["overall"]  # a figure with a value says nothing more


def test_the_submission_page_shows_a_dash_with_the_reason(client, no_calls) -> None:
    _, sub, owner = no_calls
    client.force_login(owner)
    html = client.get(reverse("evaluation:detail", args=[sub.pk])).content.decode()
    cell = re.search(r'id="tool-eff-adaptive">(.*?)</td>', html, re.S).group(1)
    assert cell == f'<span class="na" title="not available: {WHY}">–</span>'


def test_the_board_model_page_and_json_export_say_not_available(client, no_calls) -> None:
    benchmark, sub, _ = no_calls
    html = client.get("/b/hand/").content.decode()
    row = re.search(rf'<tr [^>]*data-key="s{sub.pk}">(.*?)</tr>', html, re.S).group(1)
    assert f'<span class="na" title="not available: {WHY}">–</span>' in row
    assert "0.0 [0.0, 0.0]" not in row
    toolchains = client.get("/b/hand/toolchains/").content.decode()
    row = re.search(rf'<tr [^>]*data-key="s{sub.pk}" data-mode="adaptive">(.*?)</tr>', toolchains, re.S).group(1)
    assert "0.00 [0.00, 0.00]" not in row and row.count(f'title="not available: {WHY}"') >= 5
    model = client.get(reverse("leaderboard:model", args=[benchmark.slug, sub.pk])).content.decode()
    assert re.search(rf"Toolset F1</th>\s*<td[^>]*>\s*<span class=\"na\" title=\"not available: {WHY}\">", model)
    data = client.get("/b/hand/leaderboard.json").json()
    (mine,) = [r for r in data["rows"] if r["submission_id"] == sub.pk]
    assert mine["tool_eff"]["value"] is None and mine["tool_eff"]["reason"] == WHY
    assert mine["not_available"]["tool_eff"] == WHY
