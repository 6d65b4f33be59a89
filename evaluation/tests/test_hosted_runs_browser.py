"""A researcher registers an endpoint in the browser, sees the estimate, starts the run, watches it
to the end and finds the row on the board marked as run by the platform."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from evaluation import hosted_runs
from evaluation.models import HostedRun
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import simulated_model
from evaluation.tests.submission_helpers import SLUG, make_benchmark


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_researcher_registers_an_endpoint_watches_the_run_and_finds_the_marked_row(
        live_server, chromium, tmp_path: Path, settings, monkeypatch) -> None:  # noqa: ANN001, F811
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.RUNS_CACHE_PATH = tmp_path / "cache.sqlite3"
    benchmark = make_benchmark(tmp_path / "bench")
    get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    with simulated_model(key, tmp_path / "log.jsonl", "--served-model", "sim-browser") as url:
        page = chromium.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill('input[name="username"]', "ada")
        page.fill('input[name="password"]', "pw-ada-1")
        page.click('button[type="submit"], input[type="submit"]')
        page.wait_for_load_state()
        # Nothing consumes the runs queue here: the run waits, queued, until this test runs it.
        monkeypatch.setattr("evaluation.queueing.run_enqueue", lambda **kw: True)
        page.goto(f"{live_server.url}/runs/new/?benchmark={SLUG}")
        page.select_option('select[name="benchmark"]', SLUG)
        page.fill('input[name="endpoint"]', url)
        page.fill('input[name="model"]', "sim-browser")
        page.fill('input[name="api_key"]', "sk-browser-secret")
        for mode in ("oracle", "blind"):
            page.uncheck(f'input[name="modes"][value="{mode}"]')
        page.fill('input[name="model_name"]', "Browser sim")
        page.check('input[name="public"]')
        page.click("#estimate-button")
        page.wait_for_selector("#run-estimate")
        assert "12 (sample, mode) pairs" in page.inner_text("#run-estimate")
        assert not HostedRun.objects.exists()  # an estimate creates nothing
        page.click("#confirm-run")
        page.wait_for_url(re.compile(r"/runs/\d+/$"))
        assert page.inner_text("#run-status-value") == "Queued"
        assert "sk-browser-secret" not in page.content()
        run = HostedRun.objects.get()
        hosted_runs.run_execute(run_id=run.pk)  # the worker's part, in this process
        page.wait_for_selector("#run-status-value:text('Done')", timeout=20_000)
    page.click("#run-submission a")
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    page.wait_for_selector("#status-value:text('Done')", timeout=20_000)
    page.goto(f"{live_server.url}/b/{SLUG}/")
    row = page.locator("tr", has_text="Browser sim")
    assert "run by the platform" in row.inner_text().lower()
