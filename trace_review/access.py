"""Who may do what with trace review, on top of the workbench's per-benchmark roles."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from annotation.models import Benchmark, BenchmarkRole, Role
from annotation.workbench.access import roles_of
from trace_review.models import TraceReviewBatch

User = AbstractBaseUser | AnonymousUser


def can_review_batch(user: User, batch: TraceReviewBatch) -> bool:
    """Annotators and reviewers of the benchmark; when the batch names people, only those (and admins)."""
    roles = roles_of(user, batch.benchmark)
    if not roles & {Role.ANNOTATOR, Role.REVIEWER}:
        return False
    if Role.ADMIN in roles:
        return True
    named = batch.reviewers.all()
    return not named.exists() or named.filter(pk=user.pk).exists()


def can_manage(user: User, benchmark: Benchmark) -> bool:
    """Creating batches and reading the raw verdicts: the benchmark's admins (and superusers)."""
    return Role.ADMIN in roles_of(user, benchmark)


def sees_everything(user: User) -> bool:
    """Staff see agreement over every submission's traces; others over public submissions only."""
    return bool(user.is_authenticated and user.is_staff)


def uses_trace_review(user: User) -> bool:
    """Whom the site's navigation offers "Trace review": the people with a batch open to them (an annotator
    or reviewer of its benchmark, named by it when it names people), a benchmark's admins (who make the
    batches) and superusers. Anyone signed in may open /review/, but for anyone else it lists nothing to do
    (docs/trace_review.md). One query (two for a person without an admin role)."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    roles = BenchmarkRole.objects.filter(user=user)
    if roles.filter(role=Role.ADMIN).exists():
        return True
    takers = roles.filter(role__in=(Role.ANNOTATOR, Role.REVIEWER)).values("benchmark_id")
    return TraceReviewBatch.objects.filter(Q(reviewers=None) | Q(reviewers=user), benchmark_id__in=takers).exists()
