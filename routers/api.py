"""The router API (docs/routers.md): upload a router with ``kind=router``, read one back."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotation.models import Benchmark
from evaluation import services as evaluation_services
from evaluation.api import (REJECTION_STATUS, SubmissionCreateApi, SubmissionCreated, SubmissionCreateInput,
                            upload_too_large)
from routers import services
from routers.models import RouterStatus, RouterSubmission

log = logging.getLogger(__name__)


class RouterCreateInput(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True, help_text="JSON Lines: {\"sample_id\", \"model\"} per test sample")
    name = serializers.CharField(max_length=200, required=False, help_text="the router's name")
    model_name = serializers.CharField(max_length=200, required=False, help_text="the same as name (upload form's field)")
    description = serializers.CharField(required=False, allow_blank=True)
    is_public = serializers.BooleanField(required=False, default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        name = (attrs.get("name") or attrs.get("model_name") or "").strip()
        if not name:
            raise serializers.ValidationError({"name": "give the router a name"})
        attrs["name"] = name
        return attrs


def router_payload(sub: RouterSubmission, request: Request) -> dict[str, Any]:
    return {"id": sub.pk, "kind": "router", "benchmark": sub.benchmark.slug, "name": sub.name,
            "is_public": sub.is_public, "status": sub.status, "failure_reason": sub.failure_reason,
            "errors": sub.errors, "pool": sub.pool, "results": services.results_shown(sub.results), "created_at": sub.created_at,
            "finished_at": sub.finished_at,
            "url": reverse("api-router-detail", args=[sub.pk], request=request),
            "page": request.build_absolute_uri(sub.get_absolute_url())}


def router_create(request: Request, slug: str) -> Response:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    too_large = upload_too_large(request)
    if too_large:
        return Response({"detail": too_large, "code": "too_large"}, status=413)
    data = RouterCreateInput(data=request.data)
    data.is_valid(raise_exception=True)
    v = data.validated_data
    try:
        sub = services.router_submission_create(benchmark=benchmark, owner=request.user, file=v["file"], name=v["name"],
                                                description=v.get("description", ""), is_public=v["is_public"])
    except services.RouterRejected as exc:
        return Response({"detail": exc.message, "code": exc.code}, status=REJECTION_STATUS[exc.code])
    return Response({"id": sub.pk, "kind": "router", "status": sub.status,
                     "url": reverse("api-router-detail", args=[sub.pk], request=request),
                     "page": request.build_absolute_uri(sub.get_absolute_url())}, status=status.HTTP_202_ACCEPTED)


class RouterCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": RouterCreateInput}, responses={202: dict},
                   summary="Upload a router's picks on the test split (docs/routers.md); scored asynchronously")
    def post(self, request: Request, slug: str) -> Response:
        return router_create(request, slug)


class SubmissionOrRouterCreateApi(SubmissionCreateApi):
    """POST /benchmarks/<slug>/submissions/: with ``kind=router`` a router, else evaluation's prediction upload."""

    @extend_schema(request={"multipart/form-data": SubmissionCreateInput}, responses={202: SubmissionCreated},
                   summary="Upload a prediction file (formats.md), or with kind=router a router's picks "
                           "(docs/routers.md); scored asynchronously")
    def post(self, request: Request, slug: str) -> Response:
        # The size check and the spooling failure come first, as in evaluation's view: reading ``kind``
        # parses the body, and a parse that failed once leaves DRF with empty data, not the error.
        too_large = upload_too_large(request)
        if too_large:
            return Response({"detail": too_large, "code": "too_large"}, status=413)
        try:
            kind = request.data.get("kind")
        except OSError as exc:
            log.exception("upload by %s: the upload could not be spooled", request.user)
            return Response({"detail": evaluation_services.unavailable_message("the upload folder", exc),
                             "code": "unavailable"}, status=503)
        if kind == "router":
            return router_create(request, slug)
        return super().post(request, slug)


class RouterDetailApi(APIView):
    @extend_schema(summary="A router submission: status, errors with line numbers, figures when done",
                   responses={200: dict})
    def get(self, request: Request, pk: int) -> Response:
        sub = RouterSubmission.objects.select_related("benchmark").filter(pk=pk).first()
        user = request.user
        mine = sub is not None and user.is_authenticated and (sub.owner_id == user.pk or user.is_staff)
        if sub is None or not (mine or (sub.is_public and sub.status == RouterStatus.DONE)):
            raise Http404
        return Response(router_payload(sub, request))
