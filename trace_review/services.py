"""Writes: batches of traces, the review queue with soft locks, and human verdicts."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from itertools import zip_longest

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from annotation.models import Benchmark
from evaluation.models import PredictionResult, Submission, on_board_q
from trace_review.models import (
    HumanVerdict,
    Trace,
    TraceAssignment,
    TraceAssignmentStatus,
    TraceReviewBatch,
)
from trace_review.traces import Shape

STEP_SCORES = (0.0, 0.5, 1.0)


def lock_duration() -> timedelta:
    return timedelta(minutes=getattr(settings, "TRACE_REVIEW_LOCK_MINUTES", 30))


def _interleave(groups: Iterable[Sequence]) -> list:
    """Round-robin over the groups: one from each in turn, so every group gets its share."""
    return [x for round_ in zip_longest(*groups) for x in round_ if x is not None]


def _draw(rows: list[dict], *, rng: random.Random) -> list[dict]:
    """One submission's candidate traces, shuffled within each domain, then taken domain by domain."""
    by_domain: dict[str, list[dict]] = {}
    for row in rows:
        by_domain.setdefault(row["domain"], []).append(row)
    for key in sorted(by_domain):
        rng.shuffle(by_domain[key])
    return _interleave([by_domain[k] for k in sorted(by_domain)])


def reviewable_submissions(benchmark: Benchmark) -> QuerySet[Submission]:
    """Scored, published, not deleted: people only ever see public submissions' predictions (docs/security.md)."""
    return Submission.objects.filter(on_board_q(), benchmark=benchmark)


def batch_create(
    *,
    benchmark: Benchmark,
    name: str,
    size: int,
    people_per_trace: int = 2,
    mode: str = "adaptive",
    submission: Submission | None = None,
    seed: int = 0,
    created_by: AbstractBaseUser | None = None,
    reviewers: Sequence[AbstractBaseUser] = (),
) -> TraceReviewBatch:
    """A batch over one submission's traces, or a stratified sample across the benchmark's scored ones.

    Stratified: every scored, public, not deleted submission gets an equal share (round-robin, so a
    submission with too few traces leaves its share to the others), and within a submission the
    traces are spread over the domains. The same seed gives the same traces.
    """
    batch = TraceReviewBatch(benchmark=benchmark, name=name, size=size, people_per_trace=people_per_trace,
                             mode=mode, submission=submission, seed=seed, created_by=created_by)
    batch.full_clean()
    if submission is not None and submission.benchmark_id != benchmark.pk:
        raise ValidationError({"submission": "This submission is not on this benchmark."})
    if submission is not None and not submission.is_public:
        raise ValidationError({"submission": "This submission is private: its predictions are its owner's until "
                                             "they publish it."})
    subs = reviewable_submissions(benchmark)
    if submission is not None:
        subs = subs.filter(pk=submission.pk)
    rows = list(PredictionResult.objects.filter(submission__in=subs, mode=mode)
                .values("submission_id", "sample_id", domain=F("sample__category__domain__slug"))
                .order_by("submission_id", "sample__position", "sample_id"))
    if not rows:
        raise ValidationError("No scored traces in this mode to review.")
    rng = random.Random(seed)
    per_sub: dict[int, list[dict]] = {}
    for row in rows:
        per_sub.setdefault(row["submission_id"], []).append(row)
    chosen = _interleave([_draw(per_sub[k], rng=rng) for k in sorted(per_sub)])[:size]
    with transaction.atomic():
        batch.save()
        if reviewers:
            batch.reviewers.set(reviewers)
        Trace.objects.bulk_create([
            Trace(batch=batch, submission_id=r["submission_id"], sample_id=r["sample_id"], mode=mode, position=i)
            for i, r in enumerate(chosen)
        ])
    return batch


def _live(now: datetime) -> Q:
    return Q(assignments__status=TraceAssignmentStatus.DONE) | Q(
        assignments__status=TraceAssignmentStatus.ACTIVE, assignments__locked_until__gt=now)


def trace_assignment_touch(*, assignment: TraceAssignment, now: datetime | None = None) -> None:
    now = now or timezone.now()
    if assignment.status == TraceAssignmentStatus.ACTIVE:
        assignment.locked_until = now + lock_duration()
        assignment.save(update_fields=["locked_until", "updated_at"])


def trace_claim_next(*, user: AbstractBaseUser, batch: TraceReviewBatch,
                     now: datetime | None = None) -> TraceAssignment | None:
    """The person's unfinished trace first, else a trace with a free slot that they have not seen.

    A slot is held by a done assignment or an active one whose lock has not run out. Traces that
    already have people come first, so traces complete (and count for agreement) sooner.
    """
    now = now or timezone.now()
    with transaction.atomic():
        own = (TraceAssignment.objects.select_for_update()
               .filter(reviewer=user, trace__batch=batch, status=TraceAssignmentStatus.ACTIVE)
               .order_by("created_at", "pk").first())
        if own is not None:
            trace_assignment_touch(assignment=own, now=now)
            return own
        # Serialises claims on one batch, so two people cannot both take a trace's last slot.
        TraceReviewBatch.objects.select_for_update().filter(pk=batch.pk).first()
        trace = (Trace.objects.filter(on_board_q("submission__"), batch=batch)
                 .exclude(assignments__reviewer=user)
                 .annotate(held=Count("assignments", filter=_live(now)))
                 .filter(held__lt=batch.people_per_trace)
                 .order_by("-held", "position").first())
        if trace is None:
            return None
        return TraceAssignment.objects.create(trace=trace, reviewer=user, locked_until=now + lock_duration())


def trace_skip(*, assignment: TraceAssignment) -> TraceAssignment:
    """Give the slot back; the trace is not offered to this person again."""
    if assignment.status == TraceAssignmentStatus.ACTIVE:
        assignment.status = TraceAssignmentStatus.SKIPPED
        assignment.save(update_fields=["status", "updated_at"])
    return assignment


def _bools(values: Sequence, n: int, what: str) -> list[bool]:
    if len(values) != n or any(v not in (True, False) for v in values):
        raise ValidationError({what: f"Expected {n} yes/no verdicts, got {list(values)!r}."})
    return [bool(v) for v in values]


def verdict_save(
    *,
    assignment: TraceAssignment,
    shape: Shape,
    answer_correct: bool | None,
    key_steps: Sequence,
    calls: Sequence,
    step_scores: Sequence,
    comment: str = "",
) -> HumanVerdict:
    """Store one person's verdict on their trace (again: replaces theirs) and finish the assignment.

    Every question must be answered: a half-filled verdict would count as a different shape from
    the judge's and could not be compared.
    """
    if assignment.status == TraceAssignmentStatus.SKIPPED:
        raise ValidationError("This trace was skipped; it is no longer yours to judge.")
    if answer_correct not in (True, False):
        raise ValidationError({"answer_correct": "Say whether the final answer is correct."})
    scores = [float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else s for s in step_scores]
    if len(scores) != shape.n_steps or any(s not in STEP_SCORES for s in scores):
        raise ValidationError({"step_scores": f"Expected {shape.n_steps} scores of 1, 0.5 or 0."})
    fields = {"answer_correct": bool(answer_correct), "key_steps": _bools(key_steps, shape.n_key_steps, "key_steps"),
              "calls": _bools(calls, shape.n_calls, "calls"), "step_scores": scores, "comment": comment.strip()}
    with transaction.atomic():
        verdict, _ = HumanVerdict.objects.update_or_create(trace=assignment.trace, reviewer=assignment.reviewer,
                                                          defaults=fields)
        if assignment.status != TraceAssignmentStatus.DONE:
            assignment.status = TraceAssignmentStatus.DONE
            assignment.save(update_fields=["status", "updated_at"])
    return verdict
