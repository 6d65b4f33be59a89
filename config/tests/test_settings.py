"""Settings come from the environment, and production refuses to start half-configured."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from config.settings.base import celery_broker_options, celery_broker_url, database_config
from config.settings.env import (
    ImproperlyConfiguredEnv,
    env_bool,
    env_int,
    env_list,
    secret_key_problem,
)

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k3y-" + "a1B2c3D4e5F6g7H8i9J0" * 3


def test_database_is_sqlite_by_default_and_postgres_from_database_url(tmp_path: Path) -> None:
    assert database_config(None, tmp_path) == {"ENGINE": "django.db.backends.sqlite3", "NAME": tmp_path / "db.sqlite3"}
    pg = database_config("postgres://bob:secret@db.internal:6543/bench", tmp_path)
    assert pg["ENGINE"] == "django.db.backends.postgresql"
    assert (pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == ("bench", "bob", "secret", "db.internal", 6543)


def test_broker_is_embedded_by_default_and_redis_or_rabbitmq_when_set(tmp_path: Path) -> None:
    assert celery_broker_url(None, tmp_path) == "filesystem://localhost//"
    options = celery_broker_options(None, tmp_path)
    assert options["data_folder_in"] == options["data_folder_out"] == str(tmp_path / "broker" / "queue")
    assert celery_broker_url("redis://127.0.0.1:6379/0", tmp_path) == "redis://127.0.0.1:6379/0"
    # Redis re-delivers an unacknowledged message after the visibility timeout: short enough that a
    # killed worker's stage comes back within minutes, longer than the longest retry countdown (Redis
    # re-delivers those too, so a shorter timeout would run a retry before its time).
    from config.settings import base

    timeout = celery_broker_options("redis://127.0.0.1:6379/0", tmp_path)["visibility_timeout"]
    longest_retry = base.SUBMISSION_JUDGE_RETRY_SECONDS * 2 ** max(base.SUBMISSION_JUDGE_RETRIES - 1, 0)
    assert longest_retry < timeout <= 300
    assert celery_broker_options("amqp://guest:guest@127.0.0.1:5672//", tmp_path) == {}


def test_celery_tasks_are_acknowledged_late_and_requeued_when_a_worker_is_lost() -> None:
    from config.settings import base

    assert base.CELERY_TASK_ACKS_LATE is True
    assert base.CELERY_TASK_REJECT_ON_WORKER_LOST is True
    assert base.CELERY_WORKER_PREFETCH_MULTIPLIER == 1
    assert base.CELERY_TASK_ALWAYS_EAGER is False


@pytest.mark.parametrize(
    ("value", "expected"), [("1", True), ("yes", True), ("On", True), ("0", False), ("false", False), ("", True)]
)
def test_env_bool(value: str, expected: bool) -> None:
    assert env_bool("FLAG", True, environ={"FLAG": value}) is expected


def test_env_readers_reject_malformed_values_with_the_variable_name() -> None:
    with pytest.raises(ImproperlyConfiguredEnv, match="DEBUG='maybe' is not a boolean"):
        env_bool("DEBUG", False, environ={"DEBUG": "maybe"})
    with pytest.raises(ImproperlyConfiguredEnv, match="WORKERS='two' is not a whole number"):
        env_int("WORKERS", 1, environ={"WORKERS": "two"})
    with pytest.raises(ImproperlyConfiguredEnv, match="WORKERS=0 is below the minimum 1"):
        env_int("WORKERS", 1, environ={"WORKERS": "0"}, minimum=1)
    assert env_list("HOSTS", environ={"HOSTS": "a.org, b.org,,"}) == ["a.org", "b.org"]


def run_manage(args: list[str], **env: str) -> subprocess.CompletedProcess:
    # A deployment's environment: none of the test run's own switches (browser tests set
    # DJANGO_ALLOW_ASYNC_UNSAFE for Playwright, which the deploy check rightly refuses).
    dropped = {"SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    environ = {k: v for k, v in os.environ.items() if k not in dropped}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args, "--settings=config.settings.production"],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_production_refuses_to_start_without_secret_key() -> None:
    result = run_manage(["check"], ALLOWED_HOSTS="bench.example.org")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_without_allowed_hosts() -> None:
    result = run_manage(["check"], SECRET_KEY=STRONG_KEY)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS must be set" in result.stderr


def test_production_passes_the_deployment_checklist() -> None:
    result = run_manage(["check", "--deploy", "--fail-level", "WARNING"], SECRET_KEY=STRONG_KEY,
                        ALLOWED_HOSTS="bench.example.org")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(("key", "message"), [
    ("insecure-local-development-key-change-me", "SECRET_KEY is a published development or placeholder value"),
    ("django-insecure-" + "a1B2c3D4e5" * 6, "SECRET_KEY is a published development or placeholder value"),
    ("s3cr3t-but-short", "SECRET_KEY is too short for production: 16 characters, at least 50 needed"),
    ("ab" * 40, "SECRET_KEY is too weak for production: only 2 different characters, at least 5 needed"),
])
def test_production_refuses_to_start_with_a_weak_secret_key(key, message) -> None:
    assert message in secret_key_problem(key)
    result = run_manage(["check"], SECRET_KEY=key, ALLOWED_HOSTS="bench.example.org")
    assert result.returncode != 0
    assert message in result.stderr
    assert "secrets.token_urlsafe(50)" in result.stderr  # and how to make a good one


def test_a_strong_secret_key_passes() -> None:
    assert secret_key_problem(STRONG_KEY) is None


def _bare_env(**env: str) -> dict[str, str]:
    dropped = {"SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG"}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **env}


def test_manage_py_defaults_to_the_production_settings_and_says_how_to_run_locally() -> None:
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=_bare_env(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
    assert "DJANGO_SETTINGS_MODULE=config.settings.local" in result.stderr
    ok = subprocess.run([sys.executable, "manage.py", "shell", "-v", "0", "-c",
                         "from django.conf import settings; print(settings.SETTINGS_MODULE, settings.DEBUG)"],
                        cwd=ROOT, env=_bare_env(SECRET_KEY=STRONG_KEY, ALLOWED_HOSTS="bench.example.org"),
                        capture_output=True, text=True, timeout=120)
    assert ok.stdout.split() == ["config.settings.production", "False"], ok.stderr


def test_the_celery_app_defaults_to_the_production_settings() -> None:
    code = "import config.celery; from django.conf import settings; print(settings.SETTINGS_MODULE, settings.DEBUG)"
    ok = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                        env=_bare_env(SECRET_KEY=STRONG_KEY, ALLOWED_HOSTS="bench.example.org"))
    assert ok.stdout.split() == ["config.settings.production", "False"], ok.stderr


def test_the_run_command_and_the_test_command_choose_their_settings_themselves() -> None:
    assert 'DJANGO_SETTINGS_MODULE="${DJANGO_SETTINGS_MODULE:-config.settings.local}"' in (ROOT / "scripts/run").read_text()
    assert "export DJANGO_SETTINGS_MODULE=config.settings.test" in (ROOT / "scripts/test").read_text()


@pytest.mark.slow
def test_production_serves_static_files_hashed_and_compressed(tmp_path) -> None:
    env = {"SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "bench.example.org", "VAR_DIR": str(tmp_path)}
    collected = run_manage(["collectstatic", "--noinput"], **env)
    assert collected.returncode == 0, collected.stderr
    # What a browser gets: the page names the hashed file, and the 4.8 MB chart library comes gzipped.
    fetch = ("from django.test import Client; from django.templatetags.static import static; "
             "url = static('vendor/plotly.min.js'); r = Client().get(url, HTTP_ACCEPT_ENCODING='gzip', secure=True, "
             "HTTP_HOST='bench.example.org'); body = b''.join(r.streaming_content); "
             "print(url, r.status_code, r.get('Content-Encoding'), len(body), r.get('Cache-Control'))")
    served = run_manage(["shell", "-v", "0", "-c", fetch], **env)
    assert served.returncode == 0, served.stderr
    url, status, encoding, size, cache = served.stdout.split(maxsplit=4)
    assert re.fullmatch(r"/static/vendor/plotly\.min\.[0-9a-f]{12}\.js", url)
    assert (status, encoding) == ("200", "gzip")
    plain = (tmp_path / "staticfiles" / "vendor" / "plotly.min.js").stat().st_size
    assert int(size) < plain / 2
    assert "immutable" in cache  # a hashed name is cached for ever
