"""The staff button's stability run done by a REAL Celery worker (the pipeline's queue), against the
worker tests' OpenAI-compatible server: the run is stored, every repeat was really asked."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from evaluation.models import JudgeVerdict
from evaluation.tests.test_worker_integration import (  # noqa: F401 - fixtures
    bench,
    create,
    judge_server,
    owner,
    start_worker,
    status_of,
    wait_for,
)
from trace_review.models import JudgeRepeatVerdict, JudgeStabilityRun

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_button_queues_a_run_that_a_worker_does(bench, owner, start_worker, judge_server, settings,  # noqa: F811
                                                    client) -> None:
    server = judge_server(flaky=False)
    worker = start_worker(**server.env)
    settings.JUDGE_OPENAI_BASE_URL = server.env["JUDGE_OPENAI_BASE_URL"]  # the page's process: not offline
    sub = create(bench, owner)
    wait_for(lambda: status_of(sub) == "done", worker, "the submission scored")
    cached = list(JudgeVerdict.objects.order_by("pk").values_list("input_hash", "verdict", "created"))
    asked = len(server.questions)

    staff = get_user_model().objects.create_user("sam", "sam@example.org", "pw", is_staff=True)
    client.force_login(staff)
    response = client.post(reverse("trace_review:stability_start"),
                           {"benchmark": bench.slug, "sample": "5", "repeats": "3", "seed": "2"}, follow=True)
    assert "Stability run queued" in response.content.decode()
    wait_for(lambda: JudgeStabilityRun.objects.exists(), worker, "the stability run stored")
    run = JudgeStabilityRun.objects.get()
    assert (run.judge, run.sample_size, run.repeats, run.seed, run.started_by) == (
        "openai:fake-judge", 5, 3, 2, staff)
    assert JudgeRepeatVerdict.objects.filter(run=run).count() == 15
    assert len(server.questions) - asked == 15  # 5 questions x 3 repeats, none from the cache
    assert list(JudgeVerdict.objects.order_by("pk").values_list("input_hash", "verdict", "created")) == cached
    page = client.get(reverse("trace_review:agreement") + f"?benchmark={bench.slug}").content.decode()
    assert "5 questions × 3 repeats, seed 2" in page
