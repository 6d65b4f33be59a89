"""The sweeper: a router left queued (broker down at upload) or stuck scoring (worker lost) is sent again."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from evaluation.metrics.routing import split_samples
from routers import services
from routers.models import RouterSubmission
from routers.tests import helpers

pytestmark = pytest.mark.django_db
TEST = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")


def upload(benchmark, name: str) -> RouterSubmission:  # noqa: ANN001
    body = "\n".join(f'{{"sample_id": "{u}", "model": "Mid"}}' for u in TEST).encode()
    owner = RouterSubmission._meta.get_field("owner").related_model.objects.get_or_create(username="rita")[0]
    return services.router_submission_create(benchmark=benchmark, owner=owner, file=ContentFile(body, name="r.jsonl"),
                                             name=name, enqueue=False, enforce_limits=False)  # several at once


def test_a_router_left_queued_or_stuck_is_sent_again_and_scored(benchmark, settings):
    settings.SUBMISSION_QUEUED_RESEND_SECONDS = 60
    settings.SUBMISSION_STUCK_SECONDS = 60
    queued, stuck, fresh = upload(benchmark, "queued"), upload(benchmark, "stuck"), upload(benchmark, "fresh")
    old = timezone.now() - timedelta(minutes=5)
    RouterSubmission.objects.filter(pk=queued.pk).update(status_at=old)
    RouterSubmission.objects.filter(pk=stuck.pk).update(status="scoring", status_at=old)
    with mock.patch.object(services, "router_submission_send") as send:
        sent = services.routers_sweep()
    assert sorted(sent) == sorted([queued.pk, stuck.pk]) and send.call_count == 2  # "fresh" is left alone
    assert RouterSubmission.objects.get(pk=stuck.pk).status == "queued"
    # Test settings run the task in-process: the real send scores them.
    RouterSubmission.objects.filter(pk__in=[queued.pk, stuck.pk]).update(status_at=old)
    services.routers_sweep()
    assert set(RouterSubmission.objects.filter(pk__in=[queued.pk, stuck.pk]).values_list("status", flat=True)) == {"done"}
    assert RouterSubmission.objects.get(pk=fresh.pk).status == "queued"


def test_a_reference_router_left_queued_or_stuck_is_sent_again(benchmark, settings):
    from routers.models import RouterReference
    from routers.pool import pool_load

    settings.SUBMISSION_QUEUED_RESEND_SECONDS = 60
    settings.SUBMISSION_STUCK_SECONDS = 60
    pool_load(benchmark)  # queues it; its send (on commit) never runs in this test: as if the broker was down
    ref = RouterReference.objects.get()
    old = timezone.now() - timedelta(minutes=5)
    with mock.patch.object(services, "reference_send") as send:
        services.routers_sweep()
        assert send.call_count == 0  # queued a moment ago: not yet
        RouterReference.objects.filter(pk=ref.pk).update(status="scoring", status_at=old)  # its worker was lost
        services.routers_sweep()
    send.assert_called_once_with(ref.pk)
    RouterReference.objects.filter(pk=ref.pk).update(status_at=old)
    services.routers_sweep()  # test settings: the real send trains it in-process
    ref.refresh_from_db()
    assert ref.status == "done" and ref.picks


def test_a_router_whose_publish_failed_is_sent_by_the_next_sweep_at_once_and_once(benchmark, settings):
    from kombu.exceptions import OperationalError

    from config.celery import task_by_name

    settings.SUBMISSION_QUEUED_RESEND_SECONDS = 3600  # no waiting for the re-send interval: the record is enough
    router = upload(benchmark, "blip")
    task = task_by_name("routers.score")
    with mock.patch.object(task, "apply_async", side_effect=OperationalError("down")):
        services.router_submission_send(router.pk)  # the broker is down when its upload commits
        router.refresh_from_db()
        assert (router.status, router.enqueue_failed) == ("queued", True)
        assert services.routers_sweep() == [router.pk]  # a sweep while it is still down: tried, flagged again
    assert RouterSubmission.objects.get(pk=router.pk).enqueue_failed
    with mock.patch.object(task, "apply_async") as publish:
        assert services.routers_sweep() == [router.pk]  # the first sweep once the broker answers
        assert services.routers_sweep() == []  # never sent twice
    publish.assert_called_once()
    assert RouterSubmission.objects.get(pk=router.pk).enqueue_failed is False
