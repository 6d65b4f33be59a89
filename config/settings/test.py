"""The test suite. Uses DATABASE_URL / CELERY_BROKER_URL when set (CI), the embedded defaults otherwise.

Unit tests run Celery tasks eagerly; integration tests start a real worker process and turn
eager mode off for themselves. So that such a worker sees the test database, the SQLite test
database is a file (an in-memory one lives only inside the test process).
"""

import os
from pathlib import Path

from config.settings.base import *  # noqa: F401,F403
from config.settings.base import DATABASES, VAR_DIR
from config.settings.env import env_bool, env_float, env_str

DEBUG = False
SECRET_KEY = "test-secret-key-not-for-production"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", True)
CELERY_TASK_EAGER_PROPAGATES = True
# Test workers start without warming their benchmark cache unless a test asks (the warm-up task would
# read the database ahead of the test's own tasks).
SCORING_WARMUP = env_bool("SCORING_WARMUP", False)
# Files per pytest-xdist process (CI spreads the suite over two; "" without xdist): a test that lists what an
# upload left behind must not see another process's files. A worker a test starts inherits the variable.
# .ci/run runs its SQLite and PostgreSQL paths at once in one checkout: each database's runs have files of their own.
_ENGINE = DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
_XDIST = os.environ.get("PYTEST_XDIST_WORKER", "") + ("" if _ENGINE == "sqlite3" else f"-{_ENGINE}")
MEDIA_ROOT = VAR_DIR / f"test-media{_XDIST}"
# The fake endpoints the tests start listen on 127.0.0.1 (the refusal's own tests turn this off).
RUNS_ALLOW_PRIVATE_ENDPOINTS = env_bool("RUNS_ALLOW_PRIVATE_ENDPOINTS", True)
# One cache per test process, unless given (a worker started by a test shares the test's).
RUNS_CACHE_PATH = Path(env_str("RUNS_CACHE_PATH", str(VAR_DIR / f"test-run-cache-{os.getpid()}.sqlite3")))
# The suite makes hundreds of API calls a minute from one address; the throttle's own test turns it on.
API_THROTTLE_ANON = API_THROTTLE_USER = None
# Likewise the pages' rate limit (config/tests/test_rate_limit.py turns it on).
PAGE_RATE_LIMIT_ANON = PAGE_RATE_LIMIT_USER = None
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PRIVATE_MEDIA_ROOT = VAR_DIR / f"test-private{_XDIST}"
STORAGES = {
    "default": {"BACKEND": "config.storages.AtomicFileSystemStorage"},
    "private": {"BACKEND": "config.storages.PrivateFileSystemStorage", "OPTIONS": {"location": str(PRIVATE_MEDIA_ROOT)}},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Commits do not wait for the WAL to reach the disk (a session setting): a test database is thrown away.
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = " ".join(
        filter(None, [DATABASES["default"].get("OPTIONS", {}).get("options"), "-c synchronous_commit=off"]))
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One file per test process, so two test runs on one machine never share (or delete) a database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}
# A change's refresh is sent at once (the default waits 2 s to coalesce a burst: leaderboard's burst test sets it).
RESULTS_CHANGED_DELAY_SECONDS = env_float("RESULTS_CHANGED_DELAY_SECONDS", 0.0)
