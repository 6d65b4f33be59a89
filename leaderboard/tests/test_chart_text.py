"""A model name is text in the Plotly charts: its markup is escaped in the figure JSON, shown literally
(no link) in the browser."""

from __future__ import annotations

import json
import os
import re

import pytest

from leaderboard.tests import helpers

MARKUP = '<a href="https://evil.example/">m</a> & <b>co</b>'
ESCAPED = '&lt;a href="https://evil.example/"&gt;m&lt;/a&gt; &amp; &lt;b&gt;co&lt;/b&gt;'
SPEC = helpers.ModelSpec(MARKUP, {"text": ("s2",), "adaptive": ("s1", "s2")}, tools=("s1",))


def _figure(html: str, script_id: str) -> dict:
    found = re.search(rf'<script id="{script_id}" type="application/json">(.*?)</script>', html, re.S)
    assert found, f"no #{script_id} on the page"
    return json.loads(found.group(1))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.fixture
def marked(db, tmp_path):
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    helpers.submit(benchmark, helpers.ALPHA)
    return helpers.submit(benchmark, SPEC)


@pytest.mark.parametrize(("tab", "script_id"), [("cost", "pareto-chart-data"), ("mode-selection", "mcc-chart-data")])
def test_markup_in_a_model_name_is_escaped_in_the_chart_json(client, marked, tab, script_id) -> None:
    figure = _figure(client.get(f"/b/hand/{tab}/").content.decode(), script_id)
    texts = _strings(figure["data"])
    assert any(ESCAPED in t for t in texts)  # the name is there, escaped ...
    assert not any("<a " in t or "<b>" in t for t in texts)  # ... and never as markup


def test_markup_in_a_domain_name_is_escaped_in_the_compare_chart(client, marked) -> None:
    from annotation.models import Domain

    Domain.objects.filter(slug="ocr").update(name="<a href='x'>OCR</a>")
    alpha = marked.benchmark.submissions.exclude(pk=marked.pk).get()
    figure = _figure(client.get(f"/b/hand/compare/?a={alpha.pk}&b={marked.pk}").content.decode(), "domain-diff-data")
    assert "&lt;a href='x'&gt;OCR&lt;/a&gt;" in figure["data"][0]["x"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_markup_in_a_model_name_shows_as_text_in_the_drawn_charts(live_server, chromium, tmp_path) -> None:


    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    helpers.submit(benchmark, helpers.ALPHA)
    helpers.submit(benchmark, SPEC)
    page = chromium.new_page()
    for tab, chart in (("cost", "#pareto-chart"), ("mode-selection", "#mcc-chart")):
        page.goto(f"{live_server.url}/b/hand/{tab}/")
        page.wait_for_selector(f'{chart}[data-rendered="true"]', timeout=20_000)
        # Plotly turns <a href> in a label into an SVG link; escaped, the name is plain text
        assert page.locator(f"{chart} svg a").count() == 0
        assert page.locator(f"{chart} svg b").count() == 0
        if tab == "mode-selection":  # the y axis' tick labels show the name as typed
            ticks = page.locator(f"{chart} .ytick text").all_text_contents()
            assert MARKUP in ticks, ticks
        else:  # the routing baselines are labelled with model names
            labels = page.locator(f"{chart} .textpoint text").all_text_contents()
            assert any(MARKUP in label for label in labels), labels
