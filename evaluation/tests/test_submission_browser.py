"""From the board to the upload form and back, in headless Chromium: the board's link opens the form with
its benchmark chosen, and a finished submission's link lands on its row, highlighted."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth import get_user_model

from evaluation import services
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_board_link_preselects_and_a_finished_submission_leads_back_to_its_row(live_server, chromium, tmp_path,
                                                                                monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    bench = make_benchmark(tmp_path / "bench")
    ada = get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    # eager tasks in this process: the upload is scored before it returns
    sub = services.submission_create(benchmark=bench, owner=ada, file=upload(good_file()), model_name="Ada-VL 7B",
                                     is_public=True, enforce_limits=False)
    page = chromium.new_page()
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


@contextmanager
def signed_in_page(chromium, live_server, width: int) -> Iterator:  # noqa: ANN001
    """A page of the process's Chromium (the ``chromium`` fixture) at the given width, signed in as ada."""
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill('input[name="username"]', "ada")
    page.fill('input[name="password"]', "pw-ada-1")
    page.click('button[type="submit"], input[type="submit"]')
    page.wait_for_load_state()
    yield page


@pytest.mark.parametrize("width", [1440, 390])
def test_upload_messages_give_our_line_and_a_wrong_benchmark_file_is_told_at_the_top(
        live_server, chromium, tmp_path, monkeypatch, width) -> None:
    """Bad JSON on line 3 says line 3 and a column, never the decoder's own "line 1"; a file made for another
    benchmark fails with one message naming it, at the top of the page, shown as soon as validation fails."""
    from unittest import mock

    from annotation.services import benchmark_import
    from annotation.tests.benchmark_files import sample_line, write_benchmark
    from evaluation import pipeline
    from evaluation.tests.submission_helpers import UIDS, jsonl, prediction

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    bench = make_benchmark(tmp_path / "bench")
    benchmark_import(path=write_benchmark(tmp_path / "other", [sample_line(f"o{i}", answer="1") for i in range(8)]),
                     slug="other-bench")
    ada = get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    lines = jsonl([prediction(u, "text") for u in UIDS[:2]]).decode().splitlines()
    broken = "\n".join([*lines, '{"sample_id": "s3", "mode": "text", "answer": "1",, "usage": {}}']) + "\n"
    bad_json = services.submission_create(benchmark=bench, owner=ada, file=upload(broken.encode()),
                                          model_name="Broken", enforce_limits=False)
    with mock.patch.object(services, "submission_enqueue", return_value=True):
        foreign = services.submission_create(
            benchmark=bench, owner=ada, model_name="Elsewhere", enforce_limits=False,
            file=upload(jsonl([{"sample_id": f"o{i}", "mode": "text", "answer": "1"} for i in range(8)])))
    with signed_in_page(chromium, live_server, width) as page:

        page.goto(f"{live_server.url}/submissions/{bad_json.pk}/")
        row = page.locator("#error-table tbody tr").first
        assert row.locator("td.error-line").inner_text() == "3"
        message = row.locator("td").nth(2).inner_text()
        assert "not valid JSON at column 51" in message
        assert "line 1" not in message and "column 51 (char" not in message
        assert page.locator("#file-problem .problem-banner").count() == 0

        # The page is open while the file is validated: the message arrives at the top, once, in view.
        page.goto(f"{live_server.url}/submissions/{foreign.pk}/")
        pipeline.submission_process_sync(submission=foreign)
        banner = page.locator("#file-problem .problem-banner")
        banner.wait_for(timeout=15_000)
        assert banner.count() == 1
        text = banner.inner_text()
        assert "8 lines name samples of the benchmark 'other-bench', not of 'tiny'" in text
        assert "Submit it there" in text
        assert banner.bounding_box()["y"] < 300 and banner.is_visible()  # under the heading, without scrolling
        assert page.locator("#error-table").count() == 0  # no row per line beneath it
        assert "see the message at the top" in page.inner_text("#failure-reason")
        assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width", [1440, 390])
def test_the_submission_pages_key_columns_are_in_view(live_server, chromium, tmp_path, monkeypatch, width) -> None:
    """Issue 26, item 6: on a phone, "Correct" sits beside the sample and the accuracy beside the mode."""

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    bench = make_benchmark(tmp_path / "bench")
    ada = get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    from evaluation.tests.submission_helpers import UIDS, jsonl, prediction
    # A model that answers in sentences: the answer read is long, as in many real files.
    talk = "<answer>After rotating the picture upright I count the squares one by one and get 2, see " \
        "https://example.org/squares/counted/after/rotation/upright/2</answer>"
    lines = [prediction(u, m, **({"answer": talk} if u == "s1" else {})) for m in ("text", "adaptive") for u in UIDS]
    sub = services.submission_create(benchmark=bench, owner=ada, file=upload(jsonl(lines)), model_name="Ada-VL 7B",
                                     enforce_limits=False)
    with signed_in_page(chromium, live_server, width) as page:
        page.goto(f"{live_server.url}/submissions/{sub.pk}/")
        for table, label in (("#rows-table", "Correct"), ("#results-table", "Accuracy")):
            th = page.locator(f"{table} thead th", has_text=label).first
            # Down to it, not sideways: the question is whether it is off to the side in its box.
            th.evaluate("t => window.scrollBy(0, t.getBoundingClientRect().top - 100)")
            box = th.bounding_box()
            wrap = page.locator(table).locator("xpath=..").bounding_box()
            assert box["x"] >= wrap["x"] - 1 and box["x"] + box["width"] <= min(wrap["x"] + wrap["width"], width) + 1, \
                (label, box, wrap)
        assert "count the squares one by one" in page.inner_text("#rows-table")
        assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_a_ticked_full_pipeline_box_reaches_the_submission_through_the_upload_script(
        live_server, chromium, tmp_path, monkeypatch) -> None:
    """The form is sent by evaluation/upload.js (XHR with a progress bar), not by the browser's own post: the
    ticked box must travel with it, and the submission's page says how it was scored."""
    from annotation.models import Benchmark
    from evaluation.models import Submission

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    bench = make_benchmark(tmp_path / "bench")
    Benchmark.objects.filter(pk=bench.pk).update(scoring="vtcbench")
    get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(good_file())
    with signed_in_page(chromium, live_server, 1440) as page:
        page.goto(f"{live_server.url}/submissions/new/tiny/")
        page.set_input_files('input[type="file"]', str(path))
        page.fill('input[name="model_name"]', "Judged-VL")
        page.check('input[name="full_pipeline"]')
        page.click("#submit-button")
        page.wait_for_url("**/submissions/*/")
        sub = Submission.objects.get(model_name="Judged-VL")
        assert sub.full_pipeline
        assert page.inner_text("#full-pipeline").startswith("Scored as the authors' full pipeline: under a scoring")
        page.wait_for_selector("#status-value:text('Done')")
        assert "not available: 2 of 6 rows need an LLM judge" in page.inner_text("#results-table")
