"""The submission API: upload, progress and results, every bad-input class, limits, privacy."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.models import Submission
from evaluation.tests.submission_helpers import BAD_FILES, good_file, make_benchmark, upload
from evaluation.tests.test_validation import CORPUS

pytestmark = pytest.mark.django_db
URL = "/api/v1/benchmarks/tiny/submissions/"


# bench, user and api come from conftest.py.


@pytest.fixture
def post(api, bench, django_capture_on_commit_callbacks):
    def go(content: bytes, client: APIClient | None = None, **fields):
        with django_capture_on_commit_callbacks(execute=True):
            return (client or api).post(URL, {"file": upload(content), "model_name": "m1", **fields},
                                        format="multipart")
    return go


def test_upload_answers_202_then_the_submission_reports_done_with_results(api, post) -> None:
    resp = post(good_file(), organisation="Lab", weights="open", parameters_billions="7",
                price_input_per_mtok="0.5", price_output_per_mtok="1.5")
    assert resp.status_code == 202, resp.content
    body = resp.json()
    assert body["status"] == "queued"
    assert body["url"].endswith(f"/api/v1/submissions/{body['id']}/")
    assert body["page"].endswith(f"/submissions/{body['id']}/")
    got = api.get(body["url"]).json()
    assert got["status"] == "done"
    assert got["progress"] == {"done": 12, "total": 12, "unit": "predictions"}
    assert got["results"]["modes"]["text"]["accuracy"]["overall"]["count"] == 4
    assert got["organisation"] == "Lab" and got["price_output_per_mtok"] == 1.5
    assert got["is_public"] is False


def test_anonymous_uploads_are_refused(bench) -> None:
    resp = APIClient().post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart")
    assert resp.status_code == 401


def test_a_signed_in_session_may_upload(bench, user, post) -> None:
    client = APIClient()
    client.force_login(user)
    assert post(good_file(), client=client).status_code == 202


def test_a_model_name_is_required(post) -> None:
    resp = post(good_file(), model_name="")
    assert resp.status_code == 400 and "model_name" in resp.json()


@pytest.mark.parametrize(("name", "line", "field", "message"), CORPUS, ids=[c[0] for c in CORPUS])
def test_each_bad_file_fails_with_its_line_field_and_message(api, post, name, line, field, message) -> None:
    resp = post((BAD_FILES / name).read_bytes())
    assert resp.status_code == 202
    got = api.get(resp.json()["url"]).json()
    assert got["status"] == "failed"
    assert got["results"] is None
    first = got["errors"][0]
    assert (first["line"], first["field"]) == (line, field)
    assert message in first["message"]
    assert "nothing was scored" in got["failure_reason"].lower()


def test_a_line_over_the_length_limit_fails_with_the_limit_named(api, post, settings) -> None:
    settings.SUBMISSION_MAX_LINE_BYTES = 2048
    got = api.get(post((BAD_FILES / "long_line.jsonl").read_bytes()).json()["url"]).json()
    assert got["errors"] == [{"line": 2, "field": "",
                              "message": "the line is longer than the limit of 2,048 bytes"}]


# Repeated 40 times the file is far over the limit: refused on Content-Length, before the body is read.
@pytest.mark.parametrize("repeat", [1, 40])
def test_a_file_over_the_size_limit_gets_413_with_a_clear_message(post, settings, repeat) -> None:
    limit = settings.SUBMISSION_MAX_FILE_BYTES = 1024
    resp = post((BAD_FILES / "too_large.jsonl").read_bytes() * repeat)
    assert resp.status_code == 413
    assert f"over the limit of {limit:,} bytes" in resp.json()["detail"]
    assert not Submission.objects.exists()


def test_the_daily_quota_answers_429(post, settings) -> None:
    settings.SUBMISSIONS_PER_DAY = 1
    assert post(good_file()).status_code == 202
    resp = post(good_file())
    assert resp.status_code == 429
    assert "daily limit" in resp.json()["detail"]


def test_only_the_owner_and_staff_see_a_submission(api, post) -> None:
    url = post(good_file()).json()["url"]
    other = APIClient()
    other.force_authenticate(get_user_model().objects.create_user("eve"))
    assert other.get(url).status_code == 404
    staff = APIClient()
    staff.force_authenticate(get_user_model().objects.create_user("boss", is_staff=True))
    assert staff.get(url).status_code == 200


def test_per_prediction_rows_show_dev_samples_only_and_never_test_answers(api, post) -> None:
    url = api.get(post(good_file()).json()["url"]).json()["predictions_url"]
    rows = api.get(url).json()["results"]
    assert {r["sample_id"] for r in rows} == {"s1", "s2", "s3"}
    assert {r["answer"] for r in rows} == {"1", "2", "3"}  # dev answers are public
    staff = APIClient()
    staff.force_authenticate(get_user_model().objects.create_user("boss", is_staff=True))
    assert staff.get(url).json()["count"] == 12


def test_publish_unpublish_and_delete(api, post) -> None:
    url = post(good_file()).json()["url"]
    assert api.patch(url, {"is_public": True}, format="json").json()["is_public"] is True
    assert api.patch(url, {"is_public": False}, format="json").json()["is_public"] is False
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert api.get("/api/v1/submissions/").json() == []


def test_the_openapi_schema_documents_the_submission_endpoints(api) -> None:
    resp = api.get("/api/schema/")
    assert resp.status_code == 200
    assert b"/api/v1/benchmarks/{slug}/submissions/" in resp.content


def run_client(live_server, token: str, path, *extra: str):
    import subprocess
    import sys
    from pathlib import Path

    from django.conf import settings

    script = Path(settings.BASE_DIR) / "scripts" / "submit_client.py"
    return subprocess.run([sys.executable, str(script), "--server", live_server.url, "--token", token,
                           "--benchmark", "tiny", "--model", "client-model", str(path), *extra],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.django_db(transaction=True)
def test_the_standalone_client_uploads_with_a_progress_bar_and_waits_for_the_results(
        live_server, tmp_path, user) -> None:
    import json

    make_benchmark(tmp_path / "bench")
    token = Token.objects.create(user=user).key
    good = tmp_path / "good.jsonl"
    good.write_bytes(good_file())
    done = run_client(live_server, token, good, "--prices", "1", "2", "--params", "1.5B", "--license", "MIT",
                      "--release-date", "2025-01-31", "--wait")
    assert done.returncode == 0, done.stderr
    assert "upload  [####" in done.stderr and "100.0%" in done.stderr
    assert json.loads(done.stdout)["modes"]["text"]["accuracy"]["overall"]["count"] == 4
    sub = Submission.objects.get()
    assert sub.prices == (1.0, 2.0)
    assert (sub.parameters_billions, sub.license, str(sub.release_date)) == (1.5, "MIT", "2025-01-31")
    assert not sub.full_pipeline
    judged = run_client(live_server, token, good, "--full-pipeline")
    assert judged.returncode == 0, judged.stderr
    assert Submission.objects.get(pk=json.loads(judged.stdout)["id"]).full_pipeline
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes((BAD_FILES / "negative_tokens.jsonl").read_bytes())
    failed = run_client(live_server, token, bad, "--wait")
    assert failed.returncode == 1
    assert "line 1, field 'usage.input_tokens': expected a non-negative number or null, got -5" in failed.stderr
