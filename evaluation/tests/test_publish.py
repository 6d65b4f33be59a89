"""Only a scored (done) submission can be published: API, page and admin refuse the others, saying why."""

from __future__ import annotations

import pytest
from django.db.models.fields.files import FieldFile
from rest_framework.test import APIClient

from evaluation.models import Submission, SubmissionStatus
from evaluation.tests.submission_helpers import BAD_FILES, good_file, upload

pytestmark = pytest.mark.django_db
URL = "/api/v1/benchmarks/tiny/submissions/"


@pytest.fixture
def submit(api, bench, django_capture_on_commit_callbacks):
    """Upload through the API and run the pipeline; the submission as stored."""
    def go(content: bytes, **fields) -> Submission:
        with django_capture_on_commit_callbacks(execute=True):
            resp = api.post(URL, {"file": upload(content), "model_name": "m1", **fields}, format="multipart")
        assert resp.status_code == 202, resp.content
        return Submission.objects.get(pk=resp.json()["id"])
    return go


def test_the_api_refuses_to_publish_a_failed_submission_with_409_and_why(api, submit) -> None:
    sub = submit((BAD_FILES / "broken_json.jsonl").read_bytes())
    assert sub.status == SubmissionStatus.FAILED
    resp = api.patch(f"/api/v1/submissions/{sub.pk}/", {"is_public": True}, format="json")
    assert resp.status_code == 409
    assert resp.json()["detail"] == (f"Submission #{sub.pk} cannot be published: it failed, so it has no results to "
                                     "show; correct the file and submit it again. Only scored submissions go on "
                                     "the leaderboard.")
    sub.refresh_from_db()
    assert sub.is_public is False
    # unpublishing is always allowed, and a done one publishes
    assert api.patch(f"/api/v1/submissions/{sub.pk}/", {"is_public": False}, format="json").status_code == 200
    done = submit(good_file())
    got = api.patch(f"/api/v1/submissions/{done.pk}/", {"is_public": True}, format="json").json()
    assert got["is_public"] is True and got["on_leaderboard"] is True


def test_the_api_refuses_to_publish_a_submission_still_in_the_pipeline(api, bench, user) -> None:
    sub = Submission.objects.create(benchmark=bench, owner=user, model_name="m", file="x.jsonl",
                                    status=SubmissionStatus.SCORING)
    resp = api.patch(f"/api/v1/submissions/{sub.pk}/", {"is_public": True}, format="json")
    assert resp.status_code == 409 and "it is still scoring; publish it once it is done" in resp.json()["detail"]
    sub.refresh_from_db()
    assert sub.is_public is False


def test_the_page_of_a_failed_submission_refuses_to_publish_and_never_says_public(client, user, submit) -> None:
    # published at upload ("publish once scored"), then failed: the page must not claim it is public
    sub = submit((BAD_FILES / "broken_json.jsonl").read_bytes(), is_public="true")
    client.force_login(user)
    page = client.get(sub.get_absolute_url()).content.decode()
    assert "Public on the leaderboard." not in page
    assert "Not on the leaderboard: it failed." in page
    resp = client.post(f"/submissions/{sub.pk}/publish/", {"public": "1"}, follow=True)
    assert "cannot be published: it failed" in resp.content.decode()
    other = submit((BAD_FILES / "bad_mode.jsonl").read_bytes())
    client.post(f"/submissions/{other.pk}/publish/", {"public": "1"})
    other.refresh_from_db()
    assert other.is_public is False
    api_view = APIClient()
    api_view.force_authenticate(user)
    assert api_view.get(f"/api/v1/submissions/{sub.pk}/").json()["on_leaderboard"] is False


def test_the_admin_refuses_to_publish_a_failed_submission(admin_client, submit) -> None:
    sub = submit((BAD_FILES / "broken_json.jsonl").read_bytes())
    form = admin_client.get(f"/admin/evaluation/submission/{sub.pk}/change/").context["adminform"].form
    data = {k: v for k, v in form.initial.items()
            if v is not None and k in form.fields and not isinstance(v, FieldFile)}
    data.update(benchmark=sub.benchmark_id, owner=sub.owner_id, is_public="on", file="x.jsonl")
    resp = admin_client.post(f"/admin/evaluation/submission/{sub.pk}/change/", data)
    assert resp.status_code == 200  # the form again, with the error
    assert "cannot be published: it failed" in resp.content.decode()
    sub.refresh_from_db()
    assert sub.is_public is False
