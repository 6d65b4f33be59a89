"""The submission API (docs/submissions.md): thin views over evaluation.services and selectors."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from annotation.models import Benchmark
from evaluation import selectors, services
from evaluation.converters import FORMAT_CHOICES
from evaluation.metrics.profiles import UNDECIDED
from evaluation.model_meta import (LICENSE_TOO_LONG, PARAMETERS_HELP, WEIGHTS_INVALID, parse_parameters,
                                   validate_http_url, validate_release_date)
from evaluation.models import FULL_PIPELINE_HELP, Submission, SubmissionStatus, Weights

log = logging.getLogger(__name__)
# multipart boundaries and the metadata fields ride on top of the file itself
MULTIPART_SLACK = 64 * 1024
REJECTION_STATUS = {"too_large": 413, "quota": 429, "busy": 429, "invalid": 400, "unavailable": 503}
PROGRESS_UNITS = {
    SubmissionStatus.QUEUED: "", SubmissionStatus.VALIDATING: "bytes", SubmissionStatus.SCORING: "predictions",
    SubmissionStatus.JUDGING: "questions", SubmissionStatus.DONE: "predictions", SubmissionStatus.FAILED: "",
}


def upload_too_large(request: Any) -> str | None:
    """A message when the declared request size is over the limit, before any byte is read."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    limit = settings.SUBMISSION_MAX_FILE_BYTES
    if length > limit + MULTIPART_SLACK:
        return services.size_limit_message(length)
    return None


@extend_schema_field({"oneOf": [{"type": "number"}, {"type": "string"}], "nullable": True,
                      "example": "7B"})
class ParametersInput(serializers.Field):
    """A parameter count: a number (billions) or a string such as "7B", "1.5b", "500M"."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, allow_null=True, help_text=PARAMETERS_HELP, **kwargs)

    def to_internal_value(self, data: Any) -> float | None:
        try:
            return parse_parameters(data)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def to_representation(self, value: Any) -> Any:
        return value

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if data == "":  # a blank multipart field means "not stated", as in the web form
            return True, None
        return super().validate_empty_values(data)


class ModelDetailsInput(serializers.Serializer):
    """The model's details; at upload (with the file) and in PATCH (each optional)."""

    model_name = serializers.CharField(max_length=200)
    organisation = serializers.CharField(max_length=200, required=False, allow_blank=True)
    model_url = serializers.URLField(max_length=500, required=False, allow_blank=True, validators=[validate_http_url],
                                     help_text="code or model card; http(s)")
    paper_url = serializers.URLField(max_length=500, required=False, allow_blank=True, validators=[validate_http_url])
    weights = serializers.ChoiceField(choices=Weights.choices, required=False, allow_blank=True,
                                      error_messages={"invalid_choice": WEIGHTS_INVALID.format("{input}")})
    parameters_billions = ParametersInput()
    license = serializers.CharField(max_length=100, required=False, allow_blank=True,
                                    error_messages={"max_length": LICENSE_TOO_LONG})
    release_date = serializers.DateField(required=False, allow_null=True, validators=[validate_release_date],
                                         help_text="YYYY-MM-DD")
    description = serializers.CharField(required=False, allow_blank=True)


class SubmissionCreateInput(ModelDetailsInput):
    file = serializers.FileField(allow_empty_file=True)
    price_input_per_mtok = serializers.FloatField(required=False, allow_null=True, min_value=0.0)
    price_output_per_mtok = serializers.FloatField(required=False, allow_null=True, min_value=0.0)
    is_public = serializers.BooleanField(required=False, default=False)
    format = serializers.ChoiceField(choices=FORMAT_CHOICES, required=False, default="jsonl",
                                     help_text="the file's shape; an author's format is converted on the way in")
    full_pipeline = serializers.BooleanField(required=False, default=False, help_text=FULL_PIPELINE_HELP)


class SubmissionCreated(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    url = serializers.URLField()
    page = serializers.URLField()


def submission_urls(request: Request, sub: Submission) -> dict[str, str]:
    return {
        "url": reverse("api-submission-detail", args=[sub.pk], request=request),
        "page": request.build_absolute_uri(sub.get_absolute_url()),
    }


def submission_payload(sub: Submission, request: Request) -> dict[str, Any]:
    """Everything the owner may see about a submission (aggregates only; no per-sample rows)."""
    return {
        "id": sub.pk,
        "benchmark": sub.benchmark.slug,
        "model_name": sub.model_name,
        "organisation": sub.organisation,
        "model_url": sub.model_url,
        "paper_url": sub.paper_url,
        "weights": sub.weights,
        "parameters_billions": sub.parameters_billions,
        "license": sub.license,
        "release_date": sub.release_date,
        "price_input_per_mtok": sub.price_input_per_mtok,
        "price_output_per_mtok": sub.price_output_per_mtok,
        "description": sub.description,
        "is_public": sub.is_public,
        # is_public is the owner's wish (it may be set at upload); only a done submission is shown
        "on_leaderboard": sub.is_on_board,
        "is_demo": sub.is_demo,
        "status": sub.status,
        "progress": {"done": sub.progress_done, "total": sub.progress_total,
                     "unit": "items" if sub.is_converting else PROGRESS_UNITS.get(sub.status, "")},
        "failure_reason": sub.failure_reason,
        # Set while it is unfinished and no worker serves the pipeline's queue: nothing can move it on.
        "no_worker": None if sub.is_final or (silence := selectors.pipeline_silence()) is None else silence.as_json(),
        "errors": sub.errors,
        "errors_truncated": sub.errors_truncated,
        "file": {"name": sub.original_name, "size": sub.file_size, "lines": sub.n_lines, "format": sub.format},
        "n_predictions": sub.n_predictions,
        "coverage": sub.coverage,
        "tool_notes": sub.tool_notes,
        "conversion_warnings": sub.conversion_warnings,
        "full_pipeline": sub.full_pipeline,
        "results": sub.results,
        "scorer_version": sub.scorer_version,
        "judge": sub.judge_name,
        "created_at": sub.created_at,
        "finished_at": sub.finished_at,
        "first_finished_at": sub.first_finished_at,
        "scored_at": sub.scored_at,
        **submission_urls(request, sub),
        "predictions_url": reverse("api-submission-predictions", args=[sub.pk], request=request),
    }


def visible_or_404(request: Request, pk: int) -> Submission:
    sub = selectors.submission_visible_to(user=request.user, submission_id=pk)
    if sub is None:  # 404, not 403: whether someone else's submission exists is private too
        raise Http404
    return sub


class SubmissionCreateApi(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]

    @staticmethod
    def too_large_response(request: Any, message: str, view_kwargs: dict) -> JsonResponse:
        """evaluation.middleware answers with this before the body is read (413)."""
        return JsonResponse({"detail": message, "code": "too_large"}, status=413)

    @extend_schema(request={"multipart/form-data": SubmissionCreateInput}, responses={202: SubmissionCreated},
                   summary="Upload a prediction file (formats.md); it is scored asynchronously")
    def post(self, request: Request, slug: str) -> Response:
        benchmark = get_object_or_404(Benchmark, slug=slug)
        too_large = upload_too_large(request)
        if too_large:
            return Response({"detail": too_large, "code": "too_large"}, status=413)
        try:
            body = request.data  # parsing spools the file to the upload folder, which may be full
        except OSError as exc:
            log.exception("submission upload by %s: the upload could not be spooled", request.user)
            return Response({"detail": services.unavailable_message("the upload folder", exc), "code": "unavailable"},
                            status=503)
        data = SubmissionCreateInput(data=body)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        fields["file_format"] = fields.pop("format")
        try:
            sub = services.submission_create(benchmark=benchmark, owner=request.user, **fields)
        except services.SubmissionRejected as exc:
            return Response({"detail": exc.message, "code": exc.code}, status=REJECTION_STATUS[exc.code])
        except DjangoValidationError as exc:
            return Response(exc.message_dict if hasattr(exc, "message_dict") else {"detail": exc.messages},
                            status=400)
        return Response({"id": sub.pk, "status": sub.status, **submission_urls(request, sub)},
                        status=status.HTTP_202_ACCEPTED)


class SubmissionListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Your submissions (newest first)", responses={200: dict}, operation_id="v1_submissions_list")
    def get(self, request: Request) -> Response:
        subs = selectors.submissions_of(user=request.user)[:200]
        return Response([{"id": s.pk, "benchmark": s.benchmark.slug, "model_name": s.model_name,
                          "status": s.status, "is_public": s.is_public, "created_at": s.created_at,
                          **submission_urls(request, s)} for s in subs])


class SubmissionUpdateInput(ModelDetailsInput):
    """Publish or unpublish, and/or change the model's details (no re-score); every field optional."""

    model_name = serializers.CharField(max_length=200, required=False)
    is_public = serializers.BooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError(
                {"detail": ["nothing to change: send is_public and/or any of " + ", ".join(services.EDITABLE_METADATA)]})
        return attrs


class SubmissionDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Status, progress, errors with line numbers, and results when done",
                   responses={200: dict})
    def get(self, request: Request, pk: int) -> Response:
        return Response(submission_payload(visible_or_404(request, pk), request))

    @extend_schema(request=SubmissionUpdateInput, responses={200: dict, 409: dict},
                   summary="Publish (is_public true) or unpublish a submission (only a done one can be published), "
                           "and/or change its model details without a re-score")
    def patch(self, request: Request, pk: int) -> Response:
        sub = visible_or_404(request, pk)
        data = SubmissionUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        changes = dict(data.validated_data)
        public = changes.pop("is_public", None)
        try:
            with transaction.atomic():
                if changes:
                    services.submission_metadata_update(submission=sub, **changes)
                if public is not None:
                    services.submission_set_public(submission=sub, public=public)
        except services.PublishRefused as exc:
            return Response({"detail": exc.message, "code": "not_done"}, status=409)
        except DjangoValidationError as exc:
            sub.refresh_from_db()
            return Response(exc.message_dict if hasattr(exc, "message_dict") else {"detail": exc.messages},
                            status=400)
        return Response(submission_payload(sub, request))

    @extend_schema(summary="Delete (soft: hidden everywhere, kept for audit)", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        services.submission_delete(submission=visible_or_404(request, pk))
        return Response(status=204)


def _bounded_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit() or not low <= int(raw) <= high:
        raise serializers.ValidationError(
            {name: [f"expected a whole number from {low:,} to {high:,}, got {raw[:40]!r}"]})
    return int(raw)


class StrictLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=&offset=`` that answers 400 with the parameter's name for a value it cannot use
    (DRF's own ignores junk, and passes a huge number on to the database, which fails with a 500)."""

    default_limit = 200
    max_limit = 1000
    max_offset = 1_000_000_000  # past any real result set; far below the database's integer range

    def get_limit(self, request: Request) -> int:
        return _bounded_int(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _bounded_int(request, self.offset_query_param, 0, 0, self.max_offset)


class PredictionRowOutput(serializers.Serializer):
    sample_id = serializers.CharField(source="sample.uid")
    mode = serializers.CharField()
    # null: undecided (decided_by "undecided"), a row only an LLM judge may decide: neither right nor wrong
    correct = serializers.SerializerMethodField()
    decided_by = serializers.CharField()
    extracted = serializers.CharField()
    answer = serializers.CharField(source="sample.answer")
    n_steps = serializers.IntegerField()
    n_calls = serializers.IntegerField()
    l_eff = serializers.IntegerField()
    l_gt = serializers.IntegerField()
    calls = serializers.JSONField()
    key_steps = serializers.JSONField()
    kcov = serializers.FloatField(allow_null=True)
    step_score = serializers.FloatField(allow_null=True)
    iou = serializers.FloatField(allow_null=True)
    tokens = serializers.IntegerField(allow_null=True)
    cost_usd = serializers.FloatField(allow_null=True)

    @extend_schema_field(serializers.BooleanField(allow_null=True))
    def get_correct(self, row: Any) -> bool | None:
        return None if row.decided_by == UNDECIDED else row.correct


class SubmissionPredictionsApi(APIView):
    """Per-prediction results on dev-split samples (staff also see test-split ones)."""

    permission_classes = [IsAuthenticated]

    pagination_class = StrictLimitOffsetPagination  # for the schema's limit/offset parameters

    @extend_schema(responses={200: PredictionRowOutput(many=True)},
                   summary="Per-prediction results (dev split only: test-split correctness stays hidden)")
    def get(self, request: Request, pk: int) -> Response:
        sub = visible_or_404(request, pk)
        rows = selectors.prediction_results_for(submission=sub, user=request.user)
        pager = StrictLimitOffsetPagination()
        page = pager.paginate_queryset(rows, request, view=self)
        return pager.get_paginated_response(PredictionRowOutput(page, many=True).data)
