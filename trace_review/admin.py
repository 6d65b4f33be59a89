from django.contrib import admin

from trace_review.models import HumanVerdict, Trace, TraceAssignment, TraceReviewBatch


@admin.register(TraceReviewBatch)
class TraceReviewBatchAdmin(admin.ModelAdmin):
    list_display = ("name", "benchmark", "submission", "mode", "size", "people_per_trace", "created_at")
    list_filter = ("benchmark", "mode")
    filter_horizontal = ("reviewers",)
    raw_id_fields = ("submission",)


@admin.register(TraceAssignment)
class TraceAssignmentAdmin(admin.ModelAdmin):
    list_display = ("trace", "reviewer", "status", "locked_until", "updated_at")
    list_filter = ("status",)
    raw_id_fields = ("trace",)


@admin.register(HumanVerdict)
class HumanVerdictAdmin(admin.ModelAdmin):
    list_display = ("trace", "reviewer", "answer_correct", "created_at", "updated_at")
    raw_id_fields = ("trace",)
    readonly_fields = ("created_at", "updated_at")


admin.site.register(Trace)
