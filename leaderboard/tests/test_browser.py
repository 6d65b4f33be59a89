"""The leaderboard in headless Chromium: sorting, tabs through htmx and by link, the Pareto chart,
the CSV download, and a sample with its steps on the model page."""

from __future__ import annotations

import os

import pytest

from leaderboard.tests import helpers

# Playwright's sync API runs an event loop in this thread; the ORM calls of the fixtures stay synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



@pytest.fixture
def page(live_server, transactional_db, chromium, tmp_path):  # noqa: ANN201
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    subs = {s.name: helpers.submit(benchmark, s) for s in (helpers.ALPHA, helpers.BETA, helpers.GAMMA)}
    pg = chromium.new_page(accept_downloads=True)
    pg.base = live_server.url  # type: ignore[attr-defined]
    pg.subs = subs  # type: ignore[attr-defined]
    yield pg


def _order(page) -> list[str]:  # noqa: ANN001
    return page.locator("#overview-table tbody th.model > a").all_inner_texts()


def test_sorting_by_a_column_changes_the_order(page) -> None:
    page.goto(f"{page.base}/b/hand/")
    assert _order(page) == ["Alpha", "Beta", "Gamma"]  # adaptive accuracy; Gamma has none
    page.click('a[data-sort="text"]')
    page.wait_for_url("**/b/hand/?sort=text")
    page.wait_for_function("() => document.querySelector('#overview-table th.model a').textContent === 'Gamma'")
    assert _order(page) == ["Gamma", "Beta", "Alpha"]
    page.click('a[data-sort="text"]')  # again: ascending
    page.wait_for_function("() => document.querySelector('#overview-table th.model a').textContent === 'Alpha'")
    assert _order(page) == ["Alpha", "Beta", "Gamma"]


def test_tab_switch_through_htmx_and_by_plain_link(page) -> None:
    page.goto(f"{page.base}/b/hand/")
    page.evaluate("window.__stayed = true")  # survives only if the page is not reloaded
    page.click('a[data-tab="mode-selection"]')
    page.wait_for_selector("#mode-selection-table")
    assert page.url.endswith("/b/hand/mode-selection/")
    assert page.evaluate("window.__stayed === true")
    assert page.locator('a[data-tab="mode-selection"][aria-current="page"]').count() == 1
    # Without JavaScript the same link is an ordinary page.
    context = page.context.browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    plain.goto(f"{page.base}/b/hand/")
    plain.click('a[data-tab="domains"]')
    plain.wait_for_url("**/b/hand/domains/")
    assert plain.locator("#domain-table").count() == 1
    context.close()


def test_pareto_chart_renders_points_and_frontier(page) -> None:
    page.goto(f"{page.base}/b/hand/")
    page.click('a[data-tab="cost"]')  # through htmx, so the chart must load plotly.js after the swap
    page.wait_for_selector('#pareto-chart[data-rendered="true"]', timeout=20_000)
    points = page.locator("#pareto-chart .scatterlayer .trace .points path")
    assert points.count() >= 2 + 3  # two submissions with adaptive costs, three routing baselines
    names = page.evaluate("document.getElementById('pareto-chart').data.map(t => t.name)")
    assert "Pareto frontier" in names and "Routing baselines" in names
    frontier = page.evaluate(
        "document.getElementById('pareto-chart').data.find(t => t.name === 'Pareto frontier').line.shape")
    assert frontier == "hv"
    assert page.locator("#pareto-chart .scatterlayer .trace .js-line").count() >= 1
    assert page.evaluate("document.getElementById('pareto-chart').layout.xaxis.type") == "log"


def test_csv_downloads(page) -> None:
    page.goto(f"{page.base}/b/hand/")
    with page.expect_download() as info:
        page.click("#download-csv")
    download = info.value
    assert download.suggested_filename == "hand-leaderboard.csv"
    with open(download.path(), encoding="utf-8") as f:
        content = f.read()
    assert content.startswith("rank,model,") and "Alpha" in content and "Gamma" in content


def test_model_page_opens_a_sample_with_its_steps(page) -> None:
    alpha = page.subs["Alpha"]
    page.goto(f"{page.base}/b/hand/m/{alpha.pk}/")
    page.click('a[data-uid="s1"]')
    page.wait_for_selector("#sample-panel .steps")
    panel = page.inner_text("#sample-panel")
    assert "Rotate the image upright." in panel and "zoom_in" in panel and "valid" in panel
    assert page.url.endswith(f"/m/{alpha.pk}/")  # opened in place
    images = page.locator("#sample-panel img")
    assert images.count() == 3
    page.wait_for_function(
        "() => [...document.querySelectorAll('#sample-panel img')].every(i => i.complete && i.naturalWidth > 0)")


def test_the_overview_fits_a_wide_screen_and_its_caption_stays_in_view_on_a_narrow_one(page) -> None:
    page.set_viewport_size({"width": 1920, "height": 1000})
    page.goto(f"{page.base}/b/hand/")
    # Every column, key-step coverage and rank score included, without scrolling sideways.
    assert page.evaluate("(() => { const w = document.querySelector('.table-wrap');"
                         " return w.scrollWidth <= w.clientWidth; })()")
    assert page.locator("#overview-table thead th").last.is_visible()
    page.set_viewport_size({"width": 900, "height": 1000})
    page.goto(f"{page.base}/b/hand/")
    # The table scrolls sideways now; its caption wraps inside the screen instead of running off it.
    assert page.evaluate("(() => { const w = document.querySelector('.table-wrap');"
                         " return w.scrollWidth > w.clientWidth; })()")
    right = page.evaluate("document.querySelector('#overview-table caption').getBoundingClientRect().right")
    assert right <= 900


@pytest.mark.parametrize("width", [1440, 390])
def test_a_zero_rank_score_is_explained_in_a_line_under_the_table(page, width: int) -> None:
    """Issue 26, item 4: the most accurate model's "0.0" is explained where the eye goes, not only in a tooltip."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{page.base}/b/hand/")
    note = page.locator("#rank-zero-note")
    assert note.is_visible()
    assert "Rank score 0.0 (Alpha)" in note.inner_text() and "dearest" in note.inner_text()
    top = page.locator("#overview-table").bounding_box()
    assert note.bounding_box()["y"] > top["y"]  # under the table
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


SORTED_IN_VIEW = """() => {
  const table = document.querySelector('#overview-table');
  const wrap = table.closest('.table-wrap').getBoundingClientRect();
  const head = table.tHead.rows[0];
  const th = head.querySelector('th[aria-sort="ascending"], th[aria-sort="descending"]');
  const pinned = head.cells[1].getBoundingClientRect().right;  // the rank and the model stay on the left
  const r = th.getBoundingClientRect();
  return {left: r.left, right: r.right, pinned, wrapRight: wrap.right, label: th.innerText};
}"""


@pytest.mark.parametrize("width", [1440, 390])
def test_the_sorted_column_starts_in_view_on_a_phone_too(page, width: int) -> None:
    """Issue 26, item 6: the overview's sorted column is on the screen, beside the model, not off to the right."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{page.base}/b/hand/")
    for _ in range(2):
        box = page.evaluate(SORTED_IN_VIEW)
        assert box["left"] >= box["pinned"] - 1 and box["right"] <= box["wrapRight"] + 1, box
        # Sorting by the last column (through htmx) brings that one into view in turn.
        last = page.locator("#overview-table thead tr:first-child th:not(.col-hidden) a[data-sort]").last
        key = last.get_attribute("data-sort")
        last.click()
        page.wait_for_function(f"() => document.querySelector('#overview-table th[aria-sort] a[data-sort=\"{key}\"]')"
                               " && document.querySelector('#overview-table a[data-sort=\"" + key + "\"]')"
                               ".closest('th').getAttribute('aria-sort') !== 'none'")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
