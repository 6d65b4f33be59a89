"""The guessability audit of a benchmark, written onto its samples (docs/metrics.md, "Blind mode").

Which submissions count: the benchmark's *public, done, not deleted* submissions with at least one
blind line. A private submission never counts, because the flag is visible to annotators and
reviewers who may not see that submission: with three blind submissions and k = 2, a sample's
flag plus two public answers would reveal the third, private one. Counting only public
submissions makes the flag a function of what the leaderboard already shows.

``guessability_refresh`` is idempotent and cheap (one query of blind rows, one bulk update); it
runs when a submission finishes scoring, is published or unpublished, or is deleted.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef

from annotation.models import Sample
from evaluation.metrics.guessability import Guessability, guessability
from evaluation.models import PredictionResult, Submission, SubmissionStatus


def counted_blind_submissions(*, benchmark_id: int) -> list[int]:
    """Ids of the submissions the audit counts (see the module docstring), oldest first."""
    return list(
        Submission.objects.filter(benchmark_id=benchmark_id, status=SubmissionStatus.DONE, is_public=True,
                                  deleted_at__isnull=True)
        # per candidate, through the (submission, sample, mode) unique index: no scan of every blind row
        .filter(Exists(PredictionResult.objects.filter(submission=OuterRef("pk"), mode="blind")))
        .order_by("pk").values_list("pk", flat=True)
    )


def benchmark_guessability(*, benchmark_id: int) -> Guessability:
    subs = counted_blind_submissions(benchmark_id=benchmark_id)
    correct: dict[int, set[str]] = {pk: set() for pk in subs}
    for sub_id, sample_pk in PredictionResult.objects.filter(
            submission_id__in=subs, mode="blind", correct=True).values_list("submission_id", "sample_id"):
        correct[sub_id].add(str(sample_pk))
    pks = [str(pk) for pk in Sample.objects.filter(benchmark_id=benchmark_id).values_list("pk", flat=True)]
    return guessability(list(correct.values()), pks, k=settings.GUESSABLE_K, min_blind=settings.GUESSABLE_MIN_BLIND)


def guessability_refresh(*, benchmark_id: int) -> Guessability:
    """Write every sample's flag (None while too few blind submissions count). Returns the audit."""
    audit = benchmark_guessability(benchmark_id=benchmark_id)
    samples = Sample.objects.filter(benchmark_id=benchmark_id)
    if not audit.audited:
        samples.exclude(guessable=None).update(guessable=None)
        return audit
    yes = [int(pk) for pk, n in audit.correct.items() if n >= audit.k]
    samples.filter(pk__in=yes).exclude(guessable=True).update(guessable=True)
    samples.exclude(pk__in=yes).exclude(guessable=False).update(guessable=False)
    return audit


def guessability_refresh_for(*, submission_id: int) -> None:
    """After a submission changed state: refresh its benchmark when the submission has blind lines."""
    sub = Submission.objects.filter(pk=submission_id).values("benchmark_id").first()
    if sub and PredictionResult.objects.filter(submission_id=submission_id, mode="blind").exists():
        guessability_refresh(benchmark_id=sub["benchmark_id"])
