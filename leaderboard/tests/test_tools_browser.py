"""The Tools tab (leaderboard.tools_tab) in headless Chromium, at a desk's width and a phone's: opened from the
tab bar through htmx, sorted by a column header, and on a phone the table scrolls inside its box while the page
and the caption stay within the screen."""

from __future__ import annotations

import pytest

from leaderboard.tests.test_browser import page  # noqa: F401 - the fixture: the hand-made board, Chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ORDER = "() => [...document.querySelectorAll('#tools-table tbody th[scope=row]')].map(t => t.firstChild.textContent.trim())"


def test_the_tools_tab_at_both_widths(page) -> None:  # noqa: ANN001
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{page.base}/b/hand/")
    page.evaluate("window.__stayed = true")
    page.click('a[data-tab="tools"]')
    page.wait_for_selector("#tools-table")
    assert page.url.endswith("/b/hand/tools/") and page.evaluate("window.__stayed === true")  # htmx, no reload
    assert page.evaluate(ORDER) == ["Alpha", "Beta"]  # tool contribution +50 and -12.5 points; Gamma: text only
    page.click('#tools-table a[data-sort="drift"]')  # highest drift first: Beta's +12.5
    page.wait_for_function(ORDER + "[0] === 'Beta'")
    assert page.url.endswith("/b/hand/tools/?sort=drift&desc=1")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{page.base}/b/hand/tools/")
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")  # the page: no sideways
    assert page.evaluate("(() => { const w = document.querySelector('#tools-table').closest('.table-wrap');"
                         " return w.scrollWidth > w.clientWidth; })()")  # the table scrolls in its box
    caption = page.evaluate("document.querySelector('#tools-table caption').getBoundingClientRect().right")
    assert caption <= 390
    assert page.locator("#tools-table tbody th[scope=row]").first.is_visible()
