"""Reads of the evaluation app, with the joins they need.

``prediction_results_for`` gives a submission's per-prediction rows, dev split only for anyone but
staff (test correctness stays hidden). The leaderboard's submissions are ``Submission.objects.on_board()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Max, Q, QuerySet, Sum
from django.utils import timezone

from annotation.models import (
    Annotation,
    AnnotationStatus,
    Benchmark,
    Category,
    KeyStep,
    ReferenceToolCall,
    Region,
    Sample,
    SampleMedia,
    Split,
)
from evaluation.converters import BenchmarkContext
from evaluation.models import ACTIVE_STATUSES, HostedRun, PredictionResult, Submission, SubmissionStatus, WorkerBeat

User = AbstractBaseUser | AnonymousUser


def submission_visible_to(*, user: User, submission_id: int) -> Submission | None:
    """The submission if ``user`` may see its private details (owner or staff), else None."""
    if not user.is_authenticated:
        return None
    qs = Submission.objects.select_related("benchmark", "owner").filter(pk=submission_id, deleted_at__isnull=True)
    if not user.is_staff:
        qs = qs.filter(owner=user)
    return qs.first()


def submissions_of(*, user: User) -> QuerySet[Submission]:
    return Submission.objects.select_related("benchmark").filter(owner=user, deleted_at__isnull=True)


def prediction_results_for(*, submission: Submission, user: User | None = None) -> QuerySet[PredictionResult]:
    """Per-prediction rows; for anyone but staff, only dev-split samples (test correctness stays hidden)."""
    qs = PredictionResult.objects.filter(submission=submission).select_related("sample").order_by(
        "sample__position", "sample__uid", "mode"
    )
    if user is None or not user.is_staff:
        qs = qs.filter(sample__split=Split.DEV)
    return qs


def submissions_counted_today(*, user: User, benchmark: Benchmark) -> int:
    """Submissions of the last 24 hours that count against the daily quota (failed ones do not)."""
    since = timezone.now() - timedelta(days=1)
    return (
        Submission.objects.filter(owner=user, benchmark=benchmark, created_at__gte=since)
        .exclude(status=SubmissionStatus.FAILED)
        .count()
    )


def active_submissions_count(*, user: User) -> int:
    return Submission.objects.filter(owner=user, status__in=ACTIVE_STATUSES).count()


def stuck_submission_ids(*, older_than: timedelta) -> list[int]:
    cutoff = timezone.now() - older_than
    return list(
        Submission.objects.filter(status__in=ACTIVE_STATUSES, heartbeat_at__lt=cutoff)
        .order_by("heartbeat_at")
        .values_list("pk", flat=True)
    )


def unsent_submission_ids() -> list[int]:
    """Active submissions whose current stage's message could not be published, that nobody holds."""
    return list(
        Submission.objects.filter(status__in=ACTIVE_STATUSES, enqueue_failed=True, claim_token="")
        .order_by("heartbeat_at")
        .values_list("pk", flat=True)
    )


def recently_submitted_benchmarks(*, since: Any) -> list[Benchmark]:
    """Benchmarks with a submission created at or after ``since``, the most recently submitted to
    first, each with ``n_samples`` (what a worker warms its cache with)."""
    latest = (Benchmark.objects.filter(submissions__created_at__gte=since)
              .annotate(last_submission=Max("submissions__created_at"))
              .order_by("-last_submission", "pk"))
    benchmarks = list(latest)
    sizes = dict(Sample.objects.filter(benchmark__in=benchmarks).values_list("benchmark").annotate(n=Count("pk")))
    for b in benchmarks:
        b.n_samples = sizes.get(b.pk, 0)
    return benchmarks


def benchmark_content_version(*, benchmark: Benchmark) -> tuple:
    """What the scorer's view of a benchmark depends on, in three small aggregate queries: the
    benchmark's row, its samples (count, last change, which ones), its approved annotations
    (count, last change, which ones and their versions, bumped on every save) and its category
    and domain slugs. Equal tuples mean the scoring samples are the same (a worker's cache key)."""
    samples = Sample.objects.filter(benchmark=benchmark).aggregate(
        n=Count("pk"), last=Max("updated_at"), ids=Sum("pk"))
    approved = Annotation.objects.filter(sample__benchmark=benchmark, status=AnnotationStatus.APPROVED).aggregate(
        n=Count("pk"), last=Max("updated_at"), ids=Sum("pk"), versions=Sum("version"))
    categories = tuple(Category.objects.filter(domain__benchmark=benchmark).order_by("pk").values_list(
        "pk", "slug", "domain__slug"))
    return (benchmark.pk, benchmark.updated_at, tuple(sorted(samples.items())), tuple(sorted(approved.items())),
            categories)


def scoring_samples(*, benchmark: Benchmark) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Each sample in the scorer's mapping shape (formats.md), and the sample primary keys by uid."""
    pks: dict[str, int] = {}
    return list(iter_scoring_samples(benchmark=benchmark, pks=pks)), pks


def conversion_context(*, benchmark: Benchmark) -> BenchmarkContext:
    """What the converters of other harnesses' logs need beyond the uids (converters.BenchmarkContext):
    each split's uids in export order (``position``, then ``uid``, as ``annotation.export_rows``; ``all``: the
    whole benchmark's when it has several splits), the
    answers (to check an lmms-eval file's row order) and each sample's count of media. One query."""
    context = BenchmarkContext()
    rows = (Sample.objects.filter(benchmark=benchmark).order_by("position", "uid")
            .annotate(n_media=Count("media")).values_list("uid", "split", "answer", "n_media"))
    everything: list[str] = []
    for uid, split, answer, n_media in rows:
        context.splits.setdefault(split, []).append(uid)
        everything.append(uid)
        context.gold[uid] = answer
        context.media[uid] = max(n_media, 1)  # a sample built by hand has its image only
    if len(context.splits) > 1:
        context.splits["all"] = everything  # a task run on every sample, in the export's order
    return context


def iter_scoring_samples(*, benchmark: Benchmark, pks: dict[str, int]) -> Iterator[dict[str, Any]]:
    """``scoring_samples`` one sample at a time (so a consumer need not hold all the dicts);
    ``pks`` is filled with the sample primary keys by uid as they go.

    Built from five flat queries with ``values()``: a 30k-sample benchmark costs no model
    instances, and the approved annotation's children are grouped in Python.
    """
    rows = list(
        Sample.objects.filter(benchmark=benchmark)
        .order_by("position", "uid")
        .values("pk", "uid", "question", "options", "answer", "answer_type", "tolerance", "aux_line",
                "category__slug", "category__domain__slug")
    )
    approved = dict(
        Annotation.objects.filter(sample__benchmark=benchmark, status=AnnotationStatus.APPROVED).values_list(
            "sample_id", "pk"
        )
    )
    transforms = dict(
        Annotation.objects.filter(pk__in=approved.values()).values_list("pk", "transform")
    ) if approved else {}
    in_approved = Q(annotation__sample__benchmark=benchmark, annotation__status=AnnotationStatus.APPROVED)
    regions: dict[int, list] = {}
    for ann, x1, y1, x2, y2, ref in Region.objects.filter(in_approved).order_by("annotation", "position").values_list(
        "annotation_id", "x1", "y1", "x2", "y2", "image_ref"
    ):
        # The file's region form: a bare box on img0, else with the medium it is on.
        regions.setdefault(ann, []).append((x1, y1, x2, y2) if ref == "img0" else {"box": (x1, y1, x2, y2), "image": ref})
    n_media = dict(
        SampleMedia.objects.filter(sample__benchmark=benchmark).values("sample_id").annotate(n=Count("pk"))
        .values_list("sample_id", "n")
    )  # fmt: skip
    steps: dict[int, list] = {}
    for ann, text in KeyStep.objects.filter(in_approved).order_by("annotation", "position").values_list(
        "annotation_id", "text"
    ):
        steps.setdefault(ann, []).append(text)
    chains: dict[int, list] = {}
    for ann, tool, args, inp, out in ReferenceToolCall.objects.filter(in_approved).order_by(
        "annotation", "position"
    ).values_list("annotation_id", "tool", "args", "input_ref", "output_ref"):
        chains.setdefault(ann, []).append({"tool": tool, "args": args, "input": inp, "output": out})
    for r in rows:
        ann = approved.get(r["pk"])
        pks[r["uid"]] = r["pk"]
        yield {
            "uid": r["uid"],
            "question": r["question"],
            "options": r["options"],
            "answer": r["answer"],
            "answer_type": r["answer_type"],
            "tolerance": r["tolerance"],
            "aux_line": r["aux_line"],
            "domain": r["category__domain__slug"],
            "category": r["category__slug"],
            "transform": transforms.get(ann) or [],
            "regions": regions.get(ann, []),
            "key_steps": steps.get(ann, []),
            "toolchain": chains.get(ann, []),
            "n_images": n_media.get(r["pk"], 1),
        }


@dataclass(frozen=True)
class PipelineSilence:
    """No worker has served the pipeline's queue for WORKER_SILENT_SECONDS: nothing can progress."""

    last_seen: datetime | None  # the last heartbeat of any worker on the queue; None: never one
    silent_seconds: float | None
    of_runs: bool = False  # the hosted runs' queue (RUNS_QUEUE), not the pipeline's

    @property
    def message(self) -> str:
        since = (f"for {_duration(self.silent_seconds)} (the last one at {self.last_seen:%Y-%m-%d %H:%M} UTC)"
                 if self.last_seen is not None and self.silent_seconds is not None else "yet")
        if self.of_runs:
            return (f"No worker for hosted runs has been seen {since}: this run cannot go on until one is started. "
                    "Nothing is lost: it resumes from its cache as soon as one is.")
        return (f"No worker of the scoring pipeline has been seen {since}: nothing can move a submission on until "
                "one is started. Waiting submissions are kept, and go on as soon as it is.")

    def as_json(self) -> dict[str, Any]:
        return {"message": self.message, "last_worker_seen_at": self.last_seen,
                "silent_seconds": None if self.silent_seconds is None else round(self.silent_seconds)}


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 2:
        return f"{int(seconds)} seconds"
    if minutes < 120:
        return f"{minutes} minutes"
    return f"{minutes // 60} hours"


def pipeline_silence(*, now: Any = None, runs: bool = False) -> PipelineSilence | None:
    """None while a worker on SUBMISSIONS_QUEUE (RUNS_QUEUE with ``runs``) has sent a heartbeat within
    WORKER_SILENT_SECONDS (evaluation/worker_beats.py), else when the last one was. One indexed query; reads only."""
    now = now or timezone.now()
    queue = settings.RUNS_QUEUE if runs else settings.SUBMISSIONS_QUEUE
    last = WorkerBeat.objects.filter(queue=queue).aggregate(last=Max("seen_at"))["last"]
    if last is not None and (now - last).total_seconds() <= settings.WORKER_SILENT_SECONDS:
        return None
    return PipelineSilence(last_seen=last, silent_seconds=(now - last).total_seconds() if last else None, of_runs=runs)


def pipeline_health(*, now: Any = None) -> dict[str, Any]:
    """What the admin health page shows: active submissions by status, the oldest one (its age,
    queue wait included, and its heartbeat's), and the sweeper's last run."""
    from evaluation.models import SweepRun

    now = now or timezone.now()
    counts = dict(Submission.objects.filter(status__in=ACTIVE_STATUSES).values_list("status")
                  .annotate(n=Count("pk")).values_list("status", "n"))
    oldest = (Submission.objects.select_related("benchmark", "owner").filter(status__in=ACTIVE_STATUSES)
              .order_by("created_at", "pk").first())
    sweep = SweepRun.objects.filter(pk=1).first()
    waiting = (Submission.objects.select_related("benchmark", "owner").filter(status=SubmissionStatus.QUEUED)
               .order_by("created_at", "pk").first())
    return {
        "silence": pipeline_silence(now=now),
        "waiting": waiting,
        "waiting_age": (now - waiting.created_at).total_seconds() if waiting else None,
        "now": now,
        "active": [(s.label, counts.get(s.value, 0)) for s in SubmissionStatus if s.value in ACTIVE_STATUSES],
        "active_total": sum(counts.values()),
        "oldest": oldest,
        "oldest_age": (now - oldest.created_at).total_seconds() if oldest else None,
        "oldest_heartbeat_age": (now - oldest.heartbeat_at).total_seconds() if oldest else None,
        "sweep": sweep,
        "sweep_age": (now - sweep.ran_at).total_seconds() if sweep else None,
    }


def run_visible_to(*, user: User, run_id: int) -> HostedRun | None:
    """The hosted run if ``user`` may see it (its owner, staff), else None; never its key."""
    if not user.is_authenticated:
        return None
    qs = HostedRun.objects.select_related("benchmark", "owner", "submission__benchmark").filter(pk=run_id)
    if not user.is_staff:
        qs = qs.filter(owner=user)
    return qs.first()


def runs_of(*, user: User) -> QuerySet[HostedRun]:
    return HostedRun.objects.select_related("benchmark", "submission").filter(owner=user)
