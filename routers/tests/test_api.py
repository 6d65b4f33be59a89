"""Router uploads through the API: kind=router on the submissions endpoint, and reading them back."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.metrics.routing import split_samples
from routers.models import RouterSubmission
from routers.tests import helpers

pytestmark = pytest.mark.django_db
TEST = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")


@pytest.fixture
def api(tmp_path):
    helpers.make_pool(tmp_path)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=helpers.user('rita')).key}")
    return client


def upload(lines: list[dict]) -> SimpleUploadedFile:
    return SimpleUploadedFile("r.jsonl", "\n".join(json.dumps(x) for x in lines).encode())


def test_kind_router_is_scored_and_readable(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"/api/v1/benchmarks/{helpers.SLUG}/submissions/",
                     {"kind": "router", "model_name": "kNN-ish", "is_public": "true",
                      "file": upload([{"sample_id": u, "model": "Mid"} for u in TEST])}, format="multipart")
    assert r.status_code == 202 and r.json()["kind"] == "router"
    body = APIClient().get(r.json()["url"]).json()  # public and done: anyone may read it
    assert body["status"] == "done" and body["name"] == "kNN-ish"
    assert body["results"]["share"]["Mid"] == 1
    # Outcomes per test sample are stored for paired tests but never shown: they would reveal the test answers.
    assert RouterSubmission.objects.get().results["per_sample"] and "per_sample" not in body["results"]
    assert body["results"]["accuracy"]["value"] == pytest.approx(sum(u in helpers.MODELS["Mid"][1] for u in TEST) / 4)


def test_a_bad_router_file_lists_its_lines(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"/api/v1/benchmarks/{helpers.SLUG}/routers/",
                     {"name": "bad", "file": upload([{"sample_id": TEST[0], "model": "GPT-9"}])}, format="multipart")
    body = api.get(r.json()["url"]).json()
    assert body["status"] == "failed"
    assert body["errors"][0] == {"line": 1, "field": "model",
                                 "message": "unknown model 'GPT-9': the pool's models are Big, Mid, Small"}
    assert APIClient().get(r.json()["url"]).status_code == 404  # private: hidden from others


def test_without_kind_the_upload_is_still_a_prediction_file(api):
    r = api.post(f"/api/v1/benchmarks/{helpers.SLUG}/submissions/", {"file": upload([])}, format="multipart")
    assert r.status_code == 400 and "model_name" in r.json()  # evaluation's serializer answered
