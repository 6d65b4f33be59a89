"""The annotation app's API: the visual tool registry (GET /api/v1/tools/)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.imagetools import MODULES, REGISTRY


class ToolListOutput(serializers.Serializer):
    name = serializers.CharField(help_text="canonical snake_case name, used in toolchains")
    module = serializers.ChoiceField(choices=MODULES)
    description = serializers.CharField()
    measures = serializers.BooleanField(help_text="whether the tool reports measurements")
    aliases = serializers.ListField(child=serializers.CharField(),
                                    help_text="other names accepted for it (case, spaces, "
                                              "underscores and hyphens are ignored)")
    schema = serializers.DictField(help_text="JSON Schema (draft 2020-12) of its arguments")
    example = serializers.DictField(help_text="a valid argument set")


class ToolListApi(APIView):
    """Every tool of the registry with its argument schema, in VTC-Bench's module order."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(operation_id="tools_list", summary="The visual tool registry",
                   responses=ToolListOutput(many=True), tags=["tools"])
    def get(self, request: Request) -> Response:
        return Response(ToolListOutput(REGISTRY.values(), many=True).data)
