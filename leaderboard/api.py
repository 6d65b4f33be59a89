"""GET /api/v1/benchmarks/, /api/v1/benchmarks/<slug>/, .../leaderboard/ and .../downloads/."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.downloads.selectors import DownloadState, downloads_of
from annotation.models import Benchmark, Category, Domain, ScoringProfile
from leaderboard import exports, selectors
from leaderboard.downloads import download_url


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
    scoring = serializers.ChoiceField(
        choices=ScoringProfile.choices,
        help_text="the scoring profile: whose rules decide answer correctness (docs/metrics.md, Scoring profiles)")
    scoring_label = serializers.CharField(source="get_scoring_display")
    counts = serializers.SerializerMethodField()
    domains = DomainOut(many=True, source="domains.all")
    leaderboard_url = serializers.SerializerMethodField()

    def get_counts(self, obj: Benchmark) -> dict[str, int]:
        return {"samples": obj.sample_count, "dev": obj.dev_count, "test": obj.sample_count - obj.dev_count,
                "aux_line": obj.aux_count, "reported_results": obj.reported_count}

    def get_leaderboard_url(self, obj: Benchmark) -> str:
        return f"/api/v1/benchmarks/{obj.slug}/leaderboard/"


class DownloadOut(serializers.Serializer):
    split = serializers.CharField()
    kind = serializers.ChoiceField(choices=["zip", "tsv", "parquet"])
    status = serializers.ChoiceField(choices=["ready", "building", "failed", "missing"],
                                     help_text="missing: no build was asked for the benchmark's current state yet")
    gold = serializers.BooleanField(help_text="whether the file carries answers and annotations (dev only)")
    size_bytes = serializers.IntegerField(allow_null=True)
    sample_count = serializers.IntegerField(allow_null=True)
    url = serializers.SerializerMethodField()
    built_at = serializers.DateTimeField(allow_null=True)

    def get_url(self, obj: DownloadState) -> str:
        url = download_url(self.context["benchmark"], obj.split, obj.kind)
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url


def _downloads(request: Request, benchmark: Benchmark) -> list[dict]:
    context = {"benchmark": benchmark, "request": request}
    return list(DownloadOut(downloads_of(benchmark), many=True, context=context).data)


class BenchmarkDetailOut(BenchmarkOut):
    downloads = serializers.SerializerMethodField()

    @extend_schema_field(DownloadOut(many=True))
    def get_downloads(self, obj: Benchmark) -> list[dict]:
        return _downloads(self.context.get("request"), obj)


class BenchmarkListApi(APIView):
    @extend_schema(responses=BenchmarkOut(many=True), summary="Benchmarks with domains, categories and counts")
    def get(self, request: Request) -> Response:
        return Response(BenchmarkOut(_benchmarks(), many=True).data)


class BenchmarkDetailApi(APIView):
    @extend_schema(responses=BenchmarkDetailOut,
                   summary="One benchmark's metadata, domains, categories, counts and downloads")
    def get(self, request: Request, slug: str) -> Response:
        benchmark = get_object_or_404(_benchmarks(), slug=slug)
        return Response(BenchmarkDetailOut(benchmark, context={"request": request}).data)


class DownloadListApi(APIView):
    @extend_schema(responses=DownloadOut(many=True),
                   summary="The benchmark's data files per split (zip, VLMEvalKit TSV, parquet) with sizes and counts")
    def get(self, request: Request, slug: str) -> Response:
        return Response(_downloads(request, get_object_or_404(Benchmark, slug=slug)))


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
        rows = selectors.board_rows(benchmark)  # the board's last build ("build" says whether it is behind)
        return Response(exports.rows_payload(benchmark, rows, selectors.standings(benchmark)))
