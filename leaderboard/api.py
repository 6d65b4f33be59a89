"""GET /api/v1/benchmarks/, /api/v1/benchmarks/<slug>/ and /api/v1/benchmarks/<slug>/leaderboard/."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Benchmark, Category, Domain
from leaderboard import exports, selectors


def _benchmarks():  # noqa: ANN202 - a queryset with counts
    categories = Category.objects.annotate(sample_count=Count("samples")).order_by("position", "slug")
    domains = Domain.objects.annotate(sample_count=Count("categories__samples")).order_by("position", "slug")
    return Benchmark.objects.annotate(
        sample_count=Count("samples", distinct=True),
        dev_count=Count("samples", filter=Q(samples__split="dev"), distinct=True),
        aux_count=Count("samples", filter=Q(samples__aux_line=True), distinct=True),
        reported_count=Count("reported_results", distinct=True),
    ).prefetch_related(Prefetch("domains", queryset=domains), Prefetch("domains__categories", queryset=categories))


class CategoryOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    sample_count = serializers.IntegerField()


class DomainOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    sample_count = serializers.IntegerField()
    categories = CategoryOut(many=True, source="categories.all")


class BenchmarkOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    version = serializers.CharField()
    description = serializers.CharField()
    license = serializers.CharField()
    citation = serializers.CharField()
    tools = serializers.ListField(child=serializers.CharField())
    counts = serializers.SerializerMethodField()
    domains = DomainOut(many=True, source="domains.all")
    leaderboard_url = serializers.SerializerMethodField()

    def get_counts(self, obj: Benchmark) -> dict[str, int]:
        return {"samples": obj.sample_count, "dev": obj.dev_count, "test": obj.sample_count - obj.dev_count,
                "aux_line": obj.aux_count, "reported_results": obj.reported_count}

    def get_leaderboard_url(self, obj: Benchmark) -> str:
        return f"/api/v1/benchmarks/{obj.slug}/leaderboard/"


class BenchmarkListApi(APIView):
    @extend_schema(responses=BenchmarkOut(many=True), summary="Benchmarks with domains, categories and counts")
    def get(self, request: Request) -> Response:
        return Response(BenchmarkOut(_benchmarks(), many=True).data)


class BenchmarkDetailApi(APIView):
    @extend_schema(responses=BenchmarkOut, summary="One benchmark's metadata, domains, categories and counts")
    def get(self, request: Request, slug: str) -> Response:
        return Response(BenchmarkOut(get_object_or_404(_benchmarks(), slug=slug)).data)


class LeaderboardApi(APIView):
    @extend_schema(
        summary="Public leaderboard rows with every metric and its 95 % interval",
        responses=inline_serializer("Leaderboard", {
            "benchmark": serializers.DictField(), "order": serializers.CharField(), "units": serializers.DictField(),
            "rows": serializers.ListField(child=serializers.DictField()),
        }),
    )
    def get(self, request: Request, slug: str) -> Response:
        benchmark = get_object_or_404(Benchmark, slug=slug)
        rows = selectors.board_rows(benchmark)  # brings the stored ranks up to date first
        return Response(exports.rows_payload(benchmark, rows, selectors.standings(benchmark)))
