"""Batches, the queue's assignment with soft locks, and verdicts, against the real pipeline's rows."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from evaluation.models import PredictionResult
from trace_review import services
from trace_review.models import HumanVerdict, Trace, TraceAssignmentStatus
from trace_review.traces import Shape, trace_view


def test_a_stratified_batch_gives_each_submission_an_equal_share_spread_over_domains(world):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=6, seed=3)
    traces = list(batch.traces.select_related("sample__category__domain"))
    assert Counter(t.submission_id for t in traces) == {world.alpha.pk: 3, world.beta.pk: 3}
    for sub in (world.alpha, world.beta):  # three domains in the hand-made benchmark: one trace each
        domains = [t.sample.category.domain.slug for t in traces if t.submission_id == sub.pk]
        assert sorted(domains) == ["math", "ocr", "real_world"]
    again = services.batch_create(benchmark=world.benchmark, name="again", size=6, seed=3)
    assert [(t.submission_id, t.sample_id) for t in again.traces.all()] == [(t.submission_id, t.sample_id) for t in traces]


def test_a_submission_batch_takes_only_that_submission_and_stops_at_what_exists(world):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=50, submission=world.alpha)
    assert set(batch.traces.values_list("submission_id", flat=True)) == {world.alpha.pk}
    assert batch.traces.count() == PredictionResult.objects.filter(submission=world.alpha, mode="adaptive").count()


def test_a_batch_without_traces_in_that_mode_is_refused(world):
    with pytest.raises(ValidationError):
        services.batch_create(benchmark=world.benchmark, name="b", size=5, submission=world.beta, mode="oracle")


def test_each_trace_goes_to_n_different_people_and_no_one_twice(world, people):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=2, people_per_trace=2,
                                  submission=world.alpha)
    first = services.trace_claim_next(user=people["a1"], batch=batch)
    # Asking again before finishing gives the same unfinished trace back.
    assert services.trace_claim_next(user=people["a1"], batch=batch).pk == first.pk
    # The second person is sent to the trace that already has someone, so it completes sooner.
    second = services.trace_claim_next(user=people["a2"], batch=batch)
    assert second.trace_id == first.trace_id
    third = services.trace_claim_next(user=people["a3"], batch=batch)
    assert third.trace_id != first.trace_id
    _finish(first)
    # a1 finished their trace: the next one for them is the other trace, never the same one again.
    nxt = services.trace_claim_next(user=people["a1"], batch=batch)
    assert nxt.trace_id == third.trace_id
    _finish(second), _finish(third), _finish(nxt)
    assert services.trace_claim_next(user=people["rev"], batch=batch) is None  # both traces have their two people


def test_an_expired_lock_frees_the_slot_and_skip_is_not_offered_again(world, people):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=1, people_per_trace=1,
                                  submission=world.alpha)
    held = services.trace_claim_next(user=people["a1"], batch=batch)
    assert services.trace_claim_next(user=people["a2"], batch=batch) is None
    later = timezone.now() + services.lock_duration() + timedelta(minutes=1)
    taken = services.trace_claim_next(user=people["a2"], batch=batch, now=later)
    assert taken is not None and taken.trace_id == held.trace_id
    services.trace_skip(assignment=taken)
    assert services.trace_claim_next(user=people["a2"], batch=batch, now=later) is None


def _finish(assignment) -> None:
    view = trace_view(assignment.trace, gold=True, run=False)
    s = view.shape
    services.verdict_save(assignment=assignment, shape=s, answer_correct=True, key_steps=[True] * s.n_key_steps,
                          calls=[True] * s.n_calls, step_scores=[1.0] * s.n_steps)


def test_a_verdict_must_answer_every_question_in_the_trace_shape(world, people):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=1, submission=world.alpha)
    assignment = services.trace_claim_next(user=people["a1"], batch=batch)
    shape = Shape(n_key_steps=2, n_calls=1, n_steps=2)
    ok = {"answer_correct": True, "key_steps": [True, False], "calls": [False], "step_scores": [1.0, 0.5]}
    for bad in ({"answer_correct": None}, {"key_steps": [True]}, {"calls": [None]}, {"step_scores": [1.0, 0.7]}):
        with pytest.raises(ValidationError):
            services.verdict_save(assignment=assignment, shape=shape, **{**ok, **bad})
    assert not HumanVerdict.objects.exists()
    services.verdict_save(assignment=assignment, shape=shape, **ok, comment=" zoom was fine ")
    services.verdict_save(assignment=assignment, shape=shape, **{**ok, "answer_correct": False})  # replaces theirs
    verdict = HumanVerdict.objects.get()
    assert verdict.reviewer == people["a1"] and verdict.answer_correct is False
    assert verdict.step_scores == [1.0, 0.5] and verdict.created_at <= verdict.updated_at
    assignment.refresh_from_db()
    assert assignment.status == TraceAssignmentStatus.DONE


def test_the_trace_shape_follows_the_prediction_and_the_gold(world):
    batch = services.batch_create(benchmark=world.benchmark, name="b", size=50, submission=world.alpha)
    s1 = Trace.objects.get(batch=batch, sample__uid="s1")  # rotate, zoom, then a thought; two key steps
    view = trace_view(s1, gold=True)
    assert view.shape == Shape(n_key_steps=2, n_calls=2, n_steps=3)
    assert [s["tool"]["name"] for s in view.steps if s.get("tool")] == ["rotate", "zoom_in"]
    assert all(s["run"]["image"] for s in view.steps if s.get("tool"))  # both calls re-ran through the registry
    assert view.final_answer == "1" and view.key_steps == ["Rotate the image upright.", "Count the squares."]
    s2 = Trace.objects.get(batch=batch, sample__uid="s2")  # answered without tools
    assert trace_view(s2, gold=True).shape == Shape(n_key_steps=2, n_calls=0, n_steps=0)
