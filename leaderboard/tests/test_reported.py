"""The authors' reported AdaptMMBench results: loaded by a command, badged, never routing baselines."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from evaluation.metrics import mcc
from leaderboard.models import ReportedResult
from leaderboard.pareto import pareto_view
from leaderboard.selectors import board_rows, tab_sources

pytestmark = pytest.mark.django_db


@pytest.fixture
def reported(db):  # noqa: ANN201
    call_command("load_reported_results", stdout=__import__("io").StringIO())
    return ReportedResult.objects.first().benchmark


def test_command_is_idempotent_and_loads_eleven_models(reported) -> None:
    call_command("load_reported_results", stdout=__import__("io").StringIO())
    assert ReportedResult.objects.count() == 11
    assert reported.samples.count() == 0 and reported.domains.count() == 5


def test_printed_mcc_agrees_with_the_printed_confusion_counts(reported) -> None:
    for r in ReportedResult.objects.all():
        ms = r.figures["mode_selection"]
        assert round(mcc(ms["tp"], ms["fp"], ms["tn"], ms["fn"]), 2) == pytest.approx(ms["mcc"], abs=0.011), r.model_name


def test_mode_selection_tab_shows_the_papers_mcc_values(client, reported) -> None:
    html = client.get("/b/adaptmmbench/mode-selection/").content.decode()
    rows = dict(re.findall(r"<th scope=\"row\">([^<]+?) <span class=\"badge reported\">.*?class=\"num mcc\">([-\d.]+)", html, re.S))
    assert rows["GPT-5"] == "0.41" and rows["Gemini-3-Pro"] == "0.24" and rows["Qwen3-vl-235B-Instruct"] == "0.26"
    assert rows["AdaptVision"] == "0.17" and rows["Deepeyes"] == "0.00"
    assert html.count("reported by the authors") == 11


def test_overview_and_domain_tab_show_table_3(client, reported) -> None:
    rows = {r.model_name: r for r in board_rows(reported)}
    assert rows["GPT-5"].adaptive.value == 78.69 and rows["GPT-5"].oracle.value == 88.69
    assert rows["GPT-5"].reported and rows["GPT-5"].mcc.value == 0.41
    overview = client.get("/b/adaptmmbench/").content.decode()
    assert "reported by the authors" in overview and "arXiv:2602.02676" in overview
    domains = client.get("/b/adaptmmbench/domains/").content.decode()
    assert "90.08" in domains and "64.67" in domains  # Qwen3-VL-235B oracle All; GPT-5 adaptive real-world All
    process = client.get("/b/adaptmmbench/process/").content.decode()
    assert "84.83" in process and "8,282.40" in process


def test_reported_rows_are_never_routing_baselines(reported) -> None:
    view = pareto_view(tab_sources(reported), "adaptive", "usd")
    assert view.points == [] and view.baselines == []


def test_home_lists_the_reported_entry_with_its_leaders(client, reported) -> None:
    html = client.get("/").content.decode()
    assert "<strong>0</strong> samples" in html
    assert re.search(r"Gemini-3-Pro.*reported by the authors", html, re.S)
