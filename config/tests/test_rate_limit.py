"""The pages' rate limit (config/rate_limit.py): per address, a clear 429 page with Retry-After, static
files and the health page untouched, and counters that live in the shared cache, not in the process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from config.rate_limit import Rate, client_address, hit

pytestmark = pytest.mark.django_db

LOCAL = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "leaderboard"}


def _throttle_cache() -> dict:
    """A cache of its own for the counters: Redis when the run has one (the PostgreSQL path), so another
    process shares it; in-process memory otherwise."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if broker.startswith("redis://"):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": broker,
                "KEY_PREFIX": f"rate-test-{uuid.uuid4().hex[:8]}"}
    return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": f"rate-{uuid.uuid4().hex}"}


# The limits count in fixed windows of the clock (config/rate_limit.py): a window that ended among a test's requests
# started their count again (a test failed so once in CI). The tests count per hour, and start at least a minute
# before the hour's end.
WINDOW = 3600


def _in_a_fresh_window() -> None:
    left = WINDOW - time.time() % WINDOW
    if left < 60:
        time.sleep(left + 0.1)


@pytest.fixture
def limited():
    caches_ = {"default": LOCAL, "throttle": _throttle_cache()}
    _in_a_fresh_window()
    with override_settings(CACHES=caches_, THROTTLE_CACHE="throttle", PAGE_RATE_LIMIT_ANON="3/hour",
                           PAGE_RATE_LIMIT_USER="5/hour"):
        yield caches_["throttle"]
        caches["throttle"].clear() if "LocMem" in caches_["throttle"]["BACKEND"] else None


def test_over_the_limit_an_anonymous_visitor_gets_the_429_page_and_another_address_does_not(client, limited) -> None:
    for _ in range(3):
        assert client.get("/", REMOTE_ADDR="203.0.113.7").status_code == 200
    resp = client.get("/", REMOTE_ADDR="203.0.113.7")
    assert resp.status_code == 429
    page = resp.content.decode()
    assert "<h1>Too many requests</h1>" in page and "then reload the page" in page
    assert 1 <= int(resp["Retry-After"]) <= WINDOW
    assert "no-store" in resp["Cache-Control"]
    assert client.get("/b/nothing-here/", REMOTE_ADDR="203.0.113.7").status_code == 429  # every page, not one URL
    assert client.get("/", REMOTE_ADDR="203.0.113.8").status_code == 200  # another address is unaffected


def test_static_files_the_api_and_the_health_page_are_not_limited(client, limited) -> None:
    for _ in range(4):
        client.get("/", REMOTE_ADDR="203.0.113.9")
    assert client.get("/", REMOTE_ADDR="203.0.113.9").status_code == 429
    assert client.get(f"/{settings.STATIC_URL.lstrip('/')}css/site.css", REMOTE_ADDR="203.0.113.9").status_code != 429
    assert client.get("/api/v1/benchmarks/", REMOTE_ADDR="203.0.113.9").status_code == 200
    assert client.get("/submissions/health/", REMOTE_ADDR="203.0.113.9").status_code != 429


def test_a_signed_in_user_is_counted_per_account_with_its_own_limit(client, limited) -> None:
    user = get_user_model().objects.create_user("grace", "g@example.org", "pw")
    client.force_login(user)
    codes = [client.get("/", REMOTE_ADDR="203.0.113.10").status_code for _ in range(6)]
    assert codes == [200] * 5 + [429]
    client.logout()
    assert client.get("/", REMOTE_ADDR="203.0.113.10").status_code == 200  # the address has its own count


def test_the_count_lives_in_the_throttle_cache_and_a_page_read_writes_nothing(client, limited) -> None:
    """What another web process counted (here: straight into the shared cache) counts here too."""
    with CaptureQueriesContext(connection) as ctx:
        client.get("/", REMOTE_ADDR="198.51.100.4")
    assert not [q for q in ctx.captured_queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    for _ in range(2):  # as another process would: the same function on the same cache
        assert hit("anon", client_address(type("R", (), {"META": {"REMOTE_ADDR": "198.51.100.4"}})()),
                   Rate(3, WINDOW)) == 0
    assert client.get("/", REMOTE_ADDR="198.51.100.4").status_code == 429


@pytest.mark.skipif(not os.environ.get("CELERY_BROKER_URL", "").startswith("redis://"),
                    reason="needs the Redis of the PostgreSQL path")
def test_two_django_processes_share_one_count_through_redis(client, limited) -> None:
    """Another Django process (a subprocess with the same Redis cache) spends the address's limit; this
    process then refuses it."""
    code = (
        "import django, os\n"
        "django.setup()\n"
        "from django.test.utils import override_settings\n"
        f"with override_settings(CACHES={{'default': {LOCAL!r}, 'throttle': {limited!r}}}, THROTTLE_CACHE='throttle'):\n"
        "    from config.rate_limit import Rate, hit\n"
        f"    print([hit('anon', '192.0.2.44', Rate(3, {WINDOW})) for _ in range(3)])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"})
    assert out.stdout.strip() == "[0, 0, 0]"
    assert client.get("/", REMOTE_ADDR="192.0.2.44").status_code == 429


def test_an_ipv6_visitor_is_counted_by_its_64(client, limited) -> None:
    for i in range(3):
        assert client.get("/", REMOTE_ADDR=f"2001:db8:1:2::{i + 1}").status_code == 200
    assert client.get("/", REMOTE_ADDR="2001:db8:1:2:ffff::9").status_code == 429
    assert client.get("/", REMOTE_ADDR="2001:db8:1:3::1").status_code == 200


def test_retry_after_is_the_time_left_in_the_window(limited) -> None:
    start = 1_800_000_000 // 60 * 60  # a minute's first second
    assert [hit("anon", "192.0.2.77", Rate(2, 60), now=start + 10) for _ in range(2)] == [0, 0]
    assert hit("anon", "192.0.2.77", Rate(2, 60), now=start + 10) == 50  # over: 50 s until the window ends
    assert hit("anon", "192.0.2.77", Rate(2, 60), now=start + 59.5) == 1  # never 0 while refused
    assert hit("anon", "192.0.2.77", Rate(2, 60), now=start + 60) == 0  # a new window, a new count


def test_a_rate_is_parsed_or_refused() -> None:
    assert Rate.parse("120/minute") == Rate(120, 60)
    assert Rate.parse("off") is None and Rate.parse("") is None and Rate.parse(None) is None
    with pytest.raises(ValueError):
        Rate.parse("120/fortnight")
