from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from annotation.models import (
    Annotation,
    Benchmark,
    Category,
    DataDownload,
    Domain,
    KeyStep,
    ReferenceToolCall,
    Region,
    Sample,
)
from annotation.services import benchmark_scoring_set


class DomainInline(admin.TabularInline):
    model = Domain
    extra = 0


class CategoryInline(admin.TabularInline):
    model = Category
    extra = 0


class RegionInline(admin.TabularInline):
    model = Region
    extra = 0


class KeyStepInline(admin.TabularInline):
    model = KeyStep
    extra = 0


class ReferenceToolCallInline(admin.TabularInline):
    model = ReferenceToolCall
    extra = 0


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "version", "license", "scoring", "updated_at"]
    list_filter = ["scoring"]
    search_fields = ["slug", "name"]
    inlines = [DomainInline]

    def save_model(self, request: HttpRequest, obj: Benchmark, form: Any, change: bool) -> None:
        scoring = obj.scoring
        if change and "scoring" in form.changed_data:
            # Saved through the service, so the benchmark's submissions are re-scored by the new rules.
            obj.scoring = form.initial.get("scoring", obj.scoring)
            super().save_model(request, obj, form, change)
            benchmark_scoring_set(benchmark=obj, scoring=scoring)
            return
        super().save_model(request, obj, form, change)


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "benchmark", "position"]
    list_filter = ["benchmark"]
    inlines = [CategoryInline]


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "domain", "position"]
    list_filter = ["domain__benchmark", "domain"]
    list_select_related = ["domain"]


@admin.register(Sample)
class SampleAdmin(admin.ModelAdmin):
    list_display = ["uid", "benchmark", "category", "answer_type", "split", "aux_line", "width", "height"]
    list_filter = ["benchmark", "split", "answer_type", "aux_line", "category__domain"]
    list_select_related = ["benchmark", "category__domain"]
    search_fields = ["uid", "question"]
    # The image is in private storage and has no URL (docs/security.md): shown by name, replaced by an import.
    exclude = ["image"]
    readonly_fields = ["image_name", "image_sha256", "width", "height", "created_at", "updated_at"]

    @admin.display(description="image (private storage)")
    def image_name(self, obj: Sample) -> str:
        return obj.image.name


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["sample", "annotator", "status", "version", "updated_at"]
    list_filter = ["status", "sample__benchmark"]
    list_select_related = ["sample", "annotator"]
    search_fields = ["sample__uid"]
    inlines = [RegionInline, KeyStepInline, ReferenceToolCallInline]


@admin.register(Region)
class RegionAdmin(admin.ModelAdmin):
    list_display = ["annotation", "position", "x1", "y1", "x2", "y2", "label"]
    list_select_related = ["annotation__sample"]


@admin.register(KeyStep)
class KeyStepAdmin(admin.ModelAdmin):
    list_display = ["annotation", "position", "text", "origin", "verified"]
    list_filter = ["origin", "verified"]
    list_select_related = ["annotation__sample"]


@admin.register(ReferenceToolCall)
class ReferenceToolCallAdmin(admin.ModelAdmin):
    list_display = ["annotation", "position", "tool", "input_ref", "output_ref"]
    list_filter = ["tool"]
    list_select_related = ["annotation__sample"]


# --- the annotator's workbench -------------------------------------------------------------
from annotation.models import Assignment, BenchmarkRole, KeyStepDraft, ReviewDecision, ReviewNote, Revision  # noqa: E402


@admin.register(BenchmarkRole)
class BenchmarkRoleAdmin(admin.ModelAdmin):
    list_display = ["user", "role", "benchmark"]
    list_filter = ["role", "benchmark"]
    list_select_related = ["user", "benchmark"]
    autocomplete_fields = ["user"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["sample", "annotator", "status", "locked_until", "updated_at"]
    list_filter = ["status", "sample__benchmark"]
    list_select_related = ["sample", "annotator"]
    search_fields = ["sample__uid", "annotator__username"]
    raw_id_fields = ["sample", "annotation"]


@admin.register(Revision)
class RevisionAdmin(admin.ModelAdmin):
    list_display = ["annotation", "version", "kind", "author", "created_at"]
    list_filter = ["kind"]
    list_select_related = ["annotation__sample", "author"]
    raw_id_fields = ["annotation"]


class ReviewNoteInline(admin.TabularInline):
    model = ReviewNote
    extra = 0


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(admin.ModelAdmin):
    list_display = ["sample", "action", "reviewer", "created_at"]
    list_filter = ["action"]
    list_select_related = ["sample", "reviewer"]
    raw_id_fields = ["sample", "annotation"]
    inlines = [ReviewNoteInline]


@admin.register(KeyStepDraft)
class KeyStepDraftAdmin(admin.ModelAdmin):
    list_display = ["annotation", "status", "model", "prompt_version", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["annotation"]


@admin.register(DataDownload)
class DataDownloadAdmin(admin.ModelAdmin):
    """Built by the task only (docs/downloads.md): read here, rebuilt with `manage.py build_downloads`."""

    list_display = ("benchmark", "split", "kind", "status", "sample_count", "size_bytes", "built_at", "key")
    list_filter = ("status", "kind", "split", "benchmark")
    readonly_fields = [f.name for f in DataDownload._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
