"""The run page and the submission page follow the state without a reload (issue 38, item 2), at 1440 and
390 px: a hosted run watched from queued to done says "done" everywhere (no banner still saying "queued", the
submission it made shown moving on to Done) and links to its row on the board; a submission whose file fails
while its page is open stops offering "Publish" (evaluation/templates/evaluation/_run_status.html,
_visibility.html swapped out of band by the status poll)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from evaluation import hosted_runs, queueing, services
from evaluation.models import HostedRun, Submission
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import simulated_model
from evaluation.tests.submission_helpers import SLUG, jsonl, make_benchmark, upload
from evaluation.tests.test_submission_browser import signed_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = [1440, 390]


def _held_submissions(monkeypatch) -> list[int]:  # noqa: ANN001
    """New submissions wait, queued, until the test sends them on (eager tasks would score them at once)."""
    held: list[int] = []
    monkeypatch.setattr(services, "submission_enqueue", lambda **kw: held.append(kw["submission_id"]) or True)
    return held


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_a_hosted_run_watched_to_the_end_says_done_everywhere_and_links_to_its_row(
        live_server, chromium, tmp_path: Path, settings, monkeypatch, width: int) -> None:  # noqa: ANN001
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.RUNS_CACHE_PATH = tmp_path / "cache.sqlite3"
    benchmark = make_benchmark(tmp_path / "bench")
    ada = get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    monkeypatch.setattr(queueing, "run_enqueue", lambda **kw: True)  # the test runs the worker's part itself
    held = _held_submissions(monkeypatch)
    with simulated_model(key, tmp_path / "log.jsonl", "--served-model", "sim-status") as url, \
            signed_in_page(chromium, live_server, width) as page:
        run = hosted_runs.run_create(benchmark=benchmark, owner=ada, endpoint=url, model="sim-status",
                                     modes=["text"], details={"model_name": "Status sim", "is_public": True})
        page.goto(f"{live_server.url}{run.get_absolute_url()}")
        assert page.inner_text("#run-status-value") == "Queued"
        assert f"Run #{run.pk} is queued" in page.inner_text("#run-progress")

        hosted_runs.run_execute(run_id=run.pk)
        page.wait_for_selector("#run-status-value:text('Done')", timeout=20_000)
        sub = HostedRun.objects.get(pk=run.pk).submission
        assert held == [sub.pk]
        assert page.inner_text("#run-submission-status") == "Queued"  # scoring has not started yet
        assert "queued" not in page.inner_text("main").lower().replace("(queued)", "")

        queueing.submission_enqueue(submission_id=sub.pk, status="queued")  # eager: scored to the end
        page.wait_for_selector("#run-submission-status:text('Done')", timeout=20_000)
        assert "queued" not in page.inner_text("main").lower()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        page.click("#run-board-row")
        page.wait_for_url(f"**/b/{SLUG}/?q=Status+sim#row-s{sub.pk}")
        assert "Status sim" in page.inner_text(f"#row-s{sub.pk}")
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_file_that_fails_while_its_page_is_open_stops_offering_publish(
        live_server, chromium, tmp_path: Path, monkeypatch, width: int) -> None:  # noqa: ANN001
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    bench = make_benchmark(tmp_path / "bench")
    ada = get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    held = _held_submissions(monkeypatch)
    sub = services.submission_create(benchmark=bench, owner=ada, file=upload(jsonl(["{not json"])),
                                     model_name="Broken", is_public=False, enforce_limits=False)
    with signed_in_page(chromium, live_server, width) as page:
        page.goto(f"{live_server.url}{sub.get_absolute_url()}")
        assert page.inner_text("#status-value") == "Queued"
        assert page.locator("#publish-button").is_visible()

        queueing.submission_enqueue(submission_id=held[0], status="queued")  # eager: validated, and it fails
        assert Submission.objects.get(pk=sub.pk).status == "failed"
        page.wait_for_selector("#status-value:text('Failed')", timeout=20_000)
        page.wait_for_selector("#publish-button", state="detached", timeout=5_000)
        assert "cannot be published" in page.inner_text("#visibility")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        page.close()
