from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from . import services as _services
from .models import JudgeVerdict, PredictionResult, Submission


class LargeTableAdmin(admin.ModelAdmin):
    """A changelist over a table that grows with use (the audit timed such admin pages at 33-45 s): no
    count of the whole table beside the filtered one, and the wide columns (``list_defer``: JSON results,
    per-call details) not read for a list that never shows them; the change form reads every column."""

    show_full_result_count = False
    list_defer: tuple[str, ...] = ()

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        match = request.resolver_match
        if self.list_defer and match is not None and (match.url_name or "").endswith("_changelist"):
            queryset = queryset.defer(*self.list_defer)
        return queryset


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(LargeTableAdmin):
    list_defer = ("verdict",)
    list_display = ("judge", "prompt_version", "input_hash", "created")
    list_filter = ("judge", "prompt_version")
    search_fields = ("input_hash",)
    readonly_fields = ("judge", "prompt_version", "input_hash", "verdict", "created")


# ---------------------------------------------------------------------------------------------
# Submissions (issue 5)


class SubmissionAdminForm(forms.ModelForm):
    class Meta:
        model = Submission
        fields = "__all__"  # noqa: DJ007 - SubmissionAdmin's exclude and readonly_fields choose the fields

    def clean_is_public(self) -> bool:
        public = self.cleaned_data["is_public"]
        if public and "is_public" in self.changed_data and self.instance.pk:
            message = _services.publish_refusal(submission=self.instance)
            if message:
                raise forms.ValidationError(message)
        return public


@admin.register(Submission)
class SubmissionAdmin(LargeTableAdmin):
    form = SubmissionAdminForm
    list_display = ("id", "model_name", "benchmark", "owner", "status", "is_public", "is_demo", "deleted_at",
                    "scorer_version", "created_at")
    list_select_related = ("benchmark", "owner")  # one query for the page, not two per row
    list_defer = ("results", "errors", "coverage", "tool_notes", "judge_estimate", "digest_parts", "run_record",
                  "description")
    raw_id_fields = ("owner",)
    list_filter = ("status", "benchmark", "format", "is_public", "is_demo", "scorer_version")
    search_fields = ("model_name", "organisation", "owner__username")
    # The file is in private storage and has no URL (docs/security.md): shown by name, never replaced here.
    exclude = ("file", "source_file")
    readonly_fields = ("stored_file", "status", "heartbeat_at", "attempts", "claim_token", "progress_done", "progress_total",
                       "failure_reason",
                       "errors", "errors_truncated", "n_lines", "n_predictions", "coverage", "results",
                       "scorer_version", "judge_name", "created_at", "started_at", "finished_at", "scored_at",
                       "format")
    actions = ["rescore"]

    def save_model(self, request, obj: Submission, form, change: bool) -> None:  # noqa: ANN001
        """An edit here (a model renamed, a row published or hidden) is a change to the public results like
        any service's: the benchmark's results_version moves with it, so the derived figures are rebuilt and
        the cached pages follow (docs/architecture.md, "Derived figures")."""
        super().save_model(request, obj, form, change)
        _services.benchmark_results_bump(benchmark_id=obj.benchmark_id, submission_ids=[obj.pk])

    @admin.display(description="file (private storage)")
    def stored_file(self, obj: Submission) -> str:
        return " ← ".join(f.name for f in (obj.file, obj.source_file) if f)

    @admin.action(description="Re-score the selected submissions (through the queue)")
    def rescore(self, request, queryset) -> None:  # noqa: ANN001
        n = sum(_services.submission_rescore(submission=s) for s in queryset)
        self.message_user(request, f"{n} submission(s) sent for re-scoring; those still in the pipeline were left.")


@admin.register(PredictionResult)
class PredictionResultAdmin(LargeTableAdmin):
    # Millions of rows: the ids (no join to a submission's results per row), newest first through the
    # primary key (the model's order, by submission then id, sorted the whole table for each page).
    list_display = ("id", "submission_ref", "sample_ref", "mode", "correct", "decided_by", "n_calls", "cost_usd")
    list_filter = ("mode", "correct")
    list_defer = ("extracted", "calls", "effective", "toolset_prf", "key_steps", "step_scores")
    ordering = ("-id",)
    raw_id_fields = ("submission", "sample")

    @admin.display(description="submission", ordering="submission_id")
    def submission_ref(self, obj: PredictionResult) -> int:
        return obj.submission_id

    @admin.display(description="sample", ordering="sample_id")
    def sample_ref(self, obj: PredictionResult) -> int:
        return obj.sample_id
