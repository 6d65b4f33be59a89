"""Settings come from the environment, and production refuses to start half-configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.settings.base import celery_broker_options, celery_broker_url, database_config
from config.settings.env import ImproperlyConfiguredEnv, env_bool, env_int, env_list, env_required

ROOT = Path(__file__).resolve().parents[2]


def test_database_is_sqlite_by_default_and_postgres_from_database_url(tmp_path: Path) -> None:
    assert database_config(None, tmp_path) == {"ENGINE": "django.db.backends.sqlite3", "NAME": tmp_path / "db.sqlite3"}
    pg = database_config("postgres://bob:secret@db.internal:6543/bench", tmp_path)
    assert pg["ENGINE"] == "django.db.backends.postgresql"
    assert (pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == ("bench", "bob", "secret", "db.internal", 6543)


def test_broker_is_embedded_by_default_and_redis_or_rabbitmq_when_set(tmp_path: Path) -> None:
    assert celery_broker_url(None, tmp_path) == "filesystem://"
    options = celery_broker_options(None, tmp_path)
    assert options["data_folder_in"] == options["data_folder_out"] == str(tmp_path / "broker" / "queue")
    assert celery_broker_url("redis://127.0.0.1:6379/0", tmp_path) == "redis://127.0.0.1:6379/0"
    assert celery_broker_options("redis://127.0.0.1:6379/0", tmp_path)["visibility_timeout"] >= 1800
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
    with pytest.raises(ImproperlyConfiguredEnv, match="SECRET_KEY must be set"):
        env_required("SECRET_KEY", environ={})
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
    result = run_manage(["check"], SECRET_KEY="x" * 60)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS must be set" in result.stderr


def test_production_passes_the_deployment_checklist() -> None:
    key = "k3y-" + "a1B2c3D4e5F6g7H8i9J0" * 3
    result = run_manage(["check", "--deploy", "--fail-level", "WARNING"], SECRET_KEY=key, ALLOWED_HOSTS="bench.example.org")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout
