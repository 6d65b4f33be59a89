"""Limits and bad input at the door: paging parameters, early size refusal, storage failures, races."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

URL = "/api/v1/benchmarks/tiny/submissions/"
BIG = "1" + "0" * 20  # 10**20: beyond PostgreSQL's bigint, SQLite's integer


@pytest.fixture
def bench(tmp_path):
    return make_benchmark(tmp_path)


@pytest.fixture
def user():
    return get_user_model().objects.create_user("ada", "ada@example.org", "pw")


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.mark.django_db
@pytest.mark.parametrize(("query", "message"), [
    ("limit=1e20", "limit: expected a whole number from 1 to 1,000, got '1e20'"),
    (f"limit={BIG}", f"limit: expected a whole number from 1 to 1,000, got '{BIG}'"),
    ("limit=-1", "limit: expected a whole number from 1 to 1,000, got '-1'"),
    ("limit=0", "limit: expected a whole number from 1 to 1,000, got '0'"),
    ("limit=1001", "limit: expected a whole number from 1 to 1,000, got '1001'"),
    ("limit=ten", "limit: expected a whole number from 1 to 1,000, got 'ten'"),
    (f"offset={BIG}", f"offset: expected a whole number from 0 to 1,000,000,000, got '{BIG}'"),
    ("offset=1.5", "offset: expected a whole number from 0 to 1,000,000,000, got '1.5'"),
])
def test_bad_paging_parameters_get_400_naming_the_parameter(api, bench, django_capture_on_commit_callbacks,
                                                            query, message) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sub = api.post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart").json()
    url = f"/api/v1/submissions/{sub['id']}/predictions/"
    resp = api.get(f"{url}?{query}")
    assert resp.status_code == 400
    name, text = message.split(": ", 1)
    assert resp.json() == {name: [text]}
    page = api.get(f"{url}?limit=2&offset=1").json()  # good values still page
    assert page["count"] == 6 and len(page["results"]) == 2
