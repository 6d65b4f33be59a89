"""The page rate limit seen from a board in headless Chromium: a sort clicked past the limit is an
in-page (htmx) request, which htmx does not swap on a 429; the page must still say what happened
and how long to wait, and keep the board it shows."""

from __future__ import annotations

import os

import pytest
from django.core.cache import caches
from django.test.utils import override_settings

from leaderboard.tests import helpers

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop in this thread

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOCAL = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "rate-browser-pages"}
COUNTS = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "rate-browser-counts"}


def test_a_sort_clicked_past_the_limit_says_too_many_requests_and_keeps_the_board(
        live_server, transactional_db, chromium, tmp_path) -> None:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    for s in (helpers.ALPHA, helpers.BETA, helpers.GAMMA):
        helpers.submit(benchmark, s)
    with override_settings(CACHES={"default": LOCAL, "throttle": COUNTS}, THROTTLE_CACHE="throttle",
                           PAGE_RATE_LIMIT_ANON="4/minute"):
        page = chromium.new_page()
        page.goto(f"{live_server.url}/b/hand/")
        notice = page.locator("#site-notice")
        assert notice.is_hidden()
        models = page.locator("#overview-table tbody th.model > a").all_inner_texts()
        assert models
        # Each click's response is waited for before the next click: htmx drops a click made while the link's
        # request is still out, so a timed pause between clicks sent fewer requests on a loaded machine.
        # Eight requests after the page's own are over four a minute even if a minute ends among them.
        statuses = []
        for _ in range(8):
            with page.expect_response(lambda r: r.request.headers.get("hx-request") == "true") as answer:
                page.click('a[data-sort="text"]')
            statuses.append(answer.value.status)
            if statuses[-1] == 429:
                break
        assert statuses[-1] == 429, f"no 429 after eight in-page requests over a limit of four a minute: {statuses}"
        notice.wait_for(state="visible")
        text = notice.inner_text()
        assert text.startswith("Too many requests") and "then try again" in text
        assert " second" in text or " minute" in text  # how long to wait, from Retry-After
        assert page.locator("#overview-table tbody th.model > a").count() == len(models)  # the board is still there
        caches["throttle"].clear()
