"""Reads of the annotation app, with the joins they need."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from annotation.models import Annotation, AnnotationStatus, Benchmark


def approved_annotations_for_export(benchmark: Benchmark) -> dict[int, Annotation]:
    """Each sample's approved annotation with its regions, key steps and toolchain, by sample id."""
    annotations = Annotation.objects.filter(
        sample__benchmark=benchmark, status=AnnotationStatus.APPROVED
    ).prefetch_related("regions", "key_steps", "tool_calls")
    return {a.sample_id: a for a in annotations}


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.annotate(sample_count=Count("samples", distinct=True)).order_by("name")
