"""In headless Chromium: the Agent-X tab on the Agent-X demo benchmark (its simulated submissions
converted from Agent-X's output lists and scored), and the guessable filter in the review queue."""

from __future__ import annotations

import json
import os

import pytest
from django.test import Client
from django.urls import reverse

from annotation.demo import demo_accounts_ensure, demo_releases_load
from annotation.models import Sample
from annotation.models import Role
from annotation.tests.test_workbench_browser import login
from annotation.tests.workbench_helpers import make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next
from evaluation.demo import demo_release_submissions_load

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser(live_server, chromium):  # noqa: ANN201
    """The process's Chromium (conftest.py), which also closes the connections these tests' writes opened
    while Playwright's loop was marked running."""
    return chromium


def test_the_agentx_tab_on_the_agentx_demo_benchmark(live_server, browser) -> None:
    demo_accounts_ensure()
    demo_releases_load()
    subs = demo_release_submissions_load(slug="agent-x-demo")
    assert subs and all(s.status == "done" for s in subs)
    page = browser.new_page()
    page.goto(f"{live_server.url}/b/agent-x-demo/")
    page.click('a[data-tab="agentx"]')
    page.wait_for_selector("#agentx-table")
    assert page.url.endswith("/b/agent-x-demo/agentx/")
    rows = page.locator("#agentx-table tbody tr")
    assert rows.count() == len(subs)
    names = page.locator("#agentx-table tbody th").all_inner_texts()
    assert any("Sim-Agent-Planner" in n for n in names) and any("Sim-Agent-Rush" in n for n in names)
    for figure in ("toolset_accuracy", "tool_precision", "goal_accuracy"):
        values = page.locator(f'#agentx-table td[data-figure="{figure}"] .value').all_inner_texts()
        assert len(values) == len(subs) and all(0 <= float(v) <= 100 for v in values), (figure, values)
    # the demo's generative tasks have names-only reference chains: no number, and the tab says why
    notes = page.locator('#agentx-table td[data-figure="goal_accuracy_generation"] .note').all_inner_texts()
    assert len(notes) == len(subs) and all("undecided" in n and "without its arguments" in n for n in notes)
    assert page.locator('#agentx-table td[data-figure="goal_accuracy_generation"] .value').count() == 0
    assert page.locator("#agentx-table td.judged").all_inner_texts() == ["needs an LLM judge"] * (6 * len(subs))
    # Each row links to its per-task page. Agent-X's tasks are test split: a visitor sees how many are
    # hidden and no value; staff see every task's ten values (the judged ones: "needs an LLM judge").
    page.locator("#agentx-table tbody tr a.per-task").first.click()
    page.wait_for_selector("#agentx-tasks")
    assert "/m/" in page.url and page.url.endswith("/agentx/")
    per_task_url = page.url
    assert page.locator("#agentx-tasks tbody tr[data-uid]").count() == 0
    assert "test-split task" in page.locator("#agentx-hidden").inner_text()
    assert "offline judge" in page.locator("#agentx-judge-note").inner_text()
    staff = make_user("agentx-staff")
    staff.is_staff = True
    staff.save(update_fields=["is_staff"])
    login(page, live_server, staff.username)
    page.goto(per_task_url)
    tasks = page.locator("#agentx-tasks tbody tr[data-uid]")
    assert tasks.count() > 0 and page.locator("#agentx-hidden").count() == 0
    assert tasks.first.locator("td.judged").all_inner_texts() == ["needs an LLM judge"] * 6
    assert tasks.first.locator('td[data-figure="toolset_accuracy"]').count() == 1
    # The other demo benchmarks declare no Agent-X figures: no such tab.
    page.goto(f"{live_server.url}/b/vtc-bench-demo/")
    assert page.locator('a[data-tab="agentx"]').count() == 0


def test_a_reviewer_filters_the_review_queue_by_guessable(live_server, browser, tmp_path) -> None:
    bench = make_benchmark(tmp_path)
    ann, rev = make_user("ann1", bench, Role.ANNOTATOR), make_user("rev", bench, Role.REVIEWER)
    client = Client()
    client.force_login(ann)
    while (a := assignment_claim_next(user=ann, benchmark=bench)) is not None:
        assert client.post(reverse("annotation:save", args=[a.pk]), json.dumps(
            {"version": 1, "data": payload(), "submit": True}), content_type="application/json").status_code == 200
    Sample.objects.filter(benchmark=bench, uid="s1").update(guessable=True)
    Sample.objects.filter(benchmark=bench, uid="s2").update(guessable=False)
    page = browser.new_page()
    login(page, live_server, rev.username)
    page.goto(f"{live_server.url}/annotate/review/{bench.slug}/")
    assert sorted(page.locator("#review-table tbody tr[data-uid]").evaluate_all("rs => rs.map(r => r.dataset.uid)")) == [
        "s0", "s1", "s2"]
    page.select_option('#guessable-filter select[name="guessable"]', "yes")
    page.click('#guessable-filter button[type="submit"]')
    page.wait_for_url("**/?guessable=yes")
    assert page.locator("#review-table tbody tr[data-uid]").evaluate_all("rs => rs.map(r => r.dataset.uid)") == ["s1"]
    assert page.locator('#review-table tr[data-uid="s1"] .badge.guessable').count() == 1
    page.select_option('#guessable-filter select[name="guessable"]', "unaudited")
    page.click('#guessable-filter button[type="submit"]')
    page.wait_for_url("**/?guessable=unaudited")
    assert page.locator("#review-table tbody tr[data-uid]").evaluate_all("rs => rs.map(r => r.dataset.uid)") == ["s0"]
