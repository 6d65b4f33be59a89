"""The queue: each annotator's next item, held by a soft lock that expires, and skip.

A sample needs `benchmark.annotators_per_item` independent annotations. A slot is held by an
assignment that is submitted or returned, or active with a lock still running. When a lock runs
out, the slot may go to someone else; the first annotator's draft is kept and they may still
finish it (so a sample can end up with one annotation more than N, which the review handles).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, Value, When
from django.utils import timezone

from annotation.models import (
    Annotation,
    AnnotationStatus,
    Assignment,
    AssignmentStatus,
    Benchmark,
    Sample,
)
from annotation.workbench.proposals import QUEUE_ORDERS, proposal_order_keys


def lock_duration() -> timedelta:
    return timedelta(minutes=getattr(settings, "ANNOTATION_LOCK_MINUTES", 30))


def _live_slot(now: datetime) -> Q:
    return Q(assignments__status__in=[AssignmentStatus.SUBMITTED, AssignmentStatus.RETURNED]) | Q(
        assignments__status=AssignmentStatus.ACTIVE, assignments__locked_until__gt=now
    )


def assignment_create(*, sample: Sample, annotator: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Give `sample` to `annotator` with a blank draft (idempotent: returns the existing one).

    The draft starts from the sample's question and options but with no answer, boxes, steps or
    chain: annotators work independently, and the imported annotation is not shown to them.
    """
    now = now or timezone.now()
    existing = Assignment.objects.filter(sample=sample, annotator=annotator).select_related("annotation").first()
    if existing is not None:
        return existing
    with transaction.atomic():
        annotation = Annotation.objects.create(
            sample=sample, annotator=annotator, status=AnnotationStatus.DRAFT,
            question=sample.question, options=sample.options, answer_type=sample.answer_type,
        )  # fmt: skip
        return Assignment.objects.create(
            sample=sample, annotator=annotator, annotation=annotation, locked_until=now + lock_duration()
        )


def assignment_claim_next(*, user: AbstractBaseUser, benchmark: Benchmark, now: datetime | None = None,
                          after: int | None = None, order: str = "") -> Assignment | None:
    """The person's next item: a returned or unfinished one of theirs first, else a new sample
    with a free slot (samples that already have annotators first, so items complete sooner).
    ``after`` ("Save and next" on an item) passes over that assignment, which stays theirs. ``order``
    (proposals.QUEUE_ORDERS): new samples by a model's proposals first, the least confident or the most
    disputed between two models, then as usual; samples without such proposals after them."""
    now = now or timezone.now()
    with transaction.atomic():
        own = (
            Assignment.objects.select_for_update()
            .filter(annotator=user, sample__benchmark=benchmark, status__in=[AssignmentStatus.RETURNED, AssignmentStatus.ACTIVE])
            .exclude(pk=after)
            .annotate(returned_first=Case(When(status=AssignmentStatus.RETURNED, then=Value(0)), default=Value(1),
                                          output_field=IntegerField()))
            .order_by("returned_first", "created_at", "pk")
            .first()
        )  # fmt: skip
        if own is not None:
            assignment_touch(assignment=own, now=now)
            return own
        # Serialises claims on one benchmark, so two people cannot both take a sample's last slot.
        Benchmark.objects.select_for_update().filter(pk=benchmark.pk).first()
        reviewed = Annotation.objects.filter(
            sample=OuterRef("pk"), status=AnnotationStatus.APPROVED, annotator__isnull=False
        )
        free = (
            Sample.objects.filter(benchmark=benchmark)
            .exclude(assignments__annotator=user)  # skipped ones too: skip means "not for me"
            .exclude(Exists(reviewed))  # approved by a review: done (an imported approval is not)
            .annotate(live=Count("assignments", filter=_live_slot(now), distinct=True))
            .filter(live__lt=benchmark.annotators_per_item)
            .order_by("-live", "position", "pk")
        )
        if order in QUEUE_ORDERS and order:
            ids = list(free.values_list("pk", flat=True))  # in the usual order: the tie-break
            keys = proposal_order_keys(ids, order)
            ranked = sorted(range(len(ids)), key=lambda i: (ids[i] not in keys, keys.get(ids[i], 0.0), i))
            sample = Sample.objects.filter(pk=ids[ranked[0]]).first() if ids else None
        else:
            sample = free.first()
        if sample is None:
            return None
        return assignment_create(sample=sample, annotator=user, now=now)


def assignment_touch(*, assignment: Assignment, now: datetime | None = None) -> None:
    """Renew the soft lock while the annotator works (opening the page, every save)."""
    if assignment.status not in (AssignmentStatus.ACTIVE, AssignmentStatus.RETURNED):
        return
    assignment.locked_until = (now or timezone.now()) + lock_duration()
    assignment.save(update_fields=["locked_until", "updated_at"])


def assignment_skip(*, assignment: Assignment) -> None:
    """Give the slot back; the sample is not offered to this person again."""
    if assignment.status != AssignmentStatus.ACTIVE:
        return
    assignment.status = AssignmentStatus.SKIPPED
    assignment.locked_until = None
    assignment.save(update_fields=["status", "locked_until", "updated_at"])
