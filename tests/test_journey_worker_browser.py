"""One researcher's journey in headless Chromium through the REAL broker and a REAL worker process (PostgreSQL
and Redis in CI, SQLite and the filesystem broker otherwise): sign in, upload a file on the form, watch the
status page (htmx polling) go to Done as the worker scores it, follow its link to its row on the public board."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connections

from evaluation.tests.submission_helpers import good_file, make_benchmark
from evaluation.tests.test_worker_integration import start_worker  # noqa: F401 - fixture

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
MODEL = "Journey-VL 7B"


def test_upload_on_the_form_scored_by_a_worker_then_found_on_the_board(live_server, chromium, tmp_path, monkeypatch,
                                                                      start_worker) -> None:  # noqa: F811
    from playwright import sync_api as playwright
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    make_benchmark(tmp_path / "bench")
    get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    worker = start_worker()
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_bytes(good_file())
    page = chromium.new_page()
    page.goto(f"{live_server.url}/submissions/new/?benchmark=tiny")
    page.fill('input[name="username"]', "ada")
    page.fill('input[name="password"]', "pw-ada-1")
    page.click('button[type="submit"], input[type="submit"]')
    page.wait_for_url("**/submissions/new/?benchmark=tiny")
    page.set_input_files('input[type="file"]', str(predictions))
    page.fill('input[name="model_name"]', MODEL)
    page.check('input[name="is_public"]')
    page.click("#submit-button")
    page.wait_for_url("**/submissions/*/")
    try:
        page.wait_for_function("() => document.querySelector('#status-value').textContent === 'Done'",
                               timeout=60_000)
    except playwright.TimeoutError:
        pytest.fail(f"not done: {page.inner_text('#status-value')}; worker log:\n{worker.output()}")
    page.reload()  # the live status is a fragment; the full page links the finished one's row
    page.click("#board-row")
    page.wait_for_url("**/b/tiny/?q=Journey-VL+7B#row-s*")
    # The board is rebuilt by the worker after the publish: reload until the row is there.
    for _ in range(60):
        if page.locator("[id^=row-s]").count():
            break
        page.wait_for_timeout(500)
        page.reload()
    assert MODEL in page.locator("[id^=row-s]").first.inner_text()
    connections.close_all()
