"""Issue 32: the request cache is one owner's, against one endpoint (spec/runs.md, docs/security.md).

Two researchers, two fake endpoints (the simulated model in a process of its own each, each serving
its own model id so that its answers can be told apart): B's run naming A's model sends every request
to B's endpoint and holds none of A's answers; the same owner against the same endpoint pays nothing
twice; an endpoint that turns private at connection time ends its run failed, with no submission."""

from __future__ import annotations

import json
import sqlite3
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from evaluation import hosted_runs
from evaluation.harness.cache import SqliteRequestCache, request_key
from evaluation.models import HostedRun, Submission
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import log_lines, simulated_model
from evaluation.tests.submission_helpers import SLUG, make_benchmark
from evaluation.tests.test_safe_http import PUBLIC, fake_dns

pytestmark = pytest.mark.django_db
MODEL = "a-private-model"
A_BUILD, B_BUILD = "a-private-build-7f3", "b-own-build-19c"


@pytest.fixture
def two(tmp_path: Path, settings):  # noqa: ANN001, ANN201
    settings.RUNS_CACHE_PATH = tmp_path / "cache.sqlite3"
    benchmark = make_benchmark(tmp_path / "bench")
    users = get_user_model()
    a, b = users.objects.create_user("alice", "a@example.org", "pw"), users.objects.create_user("bob", "b@example.org", "pw")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    return benchmark, a, b, key


def _client(user) -> APIClient:  # noqa: ANN001
    client = APIClient()
    client.force_authenticate(user)
    return client


def _run(user, url: str, capture, name: str) -> HostedRun:  # noqa: ANN001
    with capture(execute=False):  # no worker here: the test runs it
        response = _client(user).post(f"/api/v1/benchmarks/{SLUG}/runs/", {
            "endpoint": url, "model": MODEL, "api_key": "sk-test", "modes": "text,adaptive", "model_name": name,
            "public": False}, format="json")
    assert response.status_code == 202, response.content
    with capture(execute=True):
        hosted_runs.run_execute(run_id=response.json()["id"])
    return HostedRun.objects.get(pk=response.json()["id"])


def _lines(run: HostedRun) -> list[dict]:
    with run.predictions.open("rb") as handle:
        return [json.loads(line) for line in handle.read().decode().splitlines() if line.strip()]


def test_b_naming_a_private_model_sends_every_request_to_b_and_gets_none_of_a_answers(
        two, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, alice, bob, key = two
    log_a, log_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with simulated_model(key, log_a, "--served-model", A_BUILD, "--seed", "1") as url_a:
        run_a = _run(alice, url_a, django_capture_on_commit_callbacks, "A private")
    assert run_a.status == "done", run_a.failure_reason
    assert run_a.requests_sent == len(log_lines(log_a)) > 0
    with simulated_model(key, log_b, "--served-model", B_BUILD, "--seed", "2") as url_b:
        run_b = _run(bob, url_b, django_capture_on_commit_callbacks, "B's own")
    assert run_b.status == "done", run_b.failure_reason
    # Every one of B's requests reached B's endpoint; none came from A's answers.
    assert run_b.requests_cached == 0 and run_b.requests_sent == len(log_lines(log_b)) == run_a.requests_sent
    lines = _lines(run_b)
    assert len(lines) == run_b.progress_total == 12
    assert {m for line in lines for m in line["run"]["model_ids"]} == {B_BUILD}
    assert A_BUILD not in run_b.predictions.open("rb").read().decode()
    assert run_b.submission is not None and run_b.submission.run_record["model_ids"] == [B_BUILD]


def test_the_same_owner_against_the_same_endpoint_pays_nothing_twice_but_another_endpoint_is_asked(
        two, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, alice, _, key = two
    log, other = tmp_path / "log.jsonl", tmp_path / "other.jsonl"
    with simulated_model(key, log, "--served-model", A_BUILD) as url:
        first = _run(alice, url, django_capture_on_commit_callbacks, "first")
        sent = len(log_lines(log))
        again = _run(alice, url.rstrip("/") + "/", django_capture_on_commit_callbacks, "again")  # the same endpoint
    assert first.requests_sent == sent > 0
    assert again.status == "done" and again.requests_sent == 0 and again.requests_cached == sent
    assert len(log_lines(log)) == sent
    with simulated_model(key, other, "--served-model", B_BUILD) as url_other:  # A's own second endpoint
        moved = _run(alice, url_other, django_capture_on_commit_callbacks, "moved")
    assert moved.requests_cached == 0 and moved.requests_sent == len(log_lines(other)) == sent
    assert {m for line in _lines(moved) for m in line["run"]["model_ids"]} == {B_BUILD}


def test_an_endpoint_that_turns_private_at_connection_ends_the_run_failed_with_no_submission(
        two, tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, alice, _, key = two
    settings.RUNS_ALLOW_PRIVATE_ENDPOINTS = False
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log) as url:
        port = url.split(":")[2].split("/")[0]
        # Public when the run is created, loopback (where the fake endpoint listens) when it connects.
        fake_dns(monkeypatch, {"rebind.example.test": [PUBLIC, "127.0.0.1"]})
        run = _run(alice, f"http://rebind.example.test:{port}/v1", django_capture_on_commit_callbacks, "rebinding")
    assert log_lines(log) == []  # the guard held: nothing reached the loopback server
    assert run.status == "failed"
    assert "could not be called" in run.failure_reason and "loopback" in run.failure_reason
    assert "no submission was made" in run.failure_reason
    assert run.submission is None and not Submission.objects.exists()
    assert run.progress_done == 0  # it ended at the first refusal, not after failing every pair


def test_the_cache_file_is_not_read_across_owners_and_ownerless_rows_are_never_served(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    request = {"endpoint": "http://x/v1", "model": MODEL, "messages": [{"role": "user", "content": "q"}]}
    with sqlite3.connect(path) as db:  # a cache file from before owners were kept
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, response TEXT NOT NULL)")
        db.execute("INSERT INTO responses VALUES (?, ?)", (request_key("user:1", request), '{"old": true}'))
    alice, bob = SqliteRequestCache(path, owner="user:1"), SqliteRequestCache(path, owner="user:2")
    assert alice.get(request_key("user:1", request)) is None  # ownerless: never served
    alice.put(request_key("user:1", request), {"text": "A's answer"})
    assert alice.get(request_key("user:1", request)) == {"text": "A's answer"}
    assert request_key("user:2", request) != request_key("user:1", request)
    assert bob.get(request_key("user:2", request)) is None
    assert bob.get(request_key("user:1", request)) is None  # even handed A's key, B's cache does not answer
    assert len(alice) == 1 and len(bob) == 0
    with pytest.raises(ValueError):
        SqliteRequestCache(path, owner="")


def test_run_model_replays_only_its_own_users_answers(two, tmp_path: Path) -> None:  # noqa: ANN001
    benchmark, _, _, key = two
    log = tmp_path / "log.jsonl"

    def run_as(user: str) -> None:
        call_command("run_model", benchmark.slug, "--endpoint", url, "--model", MODEL, "--modes", "text",
                     "--out", str(tmp_path / f"{user}.jsonl"), "--cache", str(tmp_path / "cmd-cache.sqlite3"),
                     "--no-progress", "--user", user, stdout=StringIO())

    with simulated_model(key, log) as url:
        run_as("alice")
        sent = len(log_lines(log))
        run_as("alice")
        assert len(log_lines(log)) == sent > 0  # her re-run replays
        run_as("bob")
        assert len(log_lines(log)) == 2 * sent  # his is sent
    with pytest.raises(CommandError, match="no user named"):
        call_command("run_model", benchmark.slug, "--endpoint", "http://127.0.0.1:9/v1", "--model", MODEL,
                     "--user", "nobody", "--no-progress", stdout=StringIO())
