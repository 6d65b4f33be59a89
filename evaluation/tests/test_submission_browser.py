"""From the board to the upload form and back, in headless Chromium: the board's link opens the form with
its benchmark chosen, and a finished submission's link lands on its row, highlighted."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connections

from evaluation import services
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_board_link_preselects_and_a_finished_submission_leads_back_to_its_row(live_server, tmp_path,
                                                                                monkeypatch) -> None:
    from playwright import sync_api as playwright
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    bench = make_benchmark(tmp_path / "bench")
    ada = get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    # eager tasks in this process: the upload is scored before it returns
    sub = services.submission_create(benchmark=bench, owner=ada, file=upload(good_file()), model_name="Ada-VL 7B",
                                     is_public=True, enforce_limits=False)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(f"{live_server.url}/b/tiny/")
        page.click("#submit-predictions")  # signed out: the sign-in page first, then the form
        page.fill('input[name="username"]', "ada")
        page.fill('input[name="password"]', "pw-ada-1")
        page.click('button[type="submit"], input[type="submit"]')
        page.wait_for_url("**/submissions/new/?benchmark=tiny")
        assert page.eval_on_selector('select[name="benchmark"]', "s => s.value") == "tiny"

        page.goto(f"{live_server.url}/submissions/{sub.pk}/")
        assert page.inner_text("#status-value") == "Done"
        page.click("#board-row")
        page.wait_for_url(f"**/b/tiny/?q=Ada-VL+7B#row-s{sub.pk}")
        row = page.locator(f"#row-s{sub.pk}")
        assert "Ada-VL 7B" in row.inner_text()
        assert page.evaluate("() => document.querySelector(':target').id") == f"row-s{sub.pk}"
        highlight = row.locator("td").first.evaluate("td => getComputedStyle(td).backgroundColor")
        assert highlight == "rgb(255, 244, 194)"
        browser.close()
    connections.close_all()
