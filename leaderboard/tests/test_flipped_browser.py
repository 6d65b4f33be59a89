""""What flipped" in Chromium (leaderboard/flipped.py): the compare page lists the discordant samples, a filter
narrows them, and a sample opens both traces side by side at 1440 px and one above the other at 390 px."""

from __future__ import annotations

import os

import pytest

from leaderboard.tests import helpers

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser(live_server, transactional_db, chromium, tmp_path):  # noqa: ANN201

    benchmark = helpers.make_benchmark(tmp_path / "bench")
    subs = {s.name: helpers.submit(benchmark, s) for s in (helpers.ALPHA, helpers.BETA)}
    chromium.base, chromium.subs = live_server.url, subs  # type: ignore[attr-defined]
    yield chromium


def _rows(page) -> list[str]:  # noqa: ANN001
    return page.locator("#flipped-table tbody th[scope=row] a").all_inner_texts()


def _boxes(page) -> tuple[dict, dict]:  # noqa: ANN001
    section = page.locator('.side-by-side-mode[data-mode="adaptive"]')
    return (section.locator('[data-side="a"]').bounding_box(), section.locator('[data-side="b"]').bounding_box())


@pytest.mark.parametrize("width", [1440, 390])
def test_what_flipped_lists_the_discordant_samples_and_opens_both_traces(browser, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{browser.base}/b/hand/compare/")
    page.click("form.filters button[type=submit]")  # the defaults: the board's two leaders, Alpha and Beta
    page.wait_for_selector("#flipped-table")
    assert "A = Alpha, B = Beta" in page.inner_text("#compare-table caption")
    assert _rows(page) == ["s1", "s8"]  # adaptive: only Alpha right on dev samples s1 and s8 (s3 is test)
    assert "1 more discordant sample of the test split" in page.inner_text("#flipped-hidden")
    page.select_option("#flipped-filters select[name=domain]", "ocr")
    page.click("#flipped-filters button[type=submit]")
    page.wait_for_url("**domain=ocr**")
    assert _rows(page) == ["s8"]
    page.select_option("#flipped-filters select[name=mode]", "text")
    page.select_option("#flipped-filters select[name=domain]", "")
    page.click("#flipped-filters button[type=submit]")
    page.wait_for_url("**mode=text**")
    assert _rows(page) == ["s1"] and page.locator("#flipped-table tr[data-cell=b]").count() == 1  # Beta's win
    page.select_option("#flipped-filters select[name=mode]", "adaptive")
    page.click("#flipped-filters button[type=submit]")
    page.wait_for_url("**mode=adaptive**")
    page.click("#flipped-table >> text=s1")
    page.wait_for_selector(".two-traces")
    page.wait_for_load_state("load")  # styles and images in: a loaded machine measured a page still laying out

    def laid_out() -> bool:
        a, b = _boxes(page)
        if width >= 1000:  # side by side: B to the right of A, level with it
            return b["x"] >= a["x"] + a["width"] - 1 and abs(a["y"] - b["y"]) < 2
        return b["y"] >= a["y"] + a["height"] - 1  # a phone: B under A

    for _ in range(50):  # up to 5 s for the layout to settle; a wrong layout never does
        if laid_out():
            break
        page.wait_for_timeout(100)
    assert laid_out(), _boxes(page)
    assert "A: Alpha" in page.inner_text('[data-side="a"] h3') and "right" in page.inner_text('[data-side="a"] h3')
    assert "B: Beta" in page.inner_text('[data-side="b"] h3') and "wrong" in page.inner_text('[data-side="b"] h3')
    # Both chains' re-run images load (A rotated and zoomed; B's calls on the same sample).
    for side in ("a", "b"):
        images = page.locator(f'[data-side="{side}"] ol.steps img')
        assert images.count() >= 1
        for i in range(images.count()):
            images.nth(i).scroll_into_view_if_needed()
            page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=images.nth(i).element_handle())
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    page.close()
