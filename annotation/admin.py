from django.contrib import admin

from annotation.models import Annotation, Benchmark, Category, Domain, KeyStep, ReferenceToolCall, Region, Sample


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
    list_display = ["slug", "name", "version", "license", "updated_at"]
    search_fields = ["slug", "name"]
    inlines = [DomainInline]


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
    readonly_fields = ["image_sha256", "width", "height", "created_at", "updated_at"]


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
