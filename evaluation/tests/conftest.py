"""Fixtures shared by the submission tests: the tiny benchmark, a researcher and their API client."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation.tests.submission_helpers import make_benchmark


@pytest.fixture
def bench(tmp_path):
    return make_benchmark(tmp_path)


@pytest.fixture
def user():
    return get_user_model().objects.create_user("ada", "ada@example.org", "pw")


@pytest.fixture
def web(client, user):
    """Django's test client signed in as ``user``."""
    client.force_login(user)
    return client


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client
