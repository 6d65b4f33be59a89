"""Agent-X's judged figures through the real pipeline and pages: a hand-made Agent-X release, a
prediction file scored with the remote judge pointed at a local OpenAI-compatible server (constant
verdicts, so every figure is computed by hand below), the tab's means, the model page, the exports,
the per-task page and who may see it; and with the offline judge, "needs an LLM judge" everywhere
instead of a number."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile

from annotation.models import Benchmark, Sample
from annotation.tests import test_release_agentx as rel
from evaluation import pipeline, services
from evaluation.models import Submission
from evaluation.tests.test_judges_openai import server  # noqa: F401 - fixture
from leaderboard.tests import helpers
from leaderboard.tests.test_agentx_tab import PREDICTIONS, TOOLMETA, tasks

# Transactional: on PostgreSQL the verdicts go through the cache's own connection, as in a worker.
pytestmark = pytest.mark.django_db(transaction=True)

# The fake server answers grounding 0.5 and context 1 per aligned pair, tool accuracy 0.75 per call,
# and faithfulness 0.5, factual precision 1, semantic accuracy 0.25 per task. The three tasks:
#   0: reference OCR, Calculator; prediction OCR, OCR, Calculator -> 2 pairs over 3 steps:
#      grounding 1/3, context 2/3, tool accuracy 0.75
#   1: reference SceneDescriber, ImageGenerator; prediction the same -> grounding 0.5, context 1, tool 0.75
#   2: reference OCR; prediction no step -> grounding 0, context 0, tool accuracy 0 (a call was needed)
MEANS = {"grounding_score": "27.8", "tool_accuracy": "50.0", "faithfulness": "50.0", "context_score": "55.6",
         "factual_precision": "100.0", "semantic_accuracy": "25.0"}
TASK0 = {"grounding_score": "33.3", "tool_accuracy": "75.0", "faithfulness": "50.0", "context_score": "66.7",
         "factual_precision": "100.0", "semantic_accuracy": "25.0"}


def _user(name: str, *, staff: bool = False):  # noqa: ANN202
    return get_user_model().objects.create_user(name, f"{name}@example.org", "pw", is_staff=staff)


def _submit(benchmark: Benchmark, owner, *, public: bool = True, name: str = "Agent One") -> Submission:  # noqa: ANN001
    sub = services.submission_create(
        benchmark=benchmark, owner=owner, model_name=name, is_public=public, enforce_limits=False, enqueue=False,
        file=ContentFile("\n".join(json.dumps(p) for p in PREDICTIONS).encode(), name="p.jsonl"))
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    helpers.refreshed(benchmark)
    return sub


@pytest.fixture
def agentx(tmp_path) -> Benchmark:
    rel.run_import(rel.write_release(tmp_path / "agentx", tasks(), toolmeta=TOOLMETA))
    return Benchmark.objects.get(slug="agentx")


@pytest.fixture
def remote(server, settings):  # noqa: ANN001, ANN201, F811
    settings.JUDGE_OPENAI_BASE_URL = server.url
    settings.JUDGE_OPENAI_API_KEY = "test"
    settings.JUDGE_OPENAI_MODEL = "judge-model"
    settings.JUDGE_OPENAI_CONCURRENCY = 1
    return server


def _judged_cells(html: str) -> dict[str, str]:
    return dict(re.findall(r'<td class="num judged" data-figure="(\w+)"[^>]*><span class="value">([\d.]+)</span>', html))


def test_the_remote_judge_scores_the_six_figures_and_a_rescore_asks_nothing(client, agentx, remote) -> None:
    owner = _user("ada")
    sub = _submit(agentx, owner)
    stored = sub.results["agentx_judged"]
    assert stored["judge"] == "openai:judge-model"
    assert stored["prompts"] == {"agentx_steps": "agentx_steps.v2", "agentx_tool_accuracy": "agentx_tool_accuracy.v2",
                                 "agentx_trace": "agentx_trace.v2"}
    assert stored["tasks"]["2"] == {"grounding_score": 0.0, "tool_accuracy": 0.0, "faithfulness": 0.5,
                                    "context_score": 0.0, "factual_precision": 1.0, "semantic_accuracy": 0.25}
    # what the judge was sent: the reference trace from the release (tasks, tools, outputs) and the answer
    trace = [json.loads(r["messages"][1]["content"]) for r in remote.requests if '"faithfulness"' in r["messages"][0]["content"]]
    assert len(trace) == 1 and len(trace[0]["questions"]) == 3  # one batch of the three tasks
    first = trace[0]["questions"][0]
    assert first["reference"]["steps"][0] == {"task": "Read the prices.", "thought": "Thinking 1.",
                                              "tool": {"name": "OCR", "args": {"input": "image.jpg"}, "output": "out 1"}}
    assert first["reference"]["answer"] == "5" and first["prediction"]["answer"] == "<answer>5</answer>"
    # the spend counts them: every request sent, the Agent-X ones among them
    agentx_requests = [r for r in remote.requests if "Agent-X" in r["messages"][0]["content"]]
    assert len(agentx_requests) == 3  # one batch per kind
    assert sub.results["judge_usage"]["requests"] == len(remote.requests)
    page = client.get("/b/agentx/agentx/").content.decode()
    assert _judged_cells(page) == MEANS
    assert "needs an LLM judge</td>" not in page
    # a re-score: every verdict is cached, no request is sent, the figures stay
    n, first_scored = len(remote.requests), sub.scored_at
    assert services.submission_rescore(submission=sub, enqueue=False)
    sub = pipeline.submission_process_sync(submission=Submission.objects.get(pk=sub.pk))
    assert sub.status == "done" and sub.scored_at > first_scored  # scored again
    assert len(remote.requests) == n
    assert sub.results["agentx_judged"] == stored


def test_the_model_page_and_exports_carry_the_judged_figures(client, agentx, remote) -> None:
    sub = _submit(agentx, _user("ada"))
    html = client.get(f"/b/agentx/m/{sub.pk}/").content.decode()
    section = html[html.index('id="agentx-figures"'):]
    assert dict(re.findall(r'data-figure="(\w+)"><span class="value">([\d.]+)</span>', section))["faithfulness"] == "50.0"
    assert f'href="/b/agentx/m/{sub.pk}/agentx/"' in section
    rows = list(csv.DictReader(io.StringIO(client.get("/b/agentx/leaderboard.csv").content.decode())))
    assert float(rows[0]["agentx_context_score"]) == pytest.approx(100 * 5 / 9)
    assert rows[0]["agentx_context_score_low"] != ""
    data = json.loads(client.get("/b/agentx/leaderboard.json").content)
    fig = data["rows"][0]["agentx"]["semantic_accuracy"]
    assert fig["value"] == pytest.approx(25.0) and fig["n"] == 3 and "status" not in fig


def test_with_the_offline_judge_every_page_says_needs_an_llm_judge(client, agentx, server) -> None:  # noqa: F811
    sub = _submit(agentx, _user("ada"))  # no JUDGE_OPENAI_BASE_URL: the offline judge
    assert "agentx_judged" not in sub.results and not server.requests
    tab = client.get("/b/agentx/agentx/").content.decode()
    assert not _judged_cells(tab)
    assert len(re.findall(r'<td class="judged muted" data-figure="\w+">needs an LLM judge</td>', tab)) == 6
    model = client.get(f"/b/agentx/m/{sub.pk}/").content.decode()
    model = model[model.index('id="agentx-figures"'):]
    assert len(re.findall(r'<td class="judged muted" data-figure="(\w+)">needs an LLM judge</td>', model)) == 6
    rows = list(csv.DictReader(io.StringIO(client.get("/b/agentx/leaderboard.csv").content.decode())))
    assert rows[0]["agentx_faithfulness"] == "needs an LLM judge" and rows[0]["agentx_faithfulness_low"] == ""
    assert float(rows[0]["agentx_toolset_accuracy"]) == pytest.approx(60.0)  # the exact ones are numbers
    data = json.loads(client.get("/b/agentx/leaderboard.json").content)
    assert data["rows"][0]["agentx"]["grounding_score"] == {"value": None, "low": None, "high": None, "n": 0,
                                                            "status": "needs an LLM judge"}
    staff = _user("root", staff=True)
    client.force_login(staff)
    per_task = client.get(f"/b/agentx/m/{sub.pk}/agentx/").content.decode()
    assert per_task.count("needs an LLM judge</td>") == 6 * 3 and "scored by the offline judge" in per_task


def _task_rows(html: str) -> dict[str, dict[str, str]]:
    out = {}
    for uid, body in re.findall(r'<tr data-uid="([^"]+)">(.*?)</tr>', html, re.S):
        out[uid] = dict(re.findall(r'data-figure="(\w+)">([\d.]+)</td>', body))
    return out


def test_the_per_task_page_shows_test_tasks_to_staff_only(client, agentx, remote) -> None:
    sub = _submit(agentx, _user("ada"))
    url = f"/b/agentx/m/{sub.pk}/agentx/"
    tab = client.get("/b/agentx/agentx/").content.decode()
    assert f'href="{url}"' in tab  # linked from the tab
    # every Agent-X task is test split: an anonymous visitor sees none of their values
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert _task_rows(html) == {} and "3 test-split tasks not shown" in html
    # one task moved to dev: its row, and only it
    Sample.objects.filter(benchmark=agentx, uid="0").update(split="dev")
    rows = _task_rows(client.get(url).content.decode())
    assert list(rows) == ["0"]
    assert {k: v for k, v in rows["0"].items() if k in TASK0} == TASK0
    assert rows["0"]["toolset_accuracy"] == "80.0" and rows["0"]["tool_precision"] == "33.3"
    client.force_login(_user("root", staff=True))
    rows = _task_rows(client.get(url).content.decode())
    assert sorted(rows) == ["0", "1", "2"]
    assert rows["2"]["grounding_score"] == "0.0" and rows["2"]["goal_accuracy"] == "0.0"


def test_a_private_submissions_per_task_values_are_its_owners_and_staffs(client, agentx, remote) -> None:
    owner, other = _user("ada"), _user("bob")
    sub = _submit(agentx, owner, public=False)
    Sample.objects.filter(benchmark=agentx, uid="0").update(split="dev")
    url = f"/b/agentx/m/{sub.pk}/agentx/"
    assert client.get(url).status_code == 404  # anonymous
    client.force_login(other)
    assert client.get(url).status_code == 404
    assert f"/m/{sub.pk}/" not in client.get("/b/agentx/agentx/").content.decode()  # not on the tab either
    client.force_login(owner)
    page = client.get(url)
    assert page.status_code == 200 and list(_task_rows(page.content.decode())) == ["0"]
    client.force_login(_user("root", staff=True))
    assert sorted(_task_rows(client.get(url).content.decode())) == ["0", "1", "2"]
    # another benchmark's number under this slug is not found
    assert client.get(f"/b/agentx/m/{sub.pk + 1000}/agentx/").status_code == 404


def test_the_estimate_counts_the_agentx_questions(agentx, remote, settings) -> None:
    from evaluation.judge_estimate import judge_estimate
    from evaluation.judges.openai_judge import OpenAIJudge

    settings.JUDGE_OPENAI_BASE_URL = ""  # scored offline: nothing cached, nothing asked
    sub = _submit(agentx, _user("ada"))
    judge = OpenAIJudge(model="judge-model", base_url=remote.url, api_key="test")
    with_figures = judge_estimate(submission=sub, judge=judge)
    Benchmark.objects.filter(pk=agentx.pk).update(figures=[])
    without = judge_estimate(submission=Submission.objects.select_related("benchmark").get(pk=sub.pk), judge=judge)
    # trace questions for the 3 tasks, step and tool questions for the 2 with steps; a batch per kind
    assert with_figures["questions"] - without["questions"] == 3 + 2 + 2
    assert with_figures["requests"] - without["requests"] == 3
    assert with_figures["input_tokens"] > without["input_tokens"]
    # Agent-X's verdicts are longer than a yes/no: 32 tokens a trace or steps question, 20 a tool question,
    # which the budget and the tokens-per-minute gate count on too.
    assert with_figures["output_tokens"] - without["output_tokens"] == 3 * 32 + 2 * 32 + 2 * 20
    assert not remote.requests  # an estimate asks nothing
