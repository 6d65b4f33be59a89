"""Hosted runs (evaluation/hosted_runs.py, the runs API): against the simulated model in its own
process, with the real registry and images. The run reaches done and its row is marked; a private
address is refused when the deployment does not allow it; the key is never returned nor stored in
clear; a cancel and a budget stop end the run cleanly."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from evaluation import hosted_runs
from evaluation.models import HostedRun, Submission
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import log_lines, simulated_model
from evaluation.tests.submission_helpers import SLUG, make_benchmark

pytestmark = pytest.mark.django_db
SECRET = "sk-test-7f3a9c-the-plain-key"


@pytest.fixture
def setup(tmp_path: Path, settings):  # noqa: ANN001, ANN201
    settings.RUNS_CACHE_PATH = tmp_path / "cache.sqlite3"
    benchmark = make_benchmark(tmp_path / "bench")
    user = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    client = APIClient()
    client.force_authenticate(user)
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    return benchmark, user, client, key


def _post(client: APIClient, url: str, **extra: object):  # noqa: ANN202
    body = {"endpoint": url, "model": "sim-hosted", "api_key": SECRET, "modes": "text,adaptive",
            "model_name": "Hosted sim", "public": True, "price_input_per_mtok": 0.5, "price_output_per_mtok": 1.5,
            **extra}
    return client.post(f"/api/v1/benchmarks/{SLUG}/runs/", body, format="json")


def _execute(run_id: int, django_capture_on_commit_callbacks) -> HostedRun:  # noqa: ANN001
    with django_capture_on_commit_callbacks(execute=True):  # the submission is scored in place (eager)
        hosted_runs.run_execute(run_id=run_id)
    return HostedRun.objects.get(pk=run_id)


def test_a_run_posted_through_the_api_reaches_done_as_a_submission_marked_run(
        setup, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, _, client, key = setup
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log, "--served-model", "sim-hosted-v2") as url:
        with django_capture_on_commit_callbacks(execute=False):  # no worker here: this test runs it
            response = _post(client, url)
        assert response.status_code == 202, response.content
        body = response.json()
        assert body["estimate"]["pairs"] == 12 and body["url"].endswith(f"/api/v1/runs/{body['id']}/")
        run = _execute(body["id"], django_capture_on_commit_callbacks)
    assert run.status == "done", run.failure_reason
    assert run.progress_done == 12 and run.requests_sent == len(log_lines(log)) > 0
    sub = run.submission
    assert sub is not None and sub.status == "done" and sub.is_public
    assert sub.provenance == "run" and sub.model_name == "Hosted sim"
    record = sub.run_record
    assert record["model_ids"] == ["sim-hosted-v2"] and record["declared_model"] == "sim-hosted"
    assert record["prompt_versions"] == {"text": "generic.text.v1", "adaptive": "generic.adaptive.v1"}
    assert record["sampling"] == {"temperature": 0.0, "max_tokens": 1024, "seed": 0}
    # The protocol it ran under: the version the protocol page states, and where (docs/runs.md).
    page = client.get(record["protocol_page"]).content.decode()
    assert record["protocol_page"] == f"/b/{SLUG}/protocol/"
    assert f"Protocol version <code>{record['protocol_version']}</code>" in page
    model_page = client.get(f"/b/{SLUG}/m/{sub.pk}/").content.decode()
    assert f"{record['protocol_version']}, stated at /b/{SLUG}/protocol/" in model_page
    detail = client.get(f"/api/v1/runs/{run.pk}/").json()
    assert detail["status"] == "done" and detail["submission"]["id"] == sub.pk
    assert detail["model_ids"] == ["sim-hosted-v2"]
    # On the board: provenance "run" and a digest that verify_row confirms.
    assert len(sub.digest) == 64 and all(c in "0123456789abcdef" for c in sub.digest)
    rows = client.get(f"/b/{SLUG}/leaderboard.json").json()
    rows = rows["rows"] if isinstance(rows, dict) else rows
    row = next(r for r in rows if r.get("model") == "Hosted sim")
    assert row["provenance"] == "run" and row["digest"] == sub.digest
    out = StringIO()
    call_command("verify_row", str(sub.pk), stdout=out)
    assert "ok" in out.getvalue()
    # An uploaded file stays "file": provenance is never the uploader's to set.
    assert Submission.objects.exclude(pk=sub.pk).filter(provenance="run").count() == 0


def test_a_private_address_is_refused_when_the_deployment_does_not_allow_it(setup, settings, tmp_path) -> None:  # noqa: ANN001
    _, _, client, key = setup
    settings.RUNS_ALLOW_PRIVATE_ENDPOINTS = False
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log) as url:
        response = _post(client, url)
    assert response.status_code == 400
    assert "loopback" in response.json()["detail"] and "endpoint" in response.json()["detail"]
    assert not HostedRun.objects.exists() and log_lines(log) == []
    for address in ("http://10.1.2.3/v1", "http://169.254.169.254/latest", "http://[::1]:8000/v1"):
        assert _post(client, address).status_code == 400


def test_the_key_is_never_returned_nor_stored_in_clear_and_is_deleted_when_the_run_ends(
        setup, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, user, client, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        with django_capture_on_commit_callbacks(execute=False):
            created = _post(client, url)
        run_id = created.json()["id"]
        assert SECRET not in created.content.decode()
        listed = client.get("/api/v1/runs/").content.decode() + client.get(f"/api/v1/runs/{run_id}/").content.decode()
        assert SECRET not in listed and '"has_api_key":true' in listed.replace(" ", "")
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {HostedRun._meta.db_table}")
            stored = repr(cursor.fetchall())
        assert SECRET not in stored and HostedRun.objects.get().api_key_encrypted
        run = _execute(run_id, django_capture_on_commit_callbacks)
    assert run.status == "done" and run.api_key_encrypted == ""
    # someone else sees nothing of it
    other = APIClient()
    other.force_authenticate(get_user_model().objects.create_user("eve", "eve@example.org", "pw"))
    assert other.get(f"/api/v1/runs/{run_id}/").status_code == 404
    assert other.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 404


def test_a_kept_endpoint_keeps_its_key_encrypted(setup, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, _, client, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        with django_capture_on_commit_callbacks(execute=False):
            run_id = _post(client, url, keep_endpoint=True, modes="text").json()["id"]
        run = _execute(run_id, django_capture_on_commit_callbacks)
    assert run.status == "done" and run.api_key_encrypted and SECRET not in run.api_key_encrypted
    from evaluation.secrets import decrypt_api_key

    assert decrypt_api_key(run.api_key_encrypted) == SECRET


def test_a_cancelled_run_ends_and_makes_no_submission(setup, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, _, client, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        with django_capture_on_commit_callbacks(execute=False):
            queued = _post(client, url).json()["id"]
            running = _post(client, url, modes="blind").json()["id"]
        # queued, never started: cancelled at once, key gone
        cancelled = client.post(f"/api/v1/runs/{queued}/cancel/").json()
        assert cancelled["status"] == "cancelled" and cancelled["has_api_key"] is False
        # claimed by a worker (simulated): the cancel is read at its next heartbeat
        HostedRun.objects.filter(pk=running).update(status="running", claim_token="w1")
        assert client.post(f"/api/v1/runs/{running}/cancel/").json()["cancel_requested"] is True
        HostedRun.objects.filter(pk=running).update(status="queued", claim_token="")
        run = _execute(running, django_capture_on_commit_callbacks)
    assert run.status == "cancelled" and run.submission is None and "Cancelled" in run.failure_reason
    assert not Submission.objects.exists()


def test_a_budget_stops_the_run_cleanly_and_keeps_what_is_done(
        setup, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, _, client, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        with django_capture_on_commit_callbacks(execute=False):
            run_id = _post(client, url, modes="text", price_input_per_mtok=1000, price_output_per_mtok=1000,
                           budget_usd=2.0, concurrency=1).json()["id"]
        run = _execute(run_id, django_capture_on_commit_callbacks)
    assert run.status == "stopped", run.failure_reason
    assert "budget" in run.failure_reason and 0 < run.progress_done < 6
    assert run.spent_usd <= 2.0 and run.submission is None
    lines = run.predictions.open("rb").read().decode().splitlines()
    assert len(lines) == run.progress_done


def test_the_runs_pages_are_the_owners(setup, client, tmp_path, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, user, api, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url, django_capture_on_commit_callbacks(execute=False):
        run_id = _post(api, url, modes="text").json()["id"]
    client.force_login(user)
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert "Queued" in page and SECRET not in page and "stored encrypted" in page
    assert f'href="/runs/{run_id}/"' in client.get("/runs/").content.decode()
    estimate = client.post("/runs/new/", {"benchmark": SLUG, "endpoint": "http://127.0.0.1:9/v1", "model": "m",
                                          "modes": ["text"], "split": "all", "protocol": "function_calling"},
                           HTTP_HX_REQUEST="true")
    assert "Start the run" in estimate.content.decode() and "6 (sample, mode) pairs" in estimate.content.decode()
    client.logout()
    client.force_login(get_user_model().objects.create_user("eve", "eve@example.org", "pw"))
    assert client.get(f"/runs/{run_id}/").status_code == 404


def test_a_run_posted_while_the_broker_is_down_is_sent_by_the_next_sweep_once(
        setup, tmp_path, django_capture_on_commit_callbacks, settings) -> None:  # noqa: ANN001
    from unittest import mock

    from kombu.exceptions import OperationalError

    from evaluation import tasks

    settings.RUNS_QUEUED_RESEND_SECONDS = 3600  # no waiting for the re-send interval: the record is enough
    _, _, client, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        with (mock.patch.object(tasks.run_execute, "apply_async", side_effect=OperationalError("down")),
              django_capture_on_commit_callbacks(execute=True)):
            response = _post(client, url)
        assert response.status_code == 202  # the run is accepted; its message did not go
        run = HostedRun.objects.get(pk=response.json()["id"])
        assert (run.status, run.enqueue_failed) == ("queued", True)
        with mock.patch.object(tasks.run_execute, "apply_async", side_effect=OperationalError("down")):
            assert hosted_runs.runs_sweep() == {"resent": 0}  # a sweep while the broker is still down
        assert HostedRun.objects.get(pk=run.pk).enqueue_failed  # still to send
        with mock.patch.object(tasks.run_execute, "apply_async") as publish:
            assert hosted_runs.runs_sweep() == {"resent": 1}  # the first sweep once the broker answers
            assert hosted_runs.runs_sweep() == {"resent": 0}  # never sent twice
        publish.assert_called_once()
        assert publish.call_args.kwargs["args"] == [run.pk]
        run = _execute(run.pk, django_capture_on_commit_callbacks)  # the worker takes the message
    assert (run.status, run.enqueue_failed) == ("done", False)


def test_a_run_with_no_answer_makes_no_row_and_a_stopped_runs_file_can_be_downloaded(
        setup, tmp_path, client, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, user, api, key = setup
    uids = [json.loads(line)["uid"] for line in key.read_text().splitlines()]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(dict.fromkeys(uids, "content_filter")))  # failures no retry can change
    with simulated_model(key, tmp_path / "log.jsonl", "--script", str(script)) as url:
        with django_capture_on_commit_callbacks(execute=False):
            run_id = _post(api, url).json()["id"]
        run = _execute(run_id, django_capture_on_commit_callbacks)
    assert run.status == "failed" and run.submission is None and not Submission.objects.exists()
    assert run.failure_reason.startswith("No answer: none of the 12 pairs was answered (12 content_filter)")
    client.force_login(user)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'href="/runs/{run.pk}/file/"' in page and "not scored" in page
    download = client.get(f"/runs/{run.pk}/file/")
    assert download.status_code == 200 and "attachment" in download["Content-Disposition"]
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert len(lines) == 12 and all(json.loads(line)["failure"] == "content_filter" for line in lines)


def test_a_run_waiting_with_no_runs_worker_says_so(setup, client, tmp_path, settings,
                                                   django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    from django.utils import timezone

    from evaluation.models import WorkerBeat

    _, user, api, key = setup
    with simulated_model(key, tmp_path / "log.jsonl") as url, django_capture_on_commit_callbacks(execute=False):
        run_id = _post(api, url).json()["id"]
    client.force_login(user)
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert 'id="no-worker"' in page and "No worker for hosted runs has been seen yet" in page
    assert api.get(f"/api/v1/runs/{run_id}/").json()["no_worker"]["message"].startswith("No worker for hosted runs")
    WorkerBeat.objects.create(worker="w1", queue=settings.RUNS_QUEUE, pid=1, seen_at=timezone.now())
    assert 'id="no-worker"' not in client.get(f"/runs/{run_id}/").content.decode()
    assert api.get(f"/api/v1/runs/{run_id}/").json()["no_worker"] is None


def test_a_provider_down_past_the_patience_stops_the_run_and_a_new_run_finishes_from_the_cache(
        setup, tmp_path, settings, django_capture_on_commit_callbacks) -> None:  # noqa: ANN001
    _, _, client, key = setup
    settings.RUNS_PATIENCE_SECONDS, settings.RUNS_REQUEST_RETRIES = 1, 0
    settings.RUNS_RETRY_BACKOFF_SECONDS, settings.RUNS_RETRY_BACKOFF_MAX_SECONDS = 0.1, 0.2
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log, "--outage", "4:600") as url:  # four answers, then gone
        with django_capture_on_commit_callbacks(execute=False):
            first = _post(client, url, concurrency=1).json()["id"]
        run = _execute(first, django_capture_on_commit_callbacks)
    assert run.status == "stopped" and run.submission is None and not Submission.objects.exists()
    assert "the provider was unavailable" in run.failure_reason and "start it again" in run.failure_reason
    assert run.failures and run.retried  # asked again before the patience ran out
    answered = len(log_lines(log))
    with simulated_model(key, log, "--port", url.split(":")[2].split("/")[0]):  # back, the same endpoint
        with django_capture_on_commit_callbacks(execute=False):
            second = _post(client, url, concurrency=1).json()["id"]
        again = _execute(second, django_capture_on_commit_callbacks)
    assert again.status == "done", again.failure_reason
    assert again.requests_cached >= answered == 4 and again.submission is not None


def test_a_long_run_is_not_cut_by_the_pipelines_time_limit_nor_failed_for_deliveries_that_made_progress(
        setup, settings) -> None:  # noqa: ANN001
    from evaluation import tasks
    from evaluation.harness.runner import Progress

    assert tasks.run_execute.time_limit == settings.RUNS_TASK_TIME_LIMIT > 24 * 3600 > settings.CELERY_TASK_TIME_LIMIT
    benchmark, user, _, _ = setup
    run = HostedRun.objects.create(benchmark=benchmark, owner=user, endpoint="http://127.0.0.1:9/v1", model="m",
                                   modes=["text"], status="running", claim_token="t", attempts=3, progress_done=5,
                                   progress_total=12)
    lease = hosted_runs._Lease(run.pk, "t", run, 0.0)
    lease.report(Progress(total=12, done=5))  # replayed from the cache: nothing new yet
    assert lease.beat() and HostedRun.objects.get(pk=run.pk).attempts == 3
    lease.report(Progress(total=12, done=6))  # a new answer: this delivery made progress
    assert lease.beat() and HostedRun.objects.get(pk=run.pk).attempts == 1
