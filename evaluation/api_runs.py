"""The hosted-runs API (docs/runs.md, "Hosted runs"): create a run, read its state, cancel it.
Thin views over evaluation.hosted_runs and selectors; the API key goes in once and never comes out."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotation.models import Benchmark
from evaluation import hosted_runs, selectors
from evaluation.api import ModelDetailsInput
from evaluation.harness import MODES
from evaluation.models import HostedRun
from evaluation.run_inputs import SPLITS


@extend_schema_field({"oneOf": [{"type": "array", "items": {"type": "string", "enum": list(MODES)}},
                               {"type": "string", "example": "text,adaptive"}]})
class ModesField(serializers.Field):
    """A list of modes, or one comma-separated string ("text,adaptive")."""

    def to_internal_value(self, data: Any) -> list[str]:
        items = data.split(",") if isinstance(data, str) else data
        if not isinstance(items, list) or not all(isinstance(m, str) for m in items):
            raise serializers.ValidationError(f"a list of modes from {', '.join(MODES)}")
        modes = [m.strip() for m in items if m.strip()]
        bad = [m for m in modes if m not in MODES]
        if bad or not modes:
            raise serializers.ValidationError(f"{', '.join(bad) or 'none given'}: choose from {', '.join(MODES)}")
        return modes

    def to_representation(self, value: Any) -> Any:
        return value


class RunCreateInput(ModelDetailsInput):
    model_name = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                       help_text="the name on the board (default: model)")
    endpoint = serializers.CharField(max_length=500, help_text="the base URL of an OpenAI-compatible API, e.g. "
                                                               "https://api.example.org/v1")
    model = serializers.CharField(max_length=200, help_text="the model name the endpoint serves")
    api_key = serializers.CharField(max_length=1000, required=False, allow_blank=True, write_only=True,
                                    style={"input_type": "password"},
                                    help_text="stored encrypted, shown to no one, deleted when the run ends "
                                              "unless keep_endpoint")
    modes = ModesField(required=False, default=list(MODES))
    split = serializers.ChoiceField(choices=SPLITS, required=False, default="all")
    price_input_per_mtok = serializers.FloatField(required=False, allow_null=True, min_value=0.0)
    price_output_per_mtok = serializers.FloatField(required=False, allow_null=True, min_value=0.0)
    public = serializers.BooleanField(required=False, default=False, help_text="publish the row when done")
    keep_endpoint = serializers.BooleanField(required=False, default=False)
    budget_usd = serializers.FloatField(required=False, min_value=0.0, default=0.0)
    max_turns = serializers.IntegerField(required=False, min_value=1, max_value=32, default=8)
    concurrency = serializers.IntegerField(required=False, min_value=1, max_value=64, default=4)
    protocol = serializers.ChoiceField(choices=hosted_runs.PROTOCOL_CHOICES, required=False,
                                       default="function_calling")
    max_image_pixels = serializers.IntegerField(
        required=False, min_value=0, default=hosted_runs.DEFAULT_MAX_IMAGE_PIXELS,
        help_text="an image larger than this is sent as a scaled-down view; the tools work on the original (0: as stored)")


OPTION_FIELDS = ("budget_usd", "max_turns", "concurrency", "protocol", "max_image_pixels")
RUN_FIELDS = ("endpoint", "model", "api_key", "modes", "split", "keep_endpoint")


def run_create_from(data: dict[str, Any], *, benchmark: Benchmark, owner: Any) -> HostedRun:
    """A run from validated input (the API's and the web form's)."""
    fields = dict(data)
    options = {k: fields.pop(k) for k in OPTION_FIELDS if k in fields}
    run_fields = {k: fields.pop(k) for k in RUN_FIELDS if k in fields}
    fields["is_public"] = fields.pop("public", False)
    details = {k: v for k, v in fields.items() if v not in (None, "")}
    if "release_date" in details:
        details["release_date"] = details["release_date"].isoformat()
    return hosted_runs.run_create(benchmark=benchmark, owner=owner, details=details, options=options, **run_fields)


def run_payload(run: HostedRun, request: Request) -> dict[str, Any]:
    """Everything its owner may see about a run, never its key."""
    sub = run.submission
    return {
        "id": run.pk, "benchmark": run.benchmark.slug, "status": run.status, "endpoint": run.endpoint,
        "model": run.model, "model_name": run.details.get("model_name"), "modes": run.modes, "split": run.split,
        "options": run.options, "has_api_key": run.has_api_key, "keep_endpoint": run.keep_endpoint,
        "progress": {"done": run.progress_done, "total": run.progress_total},
        "estimate": run.estimate, "spent_usd": round(run.spent_usd, 6),
        "requests": {"sent": run.requests_sent, "cached": run.requests_cached, "resent": run.requests_resent},
        "failures": run.failures, "retried": run.retried, "model_ids": run.model_ids,
        "failure_reason": run.failure_reason, "cancel_requested": run.cancel_requested, "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "no_worker": None if run.is_final or (silence := selectors.pipeline_silence(runs=True)) is None
        else silence.as_json(),
        "submission": None if sub is None else {
            "id": sub.pk, "url": reverse("api-submission-detail", args=[sub.pk], request=request),
            "page": request.build_absolute_uri(sub.get_absolute_url())},
        "url": reverse("api-run-detail", args=[run.pk], request=request),
        "page": request.build_absolute_uri(run.get_absolute_url()),
    }


def _visible_or_404(request: Request, pk: int) -> HostedRun:
    run = selectors.run_visible_to(user=request.user, run_id=pk)
    if run is None:  # someone else's run: whether it exists is private too
        raise Http404
    return run


class RunCreateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=RunCreateInput, responses={202: dict, 400: dict},
                   summary="Start a hosted run: the platform runs your endpoint on the benchmark's protocol")
    def post(self, request: Request, slug: str) -> Response:
        benchmark = get_object_or_404(Benchmark, slug=slug)
        data = RunCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = run_create_from(data.validated_data, benchmark=benchmark, owner=request.user)
        except hosted_runs.RunRejected as exc:
            return Response({"detail": str(exc), "code": "refused"}, status=400)
        return Response({"id": run.pk, "status": run.status, "estimate": run.estimate,
                         "url": reverse("api-run-detail", args=[run.pk], request=request),
                         "page": request.build_absolute_uri(run.get_absolute_url())},
                        status=status.HTTP_202_ACCEPTED)


class RunListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Your hosted runs (newest first)", responses={200: dict}, operation_id="v1_runs_list")
    def get(self, request: Request) -> Response:
        return Response([run_payload(r, request) for r in selectors.runs_of(user=request.user)[:200]])


class RunDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="A run's status, progress, estimate, spend, failures and, when done, its submission",
                   responses={200: dict})
    def get(self, request: Request, pk: int) -> Response:
        return Response(run_payload(_visible_or_404(request, pk), request))


class RunCancelApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: dict}, summary="Cancel a run (what is done is kept)")
    def post(self, request: Request, pk: int) -> Response:
        run = hosted_runs.run_cancel(run=_visible_or_404(request, pk))
        return Response(run_payload(run, request))
