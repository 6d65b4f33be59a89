"""Sign-in throttling: a bounded lockout per username and address, with a clear message; API throttling."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

pytestmark = pytest.mark.django_db
LOGIN = "/accounts/login/"


@pytest.fixture(autouse=True)
def _fresh_counters():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def ada():
    return get_user_model().objects.create_user("ada", "ada@example.org", "right-password")


def sign_in(client, password: str, address: str = "10.0.0.1", username: str = "ada", url: str = LOGIN):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_five_failures_lock_the_username_from_that_address_even_for_the_right_password(client, ada) -> None:
    for _ in range(5):
        resp = sign_in(client, "wrong")
        assert resp.status_code == 200 and "Please enter a correct username and password" in resp.content.decode()
    resp = sign_in(client, "right-password")
    assert resp.status_code == 429
    assert ("Too many failed sign-ins for this username from your address. Sign-in is paused for 15 minutes"
            in resp.content.decode())
    assert "_auth_user_id" not in client.session
    # The username is case-insensitive for the counter, as for an attacker's guesses.
    assert sign_in(client, "right-password", username="ADA").status_code == 429


def test_the_lockout_is_bounded_to_the_address_and_ends_by_itself(client, ada, settings) -> None:
    settings.LOGIN_LOCKOUT_SECONDS = 1
    for _ in range(5):
        sign_in(client, "wrong")
    assert sign_in(client, "right-password").status_code == 429
    # the same account from another address is not locked out
    assert sign_in(client, "right-password", address="10.0.0.2").status_code == 302
    client.logout()
    time.sleep(1.2)
    assert sign_in(client, "right-password").status_code == 302  # the pause is over


def test_a_successful_sign_in_clears_the_count(client, ada) -> None:
    for _ in range(4):
        sign_in(client, "wrong")
    assert sign_in(client, "right-password").status_code == 302
    client.logout()
    for _ in range(4):
        sign_in(client, "wrong")
    assert sign_in(client, "right-password").status_code == 302


def test_the_admin_sign_in_is_throttled_too(client) -> None:
    get_user_model().objects.create_superuser("boss", "b@example.org", "right-password")
    for _ in range(5):
        sign_in(client, "wrong", username="boss", url="/admin/login/")
    resp = sign_in(client, "right-password", username="boss", url="/admin/login/")
    assert "Too many failed sign-ins for this username from your address" in resp.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_api_throttles_an_anonymous_address_and_an_account(client, ada, settings) -> None:
    from rest_framework.test import APIClient

    settings.API_THROTTLE_ANON, settings.API_THROTTLE_USER = "3/minute", "5/minute"
    codes = [client.get("/api/v1/benchmarks/", REMOTE_ADDR="10.0.0.9").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    refused = client.get("/api/v1/benchmarks/", REMOTE_ADDR="10.0.0.9").json()["detail"]
    assert refused.startswith("Request was throttled. Expected available in")
    assert client.get("/api/v1/benchmarks/", REMOTE_ADDR="10.0.0.10").status_code == 200  # another address
    api = APIClient()
    api.force_authenticate(ada)
    assert [api.get("/api/v1/submissions/").status_code for _ in range(6)] == [200] * 5 + [429]


def test_the_failures_are_counted_in_the_shared_throttle_cache(client, ada) -> None:
    """Sign-in failures live where the pages' rate limit counts (THROTTLE_CACHE: Redis in production), so
    failures counted by another web process lock this one too."""
    from django.core.cache import caches
    from django.test.utils import override_settings

    from config.login_throttle import record_failure

    shared = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "shared-throttle"}
    with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                               "LOCATION": "pages"}, "throttle": shared}, THROTTLE_CACHE="throttle"):
        request = type("R", (), {"META": {"REMOTE_ADDR": "10.0.0.7"}})()
        for _ in range(5):  # as another process would
            record_failure(request, "ada")
        assert sign_in(client, "right-password", address="10.0.0.7").status_code == 429
        caches["throttle"].clear()
        assert sign_in(client, "right-password", address="10.0.0.7").status_code == 302
