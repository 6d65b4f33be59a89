"""The benchmark data model: benchmarks, their taxonomy, samples (I, Q, A) and annotations (E, K, toolchain).

A sample holds what the dataset builder wrote (image, question, options, answer); an annotation
holds what annotators add (regions and recovery transform E, key steps K, reference toolchain).
A sample has at most one approved annotation: that one counts for scoring and export.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Benchmark(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    version = models.CharField(max_length=32, default="1.0")
    description = models.TextField(blank=True)
    license = models.CharField(max_length=100, blank=True)
    citation = models.TextField(blank=True)
    # Tool names of the registry the benchmark's models may call; empty means the whole registry.
    tools = models.JSONField(default=list, blank=True)
    # Fixed cost bounds for the rank score in $ per sample (RouterArena fixes them); else derived.
    cost_min = models.FloatField(null=True, blank=True)
    cost_max = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                name="benchmark_cost_bounds_both_or_neither",
                condition=Q(cost_min__isnull=True, cost_max__isnull=True)
                | Q(cost_min__isnull=False, cost_max__isnull=False, cost_min__gt=0, cost_max__gt=models.F("cost_min")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


class Domain(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="domains")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["benchmark", "position", "slug"]
        constraints = [models.UniqueConstraint(fields=["benchmark", "slug"], name="domain_slug_unique_in_benchmark")]

    def __str__(self) -> str:
        return self.name


class Category(models.Model):
    domain = models.ForeignKey(Domain, on_delete=models.CASCADE, related_name="categories")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["domain", "position", "slug"]
        verbose_name_plural = "categories"
        constraints = [models.UniqueConstraint(fields=["domain", "slug"], name="category_slug_unique_in_domain")]

    def __str__(self) -> str:
        return f"{self.domain.name} / {self.name}"


class AnswerType(models.TextChoices):
    CHOICE = "choice", "Multiple choice"
    NUMBER = "number", "Number"
    TEXT = "text", "Text"


class Split(models.TextChoices):
    DEV = "dev", "Dev (public answers)"
    TEST = "test", "Test (hidden answers)"


class Sample(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="samples")
    # The domain is reached through the category, so the two can never disagree.
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="samples")
    uid = models.CharField(max_length=128)
    image = models.FileField(upload_to="benchmarks/", max_length=255)
    image_sha256 = models.CharField(max_length=64)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    question = models.TextField()
    options = models.JSONField(null=True, blank=True)
    answer = models.TextField()
    answer_type = models.CharField(max_length=8, choices=AnswerType.choices)
    tolerance = models.FloatField(null=True, blank=True)
    split = models.CharField(max_length=4, choices=Split.choices, default=Split.TEST)
    aux_line = models.BooleanField(default=False)
    source = models.CharField(max_length=200, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)  # line order in the imported file
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "position", "uid"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "uid"], name="sample_uid_unique_in_benchmark"),
            models.CheckConstraint(name="sample_image_has_size", condition=Q(width__gt=0, height__gt=0)),
            models.CheckConstraint(name="sample_answer_not_empty", condition=~Q(answer="")),
            models.CheckConstraint(name="sample_question_not_empty", condition=~Q(question="")),
            models.CheckConstraint(
                name="sample_answer_type_valid", condition=Q(answer_type__in=[c.value for c in AnswerType])
            ),
            models.CheckConstraint(name="sample_split_valid", condition=Q(split__in=[c.value for c in Split])),
            # Options exist exactly for multiple-choice samples.
            models.CheckConstraint(
                name="sample_options_iff_choice",
                condition=Q(answer_type=AnswerType.CHOICE, options__isnull=False)
                | (~Q(answer_type=AnswerType.CHOICE) & Q(options__isnull=True)),
            ),
            models.CheckConstraint(
                name="sample_tolerance_non_negative", condition=Q(tolerance__isnull=True) | Q(tolerance__gte=0)
            ),
        ]
        indexes = [models.Index(fields=["benchmark", "split"])]

    def __str__(self) -> str:
        return self.uid

    @property
    def domain(self) -> Domain:
        return self.category.domain


class AnnotationStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Submitted for review"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class Annotation(models.Model):
    """One annotator's E, K and reference toolchain for a sample (or the imported one)."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="annotations")
    # Null for annotations that came with an imported benchmark file.
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations"
    )
    status = models.CharField(max_length=10, choices=AnnotationStatus.choices, default=AnnotationStatus.DRAFT)
    # The recovery transform E: ordered operations ({"op": tool name, **args}) on the given image.
    transform = models.JSONField(default=list, blank=True)
    version = models.PositiveIntegerField(default=1)  # bumped on every save; stale saves are refused
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["sample", "-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["sample"], condition=Q(status="approved"), name="one_approved_annotation_per_sample"
            ),
            models.CheckConstraint(
                name="annotation_status_valid", condition=Q(status__in=[c.value for c in AnnotationStatus])
            ),
        ]

    def __str__(self) -> str:
        who = self.annotator.get_username() if self.annotator_id else "import"
        return f"{self.sample.uid} by {who} ({self.status})"


class Region(models.Model):
    """A key region: a box in full-size pixels of the image after the recovery transform."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="regions")
    position = models.PositiveSmallIntegerField()
    x1 = models.FloatField()
    y1 = models.FloatField()
    x2 = models.FloatField()
    y2 = models.FloatField()
    label = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["annotation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "position"], name="region_position_unique"),
            models.CheckConstraint(
                name="region_box_well_formed",
                condition=Q(x1__gte=0, y1__gte=0, x2__gt=models.F("x1"), y2__gt=models.F("y1")),
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.x1:g}, {self.y1:g}, {self.x2:g}, {self.y2:g}]"

    def as_box(self) -> list[float]:
        return [self.x1, self.y1, self.x2, self.y2]


class StepOrigin(models.TextChoices):
    HUMAN = "human", "Written by a person"
    LLM = "llm", "Drafted by an LLM"


class KeyStep(models.Model):
    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="key_steps")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    origin = models.CharField(max_length=5, choices=StepOrigin.choices, default=StepOrigin.HUMAN)
    verified = models.BooleanField(default=False)

    class Meta:
        ordering = ["annotation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "position"], name="key_step_position_unique"),
            models.CheckConstraint(name="key_step_text_not_empty", condition=~Q(text="")),
            models.CheckConstraint(
                name="key_step_origin_valid", condition=Q(origin__in=[c.value for c in StepOrigin])
            ),
        ]

    def __str__(self) -> str:
        return f"{self.position + 1}. {self.text[:60]}"


class ReferenceToolCall(models.Model):
    """One call of the reference toolchain: a registry tool on an input image reference."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="tool_calls")
    position = models.PositiveSmallIntegerField()
    tool = models.CharField(max_length=64)
    args = models.JSONField(default=dict, blank=True)
    input_ref = models.CharField(max_length=32, default="img0")
    output_ref = models.CharField(max_length=32)

    class Meta:
        ordering = ["annotation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "position"], name="tool_call_position_unique"),
            models.UniqueConstraint(fields=["annotation", "output_ref"], name="tool_call_output_unique"),
            models.CheckConstraint(name="tool_call_output_not_original", condition=~Q(output_ref="img0")),
        ]

    def __str__(self) -> str:
        return f"{self.output_ref} = {self.tool}({self.input_ref})"

    def as_dict(self) -> dict:
        return {"tool": self.tool, "args": self.args, "input": self.input_ref, "output": self.output_ref}
