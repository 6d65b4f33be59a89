"""The size filter, the board as of a date and the progress chart, in headless Chromium."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evaluation.models import Submission
from evaluation.services import benchmark_results_bump
from leaderboard.tests import helpers
from leaderboard.tests.test_browser import _order, page  # noqa: F401 - the page fixture (Alpha, Beta, Gamma)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _details(page) -> None:  # noqa: ANN001, F811
    """Alpha 7B first scored in May, Beta 72B on the last second of 30 June, Gamma (size unknown) on 1 July."""
    when = {"Alpha": (7, datetime(2026, 5, 10, 12, tzinfo=UTC)),
            "Beta": (72, datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC)),
            "Gamma": (None, datetime(2026, 7, 1, tzinfo=UTC))}
    for name, (params, first) in when.items():
        Submission.objects.filter(pk=page.subs[name].pk).update(parameters_billions=params, first_finished_at=first)
    # The months are the board's: its refresh counts them (leaderboard.progress_store), after the bump a change makes.
    benchmark = page.subs["Alpha"].benchmark
    benchmark_results_bump(benchmark_id=benchmark.pk)
    helpers.refreshed(benchmark)


def test_the_size_filter_narrows_the_board_and_its_url_is_a_link(page) -> None:  # noqa: F811
    _details(page)
    page.goto(f"{page.base}/b/hand/")
    assert _order(page) == ["Alpha", "Beta", "Gamma"]
    page.select_option("#size-filter", "unknown")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/b/hand/?*size=unknown*")
    page.wait_for_function("() => document.querySelectorAll('#overview-table tbody th.model a').length === 1")
    assert _order(page) == ["Gamma"]  # a model without a parameter count is under "not stated"
    page.select_option("#size-filter", "gt70")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/b/hand/?*size=gt70*")
    page.wait_for_function("() => document.querySelector('#overview-table th.model a').textContent === 'Beta'")
    assert _order(page) == ["Beta"]
    page.goto(page.url)  # the pushed URL opened afresh shows the same view
    assert _order(page) == ["Beta"] and page.locator("#size-filter").input_value() == "gt70"


def test_the_board_as_of_a_date_and_back_to_the_current_one(page) -> None:  # noqa: F811
    _details(page)
    page.goto(f"{page.base}/b/hand/")
    page.fill("#as-of", "2026-06-30")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("#as-of-note")
    assert "As of 2026-06-30" in page.inner_text("#as-of-note")
    assert "as_of=2026-06-30" in page.url
    assert _order(page) == ["Alpha", "Beta"]  # Gamma was scored the next day
    page.click("#current-board")
    page.wait_for_function("() => document.querySelectorAll('#overview-table tbody th.model a').length === 3")
    assert "as_of" not in page.url and page.locator("#as-of-note").count() == 0


def test_the_progress_chart_draws_a_line_per_kind_of_weights(page) -> None:  # noqa: F811
    _details(page)
    page.goto(f"{page.base}/b/hand/")
    page.click('a[data-tab="progress"]')  # through htmx: plotly.js loads after the swap
    page.wait_for_selector('#progress-chart[data-rendered="true"]', timeout=20_000)
    names = page.evaluate("document.getElementById('progress-chart').data.map(t => t.name)")
    assert names == ["All models", "Open weights", "Closed weights"]
    shapes = page.evaluate("document.getElementById('progress-chart')._fullData.map(t => t.line.shape)")
    assert shapes == ["hv", "hv", "hv"]  # a step: the best so far holds until a month beats it
    assert page.locator("#progress-chart .scatterlayer .trace .js-line").count() >= 1


@pytest.mark.parametrize("width", [1440, 390])
def test_the_progress_chart_names_each_month_once(page, width: int) -> None:  # noqa: F811
    """Three months (May to July): Plotly's own ticks fell between months and printed one month twice."""
    _details(page)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{page.base}/b/hand/progress/")
    page.wait_for_selector('#progress-chart[data-rendered="true"]', timeout=20_000)
    labels = page.evaluate("() => [...document.querySelectorAll('#progress-chart .xtick text')].map(t => t.textContent)")
    assert labels and len(labels) == len(set(labels)), labels
    assert "Jun 2026" in labels
