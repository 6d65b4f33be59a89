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
    rows = dict(re.findall(r"<th scope=\"row\">([^<]+?) <span class=\"badge reported\">.*?class=\"num mcc\">([-\d.]+)",
                           html, re.S))
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
    assert "<strong>0</strong> samples" not in html and "the samples are not held here" in html  # issue 26
    assert re.search(r"Gemini-3-Pro.*reported by the authors", html, re.S)


@pytest.fixture
def agentx(db):  # noqa: ANN201
    call_command("load_reported_results", "--agentx", stdout=__import__("io").StringIO())
    return ReportedResult.objects.get(model_name="GPT-4o").benchmark


def test_agentx_reported_rows_load_once_with_their_citation_and_the_tab(agentx) -> None:
    call_command("load_reported_results", "--agentx", stdout=__import__("io").StringIO())
    assert ReportedResult.objects.filter(benchmark=agentx).count() == 14  # Table 4's ten, Table 7's GPT-judged four
    assert agentx.figures == ["agentx"] and agentx.domains.count() == 0 and agentx.samples.count() == 0
    assert "arXiv:2505.24876" in agentx.citation
    gpt = ReportedResult.objects.get(benchmark=agentx, model_name="GPT-4o")
    assert gpt.figures["agentx"]["toolset_accuracy"] == 0.68 and gpt.figures["judge"] == "GPT-4o"
    assert gpt.citation == agentx.citation


def test_the_agentx_tab_shows_the_papers_ten_figures_badged_and_cited(client, agentx) -> None:
    html = client.get("/b/agent-x/agentx/").content.decode()
    assert html.count("reported by the authors") == 14
    rows = re.findall(r'data-reported="([^"]+)"(.*?)</tr>', html, re.S)
    assert rows[0][0] == "OpenAI-o4-mini"  # the best goal accuracy (0.45) first
    gpt = re.findall(r'<span class="value">(\d+)</span>', dict(rows)["GPT-4o"])
    # exact four (toolset acc., tool precision, goal acc., goal acc. w/ image gen.), then the judged six
    assert gpt == ["68", "47", "37", "70", "60", "72", "81", "57", "79", "59"]
    assert "needs an LLM judge" not in dict(rows)["GPT-4o"]
    assert "arXiv:2505.24876" in html and "GPT-4o judge" in html
    for page in ("", "domains/", "process/", "leaderboard.csv", "leaderboard.json"):  # rows without accuracy
        assert client.get(f"/b/agent-x/{page}").status_code == 200, page
