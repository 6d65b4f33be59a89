"""The annotation app's API: the visual tool registry (GET /api/v1/tools/), with a benchmark's declared tools."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imagetools import MODULES, REGISTRY
from annotation.models import Benchmark

DECLARED_MODULE = "declared"


class ToolListOutput(serializers.Serializer):
    name = serializers.CharField(help_text="canonical snake_case name, used in toolchains")
    module = serializers.ChoiceField(choices=[*MODULES, DECLARED_MODULE],
                                     help_text="'declared': a benchmark's own tool, validated but not run here")
    description = serializers.CharField()
    measures = serializers.BooleanField(help_text="whether the tool reports measurements")
    aliases = serializers.ListField(child=serializers.CharField(),
                                    help_text="other names accepted for it (case, spaces, "
                                              "underscores and hyphens are ignored)")
    schema = serializers.DictField(help_text="JSON Schema (draft 2020-12) of its arguments")
    example = serializers.DictField(help_text="a valid argument set")


class ToolListApi(APIView):
    """Every tool of the registry with its argument schema, in VTC-Bench's module order; with
    `?benchmark=<slug>`, then that benchmark's declared tools (module "declared")."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(operation_id="tools_list", summary="The visual tool registry",
                   parameters=[OpenApiParameter("benchmark", str, description="a benchmark's slug: add its declared tools")],
                   responses=ToolListOutput(many=True), tags=["tools"])
    def get(self, request: Request) -> Response:
        rows = list(ToolListOutput(REGISTRY.values(), many=True).data)
        slug = request.query_params.get("benchmark")
        if slug:
            benchmark = get_object_or_404(Benchmark, slug=slug)
            rows += [{"name": d["name"], "module": DECLARED_MODULE, "description": d.get("description", ""),
                      "measures": False, "aliases": [], "schema": d["args_schema"], "example": {}}
                     for d in benchmark.declared_tools or ()]
        return Response(rows)
