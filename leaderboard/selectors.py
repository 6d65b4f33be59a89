"""Reads for the public pages."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q, QuerySet

from annotation.models import Benchmark, Domain


def home_benchmarks() -> QuerySet[Benchmark]:
    domains = Domain.objects.annotate(sample_count=Count("categories__samples")).order_by("position")
    return Benchmark.objects.annotate(
        sample_count=Count("samples", distinct=True),
        dev_count=Count("samples", filter=Q(samples__split="dev"), distinct=True),
    ).prefetch_related(Prefetch("domains", queryset=domains))
