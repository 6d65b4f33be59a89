from django import forms
from django.contrib import admin

from . import services as _services
from .models import JudgeVerdict, PredictionResult, Submission


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(admin.ModelAdmin):
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
class SubmissionAdmin(admin.ModelAdmin):
    form = SubmissionAdminForm
    list_display = ("id", "model_name", "benchmark", "owner", "status", "is_public", "is_demo", "deleted_at",
                    "scorer_version", "created_at")
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
        _services.benchmark_results_bump(benchmark_id=obj.benchmark_id)

    @admin.display(description="file (private storage)")
    def stored_file(self, obj: Submission) -> str:
        return " ← ".join(f.name for f in (obj.file, obj.source_file) if f)

    @admin.action(description="Re-score the selected submissions (through the queue)")
    def rescore(self, request, queryset) -> None:  # noqa: ANN001
        n = sum(_services.submission_rescore(submission=s) for s in queryset)
        self.message_user(request, f"{n} submission(s) sent for re-scoring; those still in the pipeline were left.")


@admin.register(PredictionResult)
class PredictionResultAdmin(admin.ModelAdmin):
    list_display = ("submission", "sample", "mode", "correct", "decided_by", "n_calls", "cost_usd")
    list_filter = ("mode", "correct")
    raw_id_fields = ("submission", "sample")
