"""Trace review keeps test gold to staff and the benchmark's admins, and private submissions out of
batches (docs/security.md)."""

from __future__ import annotations

from datetime import timedelta

import cv2
import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from annotation.models import Sample, Split
from evaluation.models import Submission
from tests.confidential import gold_in, mark_test_gold
from trace_review import services
from trace_review.models import HumanVerdict, Trace, TraceAssignment
from trace_review.traces import Shape


@pytest.fixture
def batch(world, people):
    mark_test_gold(world.benchmark)
    return services.batch_create(benchmark=world.benchmark, name="Batch one", size=50, submission=world.alpha)


def _assign(trace: Trace, user) -> TraceAssignment:  # noqa: ANN001
    return TraceAssignment.objects.create(trace=trace, reviewer=user, locked_until=timezone.now() + timedelta(hours=1))


def _trace(batch, uid: str) -> Trace:  # noqa: ANN001
    return batch.traces.select_related("sample").get(sample__uid=uid)


def _page(client, user, assignment: TraceAssignment) -> str:  # noqa: ANN001
    client.force_login(user)
    response = client.get(reverse("trace_review:review", args=[assignment.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _frame_size(client, assignment: TraceAssignment) -> tuple[int, int]:  # noqa: ANN001
    response = client.get(reverse("trace_review:frame", args=[assignment.pk]))
    assert response.status_code == 200
    image = cv2.imdecode(np.frombuffer(response.content, np.uint8), cv2.IMREAD_UNCHANGED)
    return image.shape[1], image.shape[0]


def test_an_annotator_sees_no_gold_of_a_test_trace(client, batch, people):
    # s3 is a test sample with a recovery transform (rotate 90), regions, two key steps and a chain.
    trace = _trace(batch, "s3")
    assert trace.sample.split == Split.TEST
    mine = _assign(trace, people["a1"])
    page = _page(client, people["a1"], mine)
    assert gold_in(page) == []  # no answer, key step or reference call
    assert 'class="region"' not in page and "Gold key steps" not in page and "Reference toolchain" not in page
    assert 'id="gold-withheld"' in page and 'name="answer"' in page
    assert 'name="key_step_0"' not in page and 'name="step_0"' not in page  # nothing to judge them by
    assert 'name="call_0"' in page  # the model's own calls are still judged
    # The frame is the image as given (80 x 120), not after the annotated rotation (120 x 80).
    assert _frame_size(client, mine) == (80, 120)


def test_the_benchmark_admin_and_staff_see_the_gold_of_the_same_trace(client, batch, people):
    trace = _trace(batch, "s3")
    for who in ("admin", "staff"):
        mine = _assign(trace, people[who])
        page = _page(client, people[who], mine)
        assert {"GOLD-ANSWER-s3", "GOLD-STEP-s3-0", "GOLD-CHAIN-s3-0"} <= set(gold_in(page)), who
        assert 'class="region"' in page and 'name="key_step_0"' in page
        assert _frame_size(client, mine) == (120, 80), who  # the recovery transform applied
        client.logout()


def test_an_annotator_sees_the_gold_of_a_dev_trace(client, batch, people):
    trace = _trace(batch, "s1")  # dev: public with its answer
    page = _page(client, people["a1"], _assign(trace, people["a1"]))
    sample = Sample.objects.get(pk=trace.sample_id)
    assert f"against the gold “{sample.answer}”" in page and "Gold key steps" in page and 'class="region"' in page


def test_an_annotator_judges_a_test_trace_without_key_step_questions(client, batch, people):
    trace = _trace(batch, "s3")
    mine = _assign(trace, people["a1"])
    client.force_login(people["a1"])
    response = client.post(reverse("trace_review:review", args=[mine.pk]),
                           {"answer": "1", "call_0": "1", "call_1": "0", "then": "stay"})
    assert response.status_code == 302
    verdict = HumanVerdict.objects.get(reviewer=people["a1"])
    assert (verdict.key_steps, verdict.calls, verdict.step_scores) == ([], [True, False], [])


def test_a_stratified_batch_leaves_private_submissions_out(world, people):
    Submission.objects.filter(pk=world.beta.pk).update(is_public=False)
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=50)
    assert set(batch.traces.values_list("submission_id", flat=True)) == {world.alpha.pk}


def test_a_batch_over_one_private_submission_is_refused(client, world, people):
    Submission.objects.filter(pk=world.beta.pk).update(is_public=False)
    world.beta.refresh_from_db()
    with pytest.raises(ValidationError, match="private"):
        services.batch_create(benchmark=world.benchmark, name="b", size=5, submission=world.beta)
    client.force_login(people["admin"])
    queue = client.get(reverse("trace_review:queue")).content.decode()
    assert f"(#{world.alpha.pk})" in queue and f"(#{world.beta.pk})" not in queue


@pytest.mark.parametrize("gone", [{"is_public": False}, {"status": "failed"}, {"deleted_at": "2026-01-01T00:00Z"}],
                         ids=["unpublished", "failed on re-score", "deleted"])
def test_traces_of_a_submission_that_leaves_the_board_close(client, world, people, gone):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=50, submission=world.alpha)
    mine = services.trace_claim_next(user=people["a1"], batch=batch)
    Submission.objects.filter(pk=world.alpha.pk).update(**gone)
    client.force_login(people["a1"])
    assert client.get(reverse("trace_review:review", args=[mine.pk])).status_code == 404
    assert client.get(reverse("trace_review:frame", args=[mine.pk])).status_code == 404
    assert services.trace_claim_next(user=people["a2"], batch=batch) is None


def test_the_shape_without_gold_has_no_key_steps(batch):
    from trace_review.traces import trace_view

    trace = _trace(batch, "s3")
    assert trace_view(trace, gold=False, run=False).shape == Shape(n_key_steps=0, n_calls=2, n_steps=0)
    assert trace_view(trace, gold=True, run=False).shape.n_key_steps == 2
