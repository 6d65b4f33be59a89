"""Reads of the annotation app, with the joins they need."""

from __future__ import annotations

from collections.abc import Collection

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet

from annotation.models import (
    Annotation,
    AnnotationStatus,
    Assignment,
    AssignmentStatus,
    Benchmark,
    ReviewAction,
    ReviewDecision,
    Revision,
    Sample,
)


def scorable_benchmarks() -> QuerySet[Benchmark]:
    """Benchmarks that can score predictions: those with samples. An entry holding only a paper's
    reported results (leaderboard/reported.py) has none, so a submission to it could not be scored."""
    return Benchmark.objects.filter(Exists(Sample.objects.filter(benchmark=OuterRef("pk")))).order_by("name")


def benchmark_scorable(benchmark: Benchmark) -> bool:
    """Whether ``benchmark`` is among ``scorable_benchmarks``: it has a sample (one indexed lookup)."""
    return Sample.objects.filter(benchmark_id=benchmark.pk).exists()


def approved_annotations_for_export(benchmark: Benchmark, splits: Collection[str] | None = None) -> dict[int, Annotation]:
    """Each sample's approved annotation with its regions, key steps and toolchain, by sample id;
    only the samples of ``splits`` when given (a reviewer's export holds the dev split alone)."""
    annotations = Annotation.objects.filter(
        sample__benchmark=benchmark, status=AnnotationStatus.APPROVED
    ).prefetch_related("regions", "key_steps", "tool_calls")
    if splits is not None:
        annotations = annotations.filter(sample__split__in=splits)
    return {a.sample_id: a for a in annotations}



# --- the annotator's workbench -------------------------------------------------------------


def benchmarks_for_user(user: AbstractBaseUser) -> QuerySet[Benchmark]:
    """Benchmarks the person has a role on (every benchmark for a superuser)."""
    qs = Benchmark.objects.all() if user.is_superuser else Benchmark.objects.filter(roles__user=user).distinct()
    return qs.annotate(sample_count=Count("samples", distinct=True)).order_by("name")


def assignments_of(user: AbstractBaseUser, benchmark: Benchmark | None = None) -> QuerySet[Assignment]:
    """A person's assignments; each annotation's rejections (newest first, with their notes) in
    `annotation.rejections`."""
    rejections = Prefetch("annotation__review_decisions", to_attr="rejections",
                          queryset=ReviewDecision.objects.filter(action=ReviewAction.REJECT)
                          .prefetch_related("notes").order_by("-pk"))
    qs = Assignment.objects.filter(annotator=user).select_related("sample__benchmark", "annotation").prefetch_related(rejections)
    if benchmark is not None:
        qs = qs.filter(sample__benchmark=benchmark)
    return qs.order_by("-updated_at")


def assignment_of_annotator(user: AbstractBaseUser, pk: int) -> Assignment | None:
    """The assignment, only when it is this person's (others' work stays invisible)."""
    if not user.is_authenticated:
        return None
    return (
        Assignment.objects.filter(pk=pk, annotator=user)
        .select_related("sample__benchmark", "sample__category__domain", "annotation")
        .first()
    )


def last_rejection(annotation: Annotation) -> ReviewDecision | None:
    """The newest rejection of this annotation, with its notes: what its annotator is asked to fix.
    Read by the annotation's id, so one annotator never sees the notes on another's work."""
    return (ReviewDecision.objects.filter(annotation=annotation, action=ReviewAction.REJECT)
            .prefetch_related("notes").order_by("-pk").first())


def annotation_for_editor(annotation_id: int) -> Annotation:
    return Annotation.objects.prefetch_related("regions", "key_steps", "tool_calls").get(pk=annotation_id)


def benchmark_progress(benchmark: Benchmark) -> dict:
    """Per benchmark: samples, samples with N submitted annotations, reviewed-approved samples;
    per person: their assignments by status."""
    n = benchmark.annotators_per_item
    samples = Sample.objects.filter(benchmark=benchmark).annotate(
        submitted=Count("assignments", filter=Q(assignments__status=AssignmentStatus.SUBMITTED), distinct=True),
        reviewed=Count("annotations", filter=Q(annotations__status=AnnotationStatus.APPROVED,
                                               annotations__annotator__isnull=False), distinct=True),
    )
    totals = samples.aggregate(
        total=Count("pk"), complete=Count("pk", filter=Q(submitted__gte=n)), approved=Count("pk", filter=Q(reviewed__gt=0))
    )
    people = (
        Assignment.objects.filter(sample__benchmark=benchmark)
        .values("annotator__username")
        .annotate(
            active=Count("pk", filter=Q(status=AssignmentStatus.ACTIVE)),
            submitted=Count("pk", filter=Q(status=AssignmentStatus.SUBMITTED)),
            returned=Count("pk", filter=Q(status=AssignmentStatus.RETURNED)),
            skipped=Count("pk", filter=Q(status=AssignmentStatus.SKIPPED)),
            approved=Count("pk", filter=Q(annotation__status=AnnotationStatus.APPROVED)),
        )
        .order_by("annotator__username")
    )
    return {"n": n, **totals, "people": list(people)}


GUESSABLE_FILTERS = {"yes": True, "no": False, "unaudited": None}  # ?guessable= on the review queue


def review_queue(benchmark: Benchmark, *, guessable: str = "") -> QuerySet[Sample]:
    """Samples with work submitted by annotators, the ones not yet reviewed first; ``guessable``
    (a GUESSABLE_FILTERS key, anything else is no filter) keeps one audit outcome."""
    rows = Sample.objects.filter(benchmark=benchmark, annotations__status=AnnotationStatus.SUBMITTED,
                                 annotations__annotator__isnull=False)
    if guessable in GUESSABLE_FILTERS:
        wanted = GUESSABLE_FILTERS[guessable]
        rows = rows.filter(guessable__isnull=True) if wanted is None else rows.filter(guessable=wanted)
    return (
        rows
        .annotate(
            submitted=Count("annotations", filter=Q(annotations__status=AnnotationStatus.SUBMITTED,
                                                    annotations__annotator__isnull=False), distinct=True),
            reviewed=Count("annotations", filter=Q(annotations__status=AnnotationStatus.APPROVED,
                                                   annotations__annotator__isnull=False), distinct=True),
        )
        .select_related("category__domain")
        .order_by("reviewed", "-submitted", "position")
        .distinct()
    )


def annotations_for_review(sample: Sample) -> list[Annotation]:
    """Every non-draft annotation of the sample (the imported one included), with their parts: people's in
    the order they joined, the imported one (no annotator) last on every database (SQLite would sort a
    NULL first, PostgreSQL last)."""
    return list(
        sample.annotations.exclude(status=AnnotationStatus.DRAFT)
        .select_related("annotator", "sample")
        .prefetch_related("regions", "key_steps", "tool_calls", "review_decisions__notes")
        .order_by(F("annotator_id").asc(nulls_last=True), "pk")
    )


def revisions_of(annotation: Annotation) -> QuerySet[Revision]:
    return (Revision.objects.filter(annotation=annotation).select_related("author")
            .prefetch_related("proposal_decisions").order_by("-pk"))


def benchmark_holding(uids: Collection[str], *, besides: Benchmark) -> str | None:
    """The slug of the other benchmark that holds most of ``uids`` (at least half of them), else None:
    a prediction file made for it, uploaded to ``besides`` (evaluation/validation.py names it)."""
    if not uids:
        return None
    wanted = set(uids)
    counts = (Sample.objects.filter(uid__in=wanted).exclude(benchmark=besides).values("benchmark__slug")
              .annotate(n=Count("pk")).order_by("-n", "benchmark__slug"))
    best = counts.first()
    return best["benchmark__slug"] if best is not None and best["n"] * 2 >= len(wanted) else None
