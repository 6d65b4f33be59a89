"""A submission's model details (parameters, licence, release date, links, weights): parsed, validated with a
message naming the field, the same through the web form, the API and ``manage.py submit``, and editable by the
owner afterwards without a re-score."""

from __future__ import annotations

import html
import io
import re
from datetime import date, timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from evaluation import services
from evaluation.model_meta import parse_parameters
from evaluation.models import Submission
from evaluation.tests.submission_helpers import good_file, upload

API_URL = "/api/v1/benchmarks/tiny/submissions/"
# Two days ahead: the module is imported minutes before its tests run, and a UTC midnight between must not make it today.
TOMORROW = (timezone.now().date() + timedelta(days=2)).isoformat()

# (field, value sent, words the message must hold); each refused at upload, with nothing stored.
BAD_VALUES = [
    ("parameters_billions", "seven", 'expected a parameter count (e.g. "7B"'),
    ("parameters_billions", "0B", "must be more than zero"),
    ("parameters_billions", "7000000000", "write the count with its unit, e.g. 7B"),
    ("model_url", "ftp://example.org/model", "must start with http:// or https://"),
    ("paper_url", "javascript:alert(1)", "must start with http:// or https://"),
    ("release_date", TOMORROW, "is in the future"),
    ("license", "x" * 101, "a licence of at most 100 characters"),
    ("weights", "half", 'weights must be "open", "closed" or left empty (not stated), got "half"'),
]


@pytest.mark.parametrize(("text", "billions"), [
    ("7B", 7.0), ("70b", 70.0), ("1.5B", 1.5), ("500M", 0.5), ("1T", 1000.0), ("13", 13.0), (" 7 B ", 7.0),
    ("", None), (None, None), (8, 8.0),
])
def test_parameter_counts_are_read_as_people_write_them(text, billions) -> None:
    assert parse_parameters(text) == billions


@pytest.fixture
def api_post(api, bench, django_capture_on_commit_callbacks):
    def go(**fields):
        with django_capture_on_commit_callbacks(execute=True):
            return api.post(API_URL, {"file": upload(good_file()), "model_name": "m1", **fields}, format="multipart")
    return go


@pytest.fixture
def form_post(web, bench, django_capture_on_commit_callbacks):
    def go(**fields):
        with django_capture_on_commit_callbacks(execute=True):
            return web.post("/submissions/new/", {"benchmark": "tiny", "file": upload(good_file()),
                                                  "model_name": "m1", **fields})
    return go


@pytest.mark.django_db
def test_the_api_stores_every_detail_and_shows_it_back(api, api_post) -> None:
    resp = api_post(parameters_billions="1.5B", license="Apache-2.0", release_date="2025-03-01",
                    model_url="https://github.com/lab/m1", paper_url="https://arxiv.org/abs/2501.00001",
                    weights="open")
    assert resp.status_code == 202, resp.content
    got = api.get(resp.json()["url"]).json()
    assert (got["parameters_billions"], got["license"], got["release_date"]) == (1.5, "Apache-2.0", "2025-03-01")
    assert (got["model_url"], got["paper_url"], got["weights"]) == (
        "https://github.com/lab/m1", "https://arxiv.org/abs/2501.00001", "open")


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "value", "words"), BAD_VALUES, ids=[f"{f}-{v[:12]}" for f, v, _ in BAD_VALUES])
def test_the_api_refuses_a_bad_value_under_its_field_and_keeps_nothing(api_post, field, value, words) -> None:
    resp = api_post(**{field: value})
    assert resp.status_code == 400
    assert words in " ".join(resp.json()[field]), resp.json()
    assert not Submission.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "value", "words"), BAD_VALUES, ids=[f"{f}-{v[:12]}" for f, v, _ in BAD_VALUES])
def test_the_form_shows_the_message_at_its_field_and_keeps_what_was_typed(form_post, field, value, words) -> None:
    resp = form_post(organisation="Kept Lab", **{field: value})
    page = html.unescape(resp.content.decode())
    assert resp.status_code == 400
    # the message sits in the field's own box (label, input, error list), and the other answers stay typed in
    box = next(b for b in re.findall(r"<div>.*?</div>", page, re.S) if f'name="{field}"' in b)
    assert 'class="errorlist"' in box and words in box, box
    assert 'value="Kept Lab"' in page
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_the_form_reads_a_parameter_count_with_its_unit(form_post) -> None:
    assert form_post(parameters_billions="70b", license="Llama 3 licence", release_date="2024-07-23").status_code == 302
    sub = Submission.objects.get()
    assert (sub.parameters_billions, sub.license, sub.release_date) == (70.0, "Llama 3 licence", date(2024, 7, 23))


@pytest.mark.django_db
def test_the_submit_command_sets_every_detail(bench, user, tmp_path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(good_file())
    call_command("submit", "tiny", str(path), "--model", "m1", "--user", "ada", "--params", "70b",
                 "--weights", "closed", "--license", "proprietary", "--release-date", "2024-05-13",
                 "--model-url", "https://example.org/m1", "--paper-url", "http://example.org/paper", "--sync",
                 stdout=io.StringIO())
    sub = Submission.objects.get()
    assert (sub.parameters_billions, sub.weights, sub.license, sub.release_date) == (
        70.0, "closed", "proprietary", date(2024, 5, 13))
    assert (sub.model_url, sub.paper_url, sub.status) == ("https://example.org/m1", "http://example.org/paper", "done")


@pytest.mark.django_db
@pytest.mark.parametrize(("option", "value", "words"), [
    ("--params", "seven", '--params: expected a parameter count (e.g. "7B"'),
    ("--release-date", "13/05/2024", "--release-date: expected a date as YYYY-MM-DD"),
    ("--release-date", TOMORROW, "--release-date: the release date"),
    ("--paper-url", "ftp://example.org/p", "--paper-url: a link must start with http:// or https://"),
    ("--model-url", "https://", "--model-url: not a valid web address"),
])
def test_the_submit_command_names_the_option_it_cannot_use(bench, user, tmp_path, option, value, words) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(good_file())
    with pytest.raises(CommandError) as err:
        call_command("submit", "tiny", str(path), "--model", "m1", "--user", "ada", option, value)
    assert words in str(err.value)
    assert not Submission.objects.exists()


@pytest.fixture
def done(form_post) -> Submission:
    form_post(parameters_billions="7B", license="MIT", is_public="on")
    sub = Submission.objects.get()
    assert sub.status == "done" and sub.is_public
    return sub


@pytest.mark.django_db
def test_the_owner_edits_the_details_and_the_scores_stay(web, done, django_capture_on_commit_callbacks) -> None:
    page = web.get(f"/submissions/{done.pk}/edit/").content.decode()
    assert 'value="7B"' in page and 'value="MIT"' in page
    before = Submission.objects.get(pk=done.pk)
    with mock.patch("evaluation.services.submission_enqueue") as enqueue, \
            django_capture_on_commit_callbacks(execute=True):
        resp = web.post(f"/submissions/{done.pk}/edit/", {
            "model_name": "m1 renamed", "parameters_billions": "70B", "license": "Apache-2.0",
            "release_date": "2025-01-02", "model_url": "https://example.org/code", "weights": "open"})
    assert resp.status_code == 302 and resp["Location"] == f"/submissions/{done.pk}/"
    after = Submission.objects.get(pk=done.pk)
    assert (after.model_name, after.parameters_billions, after.license, after.weights) == (
        "m1 renamed", 70.0, "Apache-2.0", "open")
    assert after.release_date == date(2025, 1, 2) and after.model_url == "https://example.org/code"
    # no re-score: same results, same scoring time, still done and public, nothing sent to the queue
    assert (after.results, after.scored_at, after.finished_at, after.status, after.is_public) == (
        before.results, before.scored_at, before.finished_at, "done", True)
    enqueue.assert_not_called()
    detail = web.get(f"/submissions/{done.pk}/").content.decode()
    assert "70B parameters" in detail and "licence Apache-2.0" in detail and "released 2025-01-02" in detail


@pytest.mark.django_db
def test_a_refused_edit_says_why_and_changes_nothing(web, done) -> None:
    resp = web.post(f"/submissions/{done.pk}/edit/", {"model_name": "m1", "parameters_billions": "huge",
                                                       "paper_url": "ftp://example.org/p", "license": "GPL"})
    page = html.unescape(resp.content.decode())
    assert resp.status_code == 400
    assert 'got "huge"' in page and "must start with http:// or https://" in page
    sub = Submission.objects.get(pk=done.pk)
    assert (sub.parameters_billions, sub.license, sub.paper_url) == (7.0, "MIT", "")


@pytest.mark.django_db
def test_nobody_but_the_owner_and_staff_may_edit(client, done) -> None:
    other = get_user_model().objects.create_user("eve", password="pw")
    client.force_login(other)
    assert client.get(f"/submissions/{done.pk}/edit/").status_code == 404
    assert client.post(f"/submissions/{done.pk}/edit/", {"model_name": "pwned"}).status_code == 404
    assert Submission.objects.get(pk=done.pk).model_name == "m1"
    staff = get_user_model().objects.create_user("boss", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get(f"/submissions/{done.pk}/edit/").status_code == 200


@pytest.mark.django_db
def test_the_api_patch_edits_details_without_a_rescore(api, done) -> None:
    url = f"/api/v1/submissions/{done.pk}/"
    with mock.patch("evaluation.services.submission_enqueue") as enqueue:
        resp = api.patch(url, {"parameters_billions": "1.5B", "license": "CC-BY-4.0"}, format="json")
    assert resp.status_code == 200, resp.content
    assert (resp.json()["parameters_billions"], resp.json()["license"], resp.json()["is_public"]) == (
        1.5, "CC-BY-4.0", True)
    enqueue.assert_not_called()
    assert Submission.objects.get(pk=done.pk).scored_at == done.scored_at
    bad = api.patch(url, {"release_date": TOMORROW, "license": "changed"}, format="json")
    assert bad.status_code == 400 and "is in the future" in " ".join(bad.json()["release_date"])
    assert Submission.objects.get(pk=done.pk).license == "CC-BY-4.0"
    assert api.patch(url, {}, format="json").status_code == 400


@pytest.mark.django_db
def test_a_rescore_keeps_the_first_finish_time(done, django_capture_on_commit_callbacks) -> None:
    first = done.first_finished_at
    assert first is not None and first == done.finished_at
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_rescore(submission=done)
    again = Submission.objects.get(pk=done.pk)
    assert again.status == "done" and again.finished_at > first
    assert again.first_finished_at == first
