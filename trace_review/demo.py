"""The demo trace-review batch (called by load_demo; safe to run twice).

A stratified sample of the demo submissions' adaptive traces, two people per trace, open to the
demo annotators annotator1 and annotator2 (and the benchmark's admins).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation.models import Benchmark
from trace_review.models import TraceReviewBatch
from trace_review.services import batch_create

DEMO_BATCH = "Demo: adaptive traces across the simulated submissions"
DEMO_REVIEWERS = ("annotator1", "annotator2")
DEMO_SIZE = 12


def demo_trace_review_ensure(slug: str = "adaptmm-demo") -> str:
    benchmark = Benchmark.objects.filter(slug=slug).first()
    if benchmark is None:
        return "no demo benchmark: no review batch"
    existing = TraceReviewBatch.objects.filter(benchmark=benchmark, name=DEMO_BATCH).first()
    if existing is not None:
        return f"batch '{existing.name}' already there ({existing.traces.count()} traces)"
    people = list(get_user_model().objects.filter(username__in=DEMO_REVIEWERS))
    owner = get_user_model().objects.filter(username="admin").first()
    try:
        batch = batch_create(benchmark=benchmark, name=DEMO_BATCH, size=DEMO_SIZE, people_per_trace=2,
                             mode="adaptive", created_by=owner, reviewers=people)
    except ValidationError as error:
        return f"no review batch: {'; '.join(error.messages)}"
    return f"batch '{batch.name}' with {batch.traces.count()} traces for {', '.join(p.username for p in people)}"
