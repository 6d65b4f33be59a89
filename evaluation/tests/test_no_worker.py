"""When no worker serves the pipeline's queue (evaluation/worker_beats.py, selectors.pipeline_silence): the
submission's page (and its polled fragment), the API and the staff health page say that nothing can
progress, and since when; reading them writes nothing. The first tests run with no worker at all; the
last starts a real one and stops it."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluation import services
from evaluation.models import WorkerBeat
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload
from evaluation.tests.test_worker_integration import (  # noqa: F401 - fixtures
    owner,
    start_worker,
    wait_for,
)

NOTE = "No worker of the scoring pipeline has been seen"
WRITES = ("INSERT", "UPDATE", "DELETE")


def queued(tmp_path, owner):  # noqa: ANN001, ANN201, F811
    return services.submission_create(benchmark=make_benchmark(tmp_path), owner=owner, file=upload(good_file()),
                                      model_name="m1", enforce_limits=False, enqueue=False)


def read_everything(client, api: APIClient, staff, sub) -> dict[str, str]:  # noqa: ANN001
    """The page, its polled fragment, the API and the health page, as their readers get them; no writes."""
    with CaptureQueriesContext(connection) as queries:
        client.force_login(sub.owner)
        out = {"page": client.get(f"/submissions/{sub.pk}/").content.decode(),
               "fragment": client.get(f"/submissions/{sub.pk}/", HTTP_HX_REQUEST="true").content.decode(),
               "api": api.get(f"/api/v1/submissions/{sub.pk}/").json()}
        client.force_login(staff)
        out["health"] = client.get("/submissions/health/").content.decode()
    writes = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)
              and "django_session" not in q["sql"] and "last_login" not in q["sql"]]  # force_login's own
    assert writes == []
    return out


@pytest.mark.django_db
def test_with_no_worker_ever_the_page_the_api_and_the_health_page_say_nothing_can_progress(
        client, tmp_path, owner, settings) -> None:  # noqa: F811
    sub = queued(tmp_path, owner)
    staff = get_user_model().objects.create_user("boss", is_staff=True)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    seen = read_everything(client, api, staff, sub)
    assert f"{NOTE} yet: nothing can move a submission on until one is started" in seen["page"]
    assert NOTE in seen["fragment"] and 'hx-trigger="every 1s"' in seen["fragment"]  # the poll shows it too
    assert seen["api"]["status"] == "queued"
    assert seen["api"]["no_worker"]["message"].startswith(f"{NOTE} yet")
    assert seen["api"]["no_worker"]["last_worker_seen_at"] is None
    health = seen["health"]
    assert NOTE in health
    assert f"#{sub.pk}</a> m1 on tiny (ada): queued" in health  # the oldest waiting submission
    assert "Messages waiting" in health  # the queue's depth

    # A worker beat a moment ago: nothing to say. It falls silent: after WORKER_SILENT_SECONDS, the note.
    settings.WORKER_SILENT_SECONDS = 120
    WorkerBeat.objects.create(worker="pipeline@host", queue=settings.SUBMISSIONS_QUEUE, seen_at=timezone.now())
    WorkerBeat.objects.create(worker="sweeper@host", queue=settings.SUBMISSIONS_SWEEP_QUEUE, seen_at=timezone.now())
    seen = read_everything(client, api, staff, sub)
    assert NOTE not in seen["page"] and seen["api"]["no_worker"] is None
    assert "sent its heartbeat within the last 120 s" in seen["health"]
    WorkerBeat.objects.filter(worker="pipeline@host").update(seen_at=timezone.now() - timedelta(minutes=15))
    seen = read_everything(client, api, staff, sub)
    assert f"{NOTE} for 15 minutes" in seen["page"]  # a sweeper's heartbeat alone does not count
    assert seen["api"]["no_worker"]["silent_seconds"] >= 900
    assert f"{NOTE} for 15 minutes" in seen["health"]

    services.submission_fail(submission_id=sub.pk, reason="gone")  # a finished submission needs no worker
    client.force_login(owner)
    assert NOTE not in client.get(f"/submissions/{sub.pk}/").content.decode()
    assert api.get(f"/api/v1/submissions/{sub.pk}/").json()["no_worker"] is None


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_running_worker_keeps_the_note_away_and_once_it_stops_the_page_says_so_within_the_set_time(
        client, tmp_path, owner, start_worker, settings) -> None:  # noqa: F811
    settings.WORKER_SILENT_SECONDS = 3
    sub = queued(tmp_path, owner)  # never sent: it waits, queued, whatever the worker does
    client.force_login(owner)

    def note() -> bool:
        return NOTE in client.get(f"/submissions/{sub.pk}/", HTTP_HX_REQUEST="true").content.decode()

    assert note()
    worker = start_worker(queues=settings.SUBMISSIONS_QUEUE, beat=False, WORKER_HEARTBEAT_SECONDS="1")
    wait_for(lambda: not note(), worker, "the worker's heartbeat to clear the note")
    worker.kill()
    stopped = time.monotonic()
    wait_for(note, worker, "the note", timeout=settings.WORKER_SILENT_SECONDS + 5)
    said = time.monotonic() - stopped
    print(f"\nno worker: the page said so {said:.1f} s after the worker stopped "
          f"(WORKER_SILENT_SECONDS={settings.WORKER_SILENT_SECONDS})")
    assert said >= settings.WORKER_SILENT_SECONDS - 1.5  # not before the set time (heartbeat every 1 s)
    restarted = start_worker(queues=settings.SUBMISSIONS_QUEUE, beat=False, WORKER_HEARTBEAT_SECONDS="1")
    wait_for(lambda: not note(), restarted, "the note to go once a worker is back")
