"""The submission pages, through Django's test client."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from django.contrib.auth import get_user_model

from evaluation import pipeline, services
from evaluation.models import Submission
from evaluation.tests.submission_helpers import BAD_FILES, good_file, make_benchmark, upload



@pytest.fixture
def bench(tmp_path):
    return make_benchmark(tmp_path)


@pytest.fixture
def user():
    return get_user_model().objects.create_user("ada", "ada@example.org", "pw")


@pytest.fixture
def web(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def post(web, bench, django_capture_on_commit_callbacks):
    def go(content: bytes, xhr: bool = False, **fields):
        data = {"benchmark": "tiny", "file": upload(content), "model_name": "m1", **fields}
        headers = {"X-Requested-With": "XMLHttpRequest"} if xhr else {}
        with django_capture_on_commit_callbacks(execute=True):
            return web.post("/submissions/new/", data, headers=headers)
    return go


@pytest.mark.django_db
def test_the_upload_page_needs_a_sign_in(client, bench) -> None:
    resp = client.get("/submissions/new/tiny/")
    assert resp.status_code == 302 and "/accounts/login/" in resp["Location"]


@pytest.mark.django_db
def test_the_upload_page_has_the_drop_zone_metadata_and_prices(web, bench) -> None:
    page = web.get("/submissions/new/tiny/").content.decode()
    assert "Drop your prediction file here" in page
    for name in ("model_name", "organisation", "weights", "parameters_billions", "price_input_per_mtok",
                 "price_output_per_mtok", "paper_url", "description"):
        assert f'name="{name}"' in page
    assert 'value="tiny" selected' in page


@pytest.mark.django_db
def test_a_form_upload_redirects_to_a_page_showing_the_results(web, post) -> None:
    resp = post(good_file(), price_input_per_mtok="1", price_output_per_mtok="2")
    sub = Submission.objects.get()
    assert resp.status_code == 302 and resp["Location"] == f"/submissions/{sub.pk}/"
    page = web.get(resp["Location"]).content.decode()
    assert "Status: <span class=\"status done\"" in page
    assert 'id="results-table"' in page and "66.7%" in page  # text mode: 4 of 6 right
    assert "hx-trigger" not in page  # done: no more polling


@pytest.mark.django_db
def test_the_script_upload_gets_json_with_the_page_to_open(post) -> None:
    resp = post(good_file(), xhr=True)
    assert resp.status_code == 202
    assert resp.json()["page"] == f"/submissions/{Submission.objects.get().pk}/"


@pytest.mark.django_db
def test_the_page_shows_dev_rows_but_never_test_rows(web, post) -> None:
    post(good_file())
    page = web.get(Submission.objects.get().get_absolute_url()).content.decode()
    assert "<td>s1</td>" in page and "<td>s3</td>" in page
    assert "<td>s4</td>" not in page and "<td>s6</td>" not in page


@pytest.mark.django_db
def test_a_pending_submission_polls_its_status_fragment(web, bench, user) -> None:
    sub = Submission.objects.create(benchmark=bench, owner=user, model_name="m", file="x.jsonl",
                                    status="scoring", progress_done=3, progress_total=12)
    page = web.get(sub.get_absolute_url()).content.decode()
    assert f'hx-get="/submissions/{sub.pk}/progress/"' in page and "htmx" in page
    fragment = web.get(f"/submissions/{sub.pk}/progress/", headers={"HX-Request": "true"})
    body = fragment.content.decode()
    assert body.lstrip().startswith('<section id="status-panel"')
    assert "Scoring: 3 of 12 predictions" in body and 'style="width:25%"' in body


@pytest.mark.django_db
def test_a_bad_file_shows_its_errors_with_line_numbers(web, post) -> None:
    post((BAD_FILES / "negative_tokens.jsonl").read_bytes())
    page = web.get(Submission.objects.get().get_absolute_url()).content.decode()
    assert 'id="error-table"' in page
    assert "<code>usage.input_tokens</code>" in page
    assert "expected a non-negative number or null, got -5" in page


@pytest.mark.django_db
def test_an_over_size_upload_gets_413_with_the_message_on_the_form(post, settings) -> None:
    settings.SUBMISSION_MAX_FILE_BYTES = 1024
    resp = post((BAD_FILES / "too_large.jsonl").read_bytes())
    assert resp.status_code == 413
    assert "over the limit of 1,024 bytes" in resp.content.decode()
    resp = post((BAD_FILES / "too_large.jsonl").read_bytes(), xhr=True)
    assert resp.status_code == 413 and "over the limit" in resp.json()["detail"]


@pytest.mark.django_db
def test_someone_elses_submission_is_not_found(web, bench) -> None:
    other = get_user_model().objects.create_user("eve")
    sub = Submission.objects.create(benchmark=bench, owner=other, model_name="m", file="x.jsonl")
    assert web.get(sub.get_absolute_url()).status_code == 404
    assert web.post(f"/submissions/{sub.pk}/publish/", {"public": "1"}).status_code == 404


@pytest.mark.django_db
def test_publish_unpublish_and_delete_from_the_page(web, post) -> None:
    post(good_file())
    sub = Submission.objects.get()
    web.post(f"/submissions/{sub.pk}/publish/", {"public": "1"})
    sub.refresh_from_db()
    assert sub.is_public
    web.post(f"/submissions/{sub.pk}/publish/", {"public": "0"})
    sub.refresh_from_db()
    assert not sub.is_public
    assert web.post(f"/submissions/{sub.pk}/delete/")["Location"] == "/submissions/"
    assert "No submissions yet" in web.get("/submissions/").content.decode()


# ------------------------------------------------------------------ in a real browser


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_an_upload_through_the_form_shows_its_progress_until_done(live_server, chromium, tmp_path,
                                                                   monkeypatch) -> None:
    # Playwright's sync API runs an event loop in this thread; the ORM calls below are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    make_benchmark(tmp_path / "bench")
    get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(good_file())
    page = chromium.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill('input[name="username"]', "ada")
    page.fill('input[name="password"]', "pw-ada-1")
    page.click('button[type="submit"], input[type="submit"]')
    page.wait_for_load_state()
    # Nothing consumes the queue here: the submission waits, "queued", until this test scores it,
    # so the page's polling is what must bring the result in.
    with mock.patch.object(services, "submission_enqueue", return_value=True):
        page.goto(f"{live_server.url}/submissions/new/tiny/")
        page.set_input_files('input[type="file"]', str(path))
        assert "predictions.jsonl" in page.inner_text("#file-label")
        page.fill('input[name="model_name"]', "browser-model")
        page.fill('input[name="price_input_per_mtok"]', "0.5")
        page.click("#submit-button")
        page.wait_for_url(re.compile(r"/submissions/\d+/$"))
    assert page.inner_text("#status-value") == "Queued"
    pipeline.submission_process_sync(submission=Submission.objects.get())
    page.wait_for_selector("#status-value:text('Done')", timeout=15_000)
    assert "66.7%" in page.inner_text("#results-table")
    assert page.locator("#rows-table tbody tr").count() == 6  # dev samples, two modes


def _failed(uid: str, failure: str) -> dict:
    """A failed attempt whose last message happens to hold the right answer: still no answer."""
    return {"sample_id": uid, "mode": "adaptive", "answer": None, "failure": failure,
            "response": f"<answer>{uid[1:]}</answer>", "failure_detail": "the harness gave up",
            "run": {"prompt_version": "v1"}}


@pytest.mark.django_db
def test_the_results_show_the_share_answered_and_the_failures_by_class(web, post) -> None:
    from evaluation.tests.submission_helpers import jsonl, prediction

    # s1-s4 answered (s2 wrongly), s5 timed out, s6 ran out of turns
    post(jsonl([prediction(u, "adaptive", right=u != "s2") for u in ("s1", "s2", "s3", "s4")]
               + [_failed("s5", "timeout"), _failed("s6", "max_turns")]))
    sub = Submission.objects.get()
    assert sub.status == "done", sub.failure_reason
    page = web.get(sub.get_absolute_url()).content.decode()
    assert ">Answered</th>" in page and ">Failures</th>" in page
    assert "<td class=\"num\">50.0%</td>" in page  # accuracy: the failures count wrong, over all six
    assert '<span title="4 of 6 samples answered">66.7%</span>' in page
    assert "<td>1 timeout, 1 max_turns</td>" in page


@pytest.mark.django_db
def test_results_scored_before_the_share_answered_say_it_is_not_available(web, post) -> None:
    post(good_file())
    sub = Submission.objects.get()
    for mode in sub.results["modes"].values():
        del mode["answered"], mode["failures"]
    sub.save(update_fields=["results"])
    page = web.get(sub.get_absolute_url()).content.decode()
    assert page.count('title="not available: scored before this figure was recorded') == 4  # 2 modes x 2
    assert "<td>none</td>" not in page and ">0.0%<" not in page
