"""A router researcher in headless Chromium: signs in, submits a router through the form, and finds it
on the benchmark's Routers tab beside the baselines, with the accuracy-cost chart drawn."""

from __future__ import annotations

import json
import os

import pytest

from evaluation.metrics.routing import split_samples
from routers.tests import helpers

# Playwright's sync API runs an event loop in this thread; the ORM calls of the fixtures stay synchronous.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_submit_a_router_through_the_form_and_see_it_on_the_tab(live_server, chromium, tmp_path) -> None:

    helpers.make_pool(tmp_path / "bench")
    helpers.user("rita")
    test = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")
    picks = tmp_path / "picks.jsonl"
    picks.write_text("\n".join(json.dumps({"sample_id": u, "model": "Mid" if helpers.UIDS.index(u) % 2 else "Big"})
                               for u in test))
    page = chromium.new_page()
    page.goto(f"{live_server.url}/accounts/login/?next=/b/{helpers.SLUG}/routers/submit/")
    page.fill("#id_username", "rita")
    page.fill("#id_password", "pw-routers-1")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#router-form")
    page.fill("#id_name", "Words router")
    page.set_input_files("#id_file", str(picks))
    page.check("#id_is_public")
    page.click("#router-form button[type=submit]")
    page.wait_for_selector('#my-routers tr[data-status="done"]')
    page.click("#my-routers a")  # "on the Routers tab"
    page.wait_for_selector("#routers-table")
    row = page.locator('#routers-table tr[data-kind="router"]')
    assert row.count() == 1 and "Words router" in row.inner_text()
    assert "100.0" in row.inner_text()  # Big on apples, Mid on charts: every test sample right
    assert page.locator('a[data-tab="routers"][aria-current="page"]').count() == 1
    assert page.locator('#routers-table tr[data-kind="baseline"]').count() == 5
    page.wait_for_selector("#routers-chart .main-svg")
