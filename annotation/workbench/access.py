"""Who may do what, per benchmark. Superusers act as admin of every benchmark."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotation.models import AnnotationStatus, Benchmark, BenchmarkRole, Role, Sample, Split

User = AbstractBaseUser | AnonymousUser


def roles_of(user: User, benchmark: Benchmark) -> set[str]:
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return {Role.ADMIN, Role.REVIEWER, Role.ANNOTATOR}
    roles = set(BenchmarkRole.objects.filter(user=user, benchmark=benchmark).values_list("role", flat=True))
    if Role.ADMIN in roles:  # an admin may do everything on their benchmark
        roles |= {Role.REVIEWER, Role.ANNOTATOR}
    return roles


def uses_workbench(user: User) -> bool:
    """Whom the site's navigation offers "Annotate": people with a role on a benchmark, and superusers. Anyone
    signed in may open /annotate/, but without a role it only says that roles are given per benchmark."""
    if not user.is_authenticated:
        return False
    return user.is_superuser or BenchmarkRole.objects.filter(user=user).exists()


def can_annotate(user: User, benchmark: Benchmark) -> bool:
    return Role.ANNOTATOR in roles_of(user, benchmark)


def can_review(user: User, benchmark: Benchmark) -> bool:
    return Role.REVIEWER in roles_of(user, benchmark)


def sees_test_gold(user: User, benchmark: Benchmark) -> bool:
    """Test-split answers, regions, transforms, key steps and toolchains: staff and the benchmark's
    admins (who own its gold) only. Reviewers see the gold of the samples they review, on the review
    page alone (docs/security.md)."""
    return bool(user.is_authenticated and (user.is_staff or Role.ADMIN in roles_of(user, benchmark)))


def sees_gold(user: User, sample: Sample) -> bool:
    """Dev answers are public; test answers need ``sees_test_gold``."""
    return sample.split == Split.DEV or sees_test_gold(user, sample.benchmark)


def can_review_sample(user: User, sample: Sample) -> bool:
    """A reviewer opens a sample's review page (with its gold) and its images when the sample is
    under review: it has a person's annotation past draft. Dev samples, and anyone who sees test
    gold, need no such reason. So a reviewer sees the test gold of the items they review, one at a
    time, not of the whole test split (docs/security.md)."""
    if not can_review(user, sample.benchmark):
        return False
    if sees_gold(user, sample):
        return True
    return sample.annotations.filter(annotator__isnull=False).exclude(status=AnnotationStatus.DRAFT).exists()


def export_splits(user: User, benchmark: Benchmark) -> list[str] | None:
    """The splits a person's export of the benchmark holds: every split (None) for staff and the
    benchmark's admins, the dev split for reviewers (an export is every answer at once)."""
    return None if sees_test_gold(user, benchmark) else [Split.DEV]


def role_grant(*, benchmark: Benchmark, user: AbstractBaseUser, role: str) -> BenchmarkRole:
    grant, _ = BenchmarkRole.objects.get_or_create(benchmark=benchmark, user=user, role=Role(role))
    return grant
