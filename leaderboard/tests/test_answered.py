"""The share answered and the failure classes (spec runs.md) on the leaderboard: the overview's
"Answered %" column (leaderboard.board, services.entry_fields, templatetags), the model page
(model_page.answered_rows) and the exports (exports.row_dict, CSV)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from evaluation import pipeline, services
from evaluation.models import DerivedState, Submission
from leaderboard.models import BoardEntry
from leaderboard.services import board_refresh
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db

# Adaptive: s3 timed out and s4 ran out of turns (their last messages hold the right answer all the
# same); s1, s2, s5-s8 answered, s1 wrongly. 6 of the 8 non-aux samples answered, 5 right.
FLAKY = helpers.ModelSpec("Flaky", {"adaptive": ("s2", "s3", "s4", "s5", "s6", "s7", "s8")})
FAILED = {"s3": "timeout", "s4": "max_turns"}


def _lines() -> list[dict]:
    out = []
    for line in helpers.prediction_lines(FLAKY):
        failure = FAILED.get(line["sample_id"])
        if failure:
            line = {**line, "answer": None, "response": line["answer"], "failure": failure,
                    "failure_detail": "gave up", "run": {"prompt_version": "v1", "model_ids": ["flaky-1"]}}
        out.append(line)
    return out


@pytest.fixture
def flaky(tmp_path):  # noqa: ANN201
    """The hand benchmark with Flaky (failures) and Old (results scored before the share existed)."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    sub = services.submission_create(
        benchmark=benchmark, owner=helpers.owner(), file=ContentFile(helpers.jsonl(_lines()), name="p.jsonl"),
        model_name="Flaky", is_public=True, enforce_limits=False, enqueue=False)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    old = helpers.submit(benchmark, helpers.ModelSpec("Old", {"adaptive": ("s1", "s2")}))
    results = old.results
    for mode in results["modes"].values():
        del mode["answered"], mode["failures"]
    Submission.objects.filter(pk=old.pk).update(results=results)
    # as migration 0007 did: the board is rebuilt from the stored results (by its refresh, as the worker does)
    BoardEntry.objects.all().delete()
    DerivedState.objects.all().delete()
    board_refresh(benchmark_id=benchmark.pk)
    return benchmark, sub, old


def _row(html: str, pk: int) -> str:
    found = re.search(rf'<tr [^>]*data-key="s{pk}">(.*?)</tr>', html, re.S)
    assert found, pk
    return found.group(1)


def test_the_board_shows_the_share_answered_beside_accuracy(client, flaky) -> None:
    _, sub, old = flaky
    html = client.get("/b/hand/").content.decode()
    assert re.search(r'<th [^>]*title="Samples with an answer and no failure class[^"]*">\s*<a [^>]*>Answered %', html)
    cells = re.findall(r'<td class="num">(.*?)</td>', _row(html, sub.pk), re.S)
    assert cells[1].startswith("62.5 ")  # adaptive accuracy: 5 of 8, the two failures wrong
    assert cells[3] == "75.0"  # answered: 6 of 8, beside the three accuracies
    old_cells = re.findall(r'<td class="num">(.*?)</td>', _row(html, old.pk), re.S)
    assert old_cells[3].startswith('<span class="na" title="not available')  # never 0
    sorted_html = client.get("/b/hand/?sort=answered").content.decode()
    assert re.findall(r'data-key="s(\d+)"', sorted_html) == [str(sub.pk), str(old.pk)]  # unknown last


def test_the_model_page_shows_answered_and_the_failures_by_class(client, flaky) -> None:
    benchmark, sub, old = flaky
    html = client.get(reverse("leaderboard:model", args=[benchmark.slug, sub.pk])).content.decode()
    assert re.search(r'<th scope="row" title="[^"]*">Answered %</th><td class="num" title="n = 8">75.0</td>', html)
    assert '<th scope="row" title="Lines whose attempt ended without an answer, by class; each counts as wrong">' \
           "Failures</th><td>1 timeout, 1 max_turns</td>" in html
    old_html = client.get(reverse("leaderboard:model", args=[benchmark.slug, old.pk])).content.decode()
    assert old_html.count('<span class="na" title="not available: scored before this figure was recorded') == 2
    assert "Failures</th><td>none" not in old_html


def test_the_exports_and_the_api_carry_the_share_answered(client, flaky) -> None:
    _, sub, old = flaky
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode()))}
    assert float(rows["Flaky"]["answered"]) == 75.0 and rows["Old"]["answered"] == ""
    api = {r["model"]: r for r in client.get("/api/v1/benchmarks/hand/leaderboard/").json()["rows"]}
    assert api["Flaky"]["answered"] == 75.0 and api["Old"]["answered"] is None
    assert client.get("/b/hand/leaderboard.json").json()["rows"] == list(
        client.get("/api/v1/benchmarks/hand/leaderboard/").json()["rows"])
