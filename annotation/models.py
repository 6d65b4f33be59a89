"""The benchmark data model: benchmarks, their taxonomy, samples (I, Q, A) and annotations (E, K, toolchain).

A sample holds what the dataset builder wrote (image, question, options, answer); an annotation
holds what annotators add (regions and recovery transform E, key steps K, reference toolchain).
A sample has at most one approved annotation: that one counts for scoring and export.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from config.storages import private_storage, random_name


class ScoringProfile(models.TextChoices):
    """Which rule decides an answer's correctness (metrics.md section 13; evaluation/metrics/profiles.py)."""

    GENERIC = "generic", "Platform rules (metrics.md section 1)"
    VTCBENCH = "vtcbench", "VTC-Bench's released rules"
    VLMEVALKIT = "vlmevalkit", "VLMEvalKit's matching"
    MMREASON = "mmreason", "MMReason's evaluation (VLMEvalKit)"
    HRBENCH = "hrbench", "HR-Bench's evaluation (VLMEvalKit, cycles averaged)"
    TREEBENCH = "treebench", "TreeBench's evaluation (VLMEvalKit, with mean IoU)"
    TIRBENCH = "tirbench", "TIR-Bench's calculate_score.py"


class Benchmark(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    version = models.CharField(max_length=32, default="1.0")
    description = models.TextField(blank=True)
    license = models.CharField(max_length=100, blank=True)
    citation = models.TextField(blank=True)
    # Tool names of the registry the benchmark's models may call; empty means the whole registry.
    tools = models.JSONField(default=list, blank=True)
    # Tools the benchmark declares but the registry does not run (Agent-X's OCR, WebSearch...):
    # [{"name", "description", "args_schema"}]; calls to them are validated, never run.
    declared_tools = models.JSONField(default=list, blank=True)
    # Extra figure sets the manifest declares (benchmark_format.KNOWN_FIGURES), e.g. ["agentx"].
    figures = models.JSONField(default=list, blank=True)
    # The scoring profile: whose rules decide answer correctness. Recorded in every result; changing it
    # re-scores the benchmark's submissions (evaluation.services.benchmark_scoring_changed).
    scoring = models.CharField(max_length=16, choices=ScoringProfile.choices, default=ScoringProfile.GENERIC)
    # Fixed cost bounds for the rank score in $ per sample (RouterArena fixes them); else derived.
    # Its dataset on the Hugging Face Hub ("org/name"), named by .eval_results exports (docs/interop.md).
    hf_dataset = models.CharField(max_length=200, blank=True, default="")
    cost_min = models.FloatField(null=True, blank=True)
    cost_max = models.FloatField(null=True, blank=True)
    # Oracle runs on the test split (docs/runs.md): the oracle image shows an endpoint the evidence of a
    # test item (not its answer nor the boxes' coordinates); a benchmark's admins may refuse them.
    oracle_runs_on_test = models.BooleanField(default=True)
    # Cross-validation: how many annotators work on each sample independently.
    annotators_per_item = models.PositiveSmallIntegerField(default=3)
    # Moves (F() + 1, ``evaluation.services.benchmark_results_bump``) in the same transaction as every
    # change to the benchmark's public results: a submission finishing, published, unpublished, deleted or
    # re-scored, reported rows loaded. The leaderboard keys its cache and its derived rows on it, so a
    # cached page costs one indexed read however many submissions there are.
    results_version = models.PositiveBigIntegerField(default=0, editable=False)
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
            models.CheckConstraint(name="benchmark_annotators_per_item_positive", condition=Q(annotators_per_item__gte=1)),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A full save of an instance read before a bump must not write its older results_version back.
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [f.name for f in self._meta.concrete_fields
                                       if not f.primary_key and f.name != "results_version"]
        super().save(*args, **kwargs)

    @property
    def version_label(self) -> str:
        """"v1.0" for a version number; a worded version as it is ("paper v1", the results-only entries of
        leaderboard/data/), which a "v" before it would turn into "vpaper v1"."""
        version = self.version.strip()
        return f"v{version}" if version[:1].isdigit() else version


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
    # Private storage, named by content hash (benchmark_import): test images are secret, and every image
    # is served through a view that checks access (docs/security.md).
    image = models.FileField(upload_to="benchmarks/", max_length=255, storage=private_storage)
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
    # The release reader's digest of the source row this sample was imported from (its text, the file's name and
    # header, the reader's version): a re-import recognises an unchanged row by it and does not decode its image
    # again. Empty when something outside the row feeds the sample (an image file, another row's image).
    source_digest = models.CharField(max_length=64, blank=True, default="")
    # MMReason's guessability audit, written by evaluation.services.guessability_refresh: None until
    # enough public blind submissions are counted (docs/metrics.md).
    guessable = models.BooleanField(null=True, blank=True)
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


class MediaKind(models.TextChoices):
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"


def sample_media_storage():  # noqa: ANN201 - a Storage; a callable, so it follows Sample.image's
    """The storage of Sample.image: a sample's other media live wherever its first image does."""
    return Sample._meta.get_field("image").storage


class SampleMedia(models.Model):
    """One medium of a sample, in order: position k is the reference `img<k>` (docs/formats.md).

    Imports write a row for every medium, the first included; a sample without rows (built by
    hand) has one medium, its `image`. `Sample.image` is always the first medium's still: the
    image itself, or a video's poster. A video keeps its file as uploaded plus `frames`, JPEG
    stills sampled evenly by OpenCV ([{"name": storage name, "time": seconds}], the poster first).
    """

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="media")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=5, choices=MediaKind.choices, default=MediaKind.IMAGE)
    file = models.FileField(upload_to="benchmarks/", max_length=255, storage=sample_media_storage)
    sha256 = models.CharField(max_length=64)
    width = models.PositiveIntegerField()  # a video's frame size
    height = models.PositiveIntegerField()
    frames = models.JSONField(default=list, blank=True)
    duration = models.FloatField(null=True, blank=True)  # seconds, videos only

    class Meta:
        ordering = ["sample", "position"]
        verbose_name_plural = "sample media"
        constraints = [
            models.UniqueConstraint(fields=["sample", "position"], name="sample_media_position_unique"),
            models.CheckConstraint(name="sample_media_kind_valid", condition=Q(kind__in=[c.value for c in MediaKind])),
            models.CheckConstraint(name="sample_media_has_size", condition=Q(width__gt=0, height__gt=0)),
            # A video always has its poster (frames[0]); an image has no frames.
            models.CheckConstraint(
                name="sample_media_frames_iff_video",
                condition=(Q(kind=MediaKind.IMAGE) & Q(frames=[])) | (Q(kind=MediaKind.VIDEO) & ~Q(frames=[])),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sample.uid} {self.ref} ({self.kind})"

    @property
    def ref(self) -> str:
        return f"img{self.position}"

    @property
    def poster(self) -> str | None:
        """Storage name of the still that stands for this medium (a video's first sampled frame)."""
        return self.frames[0]["name"] if self.kind == MediaKind.VIDEO and self.frames else None


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
    # The annotator's own reading of the sample (blank until given); the approved one is written
    # back to the Sample, so answers can be cross-validated without annotators seeing each other's.
    question = models.TextField(blank=True)
    options = models.JSONField(null=True, blank=True)
    answer = models.TextField(blank=True)
    answer_type = models.CharField(max_length=8, blank=True)
    # Set only when every reference call ran and was marked valid; any toolchain edit clears it.
    chain_verified = models.BooleanField(default=False)
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
    # The medium the box is on (img0 unless the sample has several); boxes on img0 are in the
    # frame after the recovery transform, boxes on another medium in its own pixels.
    image_ref = models.CharField(max_length=32, default="img0")

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
    note = models.TextField(blank=True)

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
    # The verifier's verdict on this step: unchecked, valid or invalid, with a note.
    verdict = models.CharField(max_length=9, default="unchecked")
    note = models.TextField(blank=True)
    # A name-only chain (VTC-Bench's reference chains): the tool's name, no arguments; never run.
    # Its references are stored as img<k> -> img<k+1> to keep the constraints, and not exported.
    name_only = models.BooleanField(default=False)

    class Meta:
        ordering = ["annotation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "position"], name="tool_call_position_unique"),
            models.UniqueConstraint(fields=["annotation", "output_ref"], name="tool_call_output_unique"),
            models.CheckConstraint(name="tool_call_output_not_original", condition=~Q(output_ref="img0")),
            models.CheckConstraint(
                name="tool_call_verdict_valid", condition=Q(verdict__in=["unchecked", "valid", "invalid"])
            ),
        ]

    def __str__(self) -> str:
        return f"{self.output_ref} = {self.tool}({self.input_ref})"

    @classmethod
    def rows_for(cls, annotation: Annotation, chain: list[dict]) -> list[ReferenceToolCall]:
        """Unsaved rows for a parsed chain (benchmark_fields.parse_toolchain); a name-only call
        keeps just its tool, with placeholder references img<k> -> img<k+1>."""
        return [
            cls(annotation=annotation, position=i, tool=c["tool"], name_only=True, input_ref=f"img{i}",
                output_ref=f"img{i + 1}")
            if set(c) == {"tool"} else
            cls(annotation=annotation, position=i, tool=c["tool"], args=c["args"], input_ref=c["input"],
                output_ref=c["output"])
            for i, c in enumerate(chain)
        ]  # fmt: skip

    def as_dict(self) -> dict:
        if self.name_only:
            return {"tool": self.tool}
        return {"tool": self.tool, "args": self.args, "input": self.input_ref, "output": self.output_ref}


# ---------------------------------------------------------------------------------------------
# The annotator's workbench (docs/annotation.md): roles, assignments, revisions, reviews, LLM drafts.
# Fields added to the models above: Benchmark.annotators_per_item, Annotation's proposed question
# and answer and chain_verified, KeyStep.note, ReferenceToolCall.verdict and note.


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Admin"


class BenchmarkRole(models.Model):
    """What a person may do on one benchmark; superusers act as admin everywhere."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="roles")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="benchmark_roles")
    role = models.CharField(max_length=10, choices=Role.choices)

    class Meta:
        ordering = ["benchmark", "role", "user"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "user", "role"], name="benchmark_role_unique"),
            models.CheckConstraint(name="benchmark_role_valid", condition=Q(role__in=[c.value for c in Role])),
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} on {self.benchmark.slug}"


class AssignmentStatus(models.TextChoices):
    ACTIVE = "active", "In progress"
    SUBMITTED = "submitted", "Submitted"
    RETURNED = "returned", "Returned by a reviewer"
    SKIPPED = "skipped", "Skipped"


class Assignment(models.Model):
    """One annotator's slot on one sample, with their own annotation (independent of the others)."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    annotation = models.OneToOneField(Annotation, on_delete=models.CASCADE, related_name="assignment")
    status = models.CharField(max_length=10, choices=AssignmentStatus.choices, default=AssignmentStatus.ACTIVE)
    # Soft lock: an active assignment holds one of the sample's N slots until this time; after it,
    # the slot may go to someone else (the draft stays with its author).
    locked_until = models.DateTimeField(null=True, blank=True)
    review_comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "annotator"], name="assignment_one_per_annotator"),
            models.CheckConstraint(
                name="assignment_status_valid", condition=Q(status__in=[c.value for c in AssignmentStatus])
            ),
        ]
        indexes = [models.Index(fields=["annotator", "status"])]

    def __str__(self) -> str:
        return f"{self.sample.uid} for {self.annotator} ({self.status})"

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("annotation:item", args=[self.pk])


class RevisionKind(models.TextChoices):
    SAVE = "save", "Saved"
    CONFLICT = "conflict", "Stale edit kept as a draft"
    SUBMIT = "submit", "Submitted"
    RESTORE = "restore", "Restored a kept draft"
    REVIEW = "review", "Reviewed"
    IMPORT = "import", "Imported from a file"


class Revision(models.Model):
    """A snapshot of an annotation after a save (who, when, what); a refused stale save is kept too."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    version = models.PositiveIntegerField()  # the annotation's version this snapshot is (or was based on)
    kind = models.CharField(max_length=10, choices=RevisionKind.choices, default=RevisionKind.SAVE)
    snapshot = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["annotation", "-created_at", "-pk"]
        indexes = [models.Index(fields=["annotation", "kind"])]

    def __str__(self) -> str:
        return f"{self.annotation_id} v{self.version} {self.kind}"


class ReviewAction(models.TextChoices):
    APPROVE = "approve", "Approved"
    REJECT = "reject", "Rejected"


class ReviewDecision(models.Model):
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="review_decisions")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    action = models.CharField(max_length=8, choices=ReviewAction.choices)
    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="review_decisions")
    comment = models.TextField(blank=True)
    agreement = models.JSONField(default=dict, blank=True)  # the figures the reviewer saw
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.sample.uid}: {self.action}"


class ReviewNotePart(models.TextChoices):
    REGION = "region", "Box"
    KEY_STEP = "key_step", "Key step"
    TOOL_CALL = "tool_call", "Tool call"


class ReviewNote(models.Model):
    """A reviewer's comment on one box, key step or tool call of an annotation they sent back.

    `position` is the item's place in the annotation as the reviewer saw it; `target` keeps what
    that item was (the box's coordinates, the step's text, the call), so the note stays readable
    after the annotator edits or reorders. Shown to that annotation's annotator only."""

    decision = models.ForeignKey(ReviewDecision, on_delete=models.CASCADE, related_name="notes")
    part = models.CharField(max_length=9, choices=ReviewNotePart.choices)
    position = models.PositiveSmallIntegerField()
    target = models.CharField(max_length=300)
    text = models.TextField()

    class Meta:
        ordering = ["decision", "pk"]  # written in the page's order: boxes, key steps, tool calls
        constraints = [
            models.UniqueConstraint(fields=["decision", "part", "position"], name="review_note_one_per_item"),
            models.CheckConstraint(name="review_note_text_not_empty", condition=~Q(text="")),
            models.CheckConstraint(
                name="review_note_part_valid", condition=Q(part__in=[c.value for c in ReviewNotePart])
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_part_display()} {self.position + 1}: {self.text[:60]}"


class DraftStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class KeyStepDraft(models.Model):
    """An LLM's key-step draft for an annotation; the annotator inserts and verifies the steps."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="step_drafts")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=8, choices=DraftStatus.choices, default=DraftStatus.QUEUED)
    prompt_version = models.CharField(max_length=32)
    model = models.CharField(max_length=100, blank=True)
    steps = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"draft for {self.annotation_id} ({self.status})"


# --- proposals from a model (docs/annotation.md "Proposals") ------------------------------------


class ProposalRunStatus(models.TextChoices):
    """A hosted run's statuses (evaluation.models.RunStatus), with the same meanings."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    STOPPED = "stopped", "Stopped by its budget"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


PROPOSAL_RUN_ACTIVE = (ProposalRunStatus.QUEUED, ProposalRunStatus.RUNNING)


class ProposalRun(models.Model):
    """A VLM endpoint asked for proposals on a benchmark's items (all of a split, or a selection), registered
    as a hosted run is (evaluation/proposal_runs.py: the address guard, the key encrypted with
    evaluation.secrets and emptied when the run ends, the estimate, the budget, the runs queue, claim and
    heartbeat). ``details``: the prices per million tokens and ``simulated`` (the demo's, labelled so)."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="proposal_runs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="proposal_runs")
    endpoint = models.URLField(max_length=500)
    model = models.CharField(max_length=200)  # the name the endpoint serves
    api_key_encrypted = models.TextField(blank=True)
    prompt_version = models.CharField(max_length=32)
    split = models.CharField(max_length=8, default="all")
    sample_uids = models.JSONField(default=list, blank=True)  # the selection; empty: every item of the split
    options = models.JSONField(default=dict, blank=True)  # max_tokens, temperature, seed, budget_usd
    details = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=ProposalRunStatus.choices, default=ProposalRunStatus.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    estimate = models.JSONField(default=dict, blank=True)
    spent_usd = models.FloatField(default=0.0)
    requests_sent = models.PositiveIntegerField(default=0)
    requests_cached = models.PositiveIntegerField(default=0)
    failures = models.JSONField(default=dict, blank=True)  # requests that got no answer, by class
    failure_reason = models.TextField(blank=True)
    claim_token = models.CharField(max_length=80, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    enqueue_failed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(name="proposal_run_status_valid",
                                   condition=Q(status__in=[c.value for c in ProposalRunStatus])),
            models.CheckConstraint(name="proposal_run_split_valid", condition=Q(split__in=["all", "dev", "test"])),
        ]

    def __str__(self) -> str:
        return f"proposal run {self.pk} of {self.model} on {self.benchmark_id} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status not in PROPOSAL_RUN_ACTIVE


class Proposal(models.Model):
    """One item's proposal from one run, kept apart from annotations: the model that answered, the prompt
    version, the raw reply, the parts that passed validation (a part that did not is null, its error in
    ``errors``; a request that got no answer has ``errors["request"]``). Never counted as an annotation."""

    run = models.ForeignKey(ProposalRun, on_delete=models.CASCADE, related_name="proposals")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="proposals")
    model = models.CharField(max_length=200)  # as the endpoint named itself in its answer
    prompt_version = models.CharField(max_length=32)
    raw_reply = models.TextField(blank=True)
    # [{"box": [x1, y1, x2, y2], "label"}] in img0's pixels after the proposed transform
    regions = models.JSONField(null=True, blank=True)
    transform = models.JSONField(null=True, blank=True)  # [{"op", **args}]
    key_steps = models.JSONField(null=True, blank=True)  # [str]
    toolchain = models.JSONField(null=True, blank=True)  # [{"tool", "args", "input", "output"}]
    confidence = models.FloatField(null=True, blank=True)
    errors = models.JSONField(default=dict, blank=True)  # part (or "reply", "request") -> the first problem
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "sample"]
        constraints = [models.UniqueConstraint(fields=["run", "sample"], name="proposal_one_per_run_and_sample")]

    def __str__(self) -> str:
        return f"proposal of run {self.run_id} for sample {self.sample_id}"

    @property
    def answered(self) -> bool:
        return "request" not in self.errors


class ProposalAction(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    EDITED = "edited", "Edited"
    REJECTED = "rejected", "Rejected"


class ProposalDecision(models.Model):
    """What an annotator did with one part of a proposal (a box, the transform, a key step, the chain),
    recorded on the annotation's history: the revision of the save that recorded it last, the action as the
    saved work shows it (a box taken then moved is ``edited``), and how far the final work is from the proposal:
    ``measure`` is the IoU of a box, the edit distance of a step (characters) or of the chain (calls); null for
    the transform and for a rejection. Workbench: annotation/workbench/proposals.py."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="proposal_decisions")
    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="decisions")
    revision = models.ForeignKey(Revision, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="proposal_decisions")
    part = models.CharField(max_length=10)  # region | transform | key_step | toolchain
    index = models.PositiveSmallIntegerField(default=0)  # the part's place in the proposal
    action = models.CharField(max_length=8, choices=ProposalAction.choices)
    measure = models.FloatField(null=True, blank=True)
    proposed = models.JSONField(null=True, blank=True)
    final = models.JSONField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["annotation", "part", "index"]
        constraints = [
            models.UniqueConstraint(fields=["annotation", "proposal", "part", "index"], name="proposal_decision_unique"),
            models.CheckConstraint(name="proposal_decision_action_valid",
                                   condition=Q(action__in=[c.value for c in ProposalAction])),
        ]

    def __str__(self) -> str:
        return f"{self.part} {self.index + 1} {self.action}"


# --- a benchmark's inputs as public downloads (docs/downloads.md) --------------------------------


class DownloadKind(models.TextChoices):
    ZIP = "zip", "JSON Lines + media (zip)"
    TSV = "tsv", "VLMEvalKit TSV"
    PARQUET = "parquet", "Parquet (Hugging Face datasets)"


class DownloadStatus(models.TextChoices):
    BUILDING = "building", "Being prepared"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


def download_file_name(instance: DataDownload, filename: str) -> str:
    """A random name in private storage: the file reaches a browser only through the download view."""
    return random_name(f"downloads/{instance.benchmark.slug}", filename)


class DataDownload(models.Model):
    """One built file of a benchmark split's inputs (zip, TSV or parquet), for one state of the benchmark.

    ``key`` is ``annotation.downloads.selectors.download_key``: the benchmark's version and a digest of
    everything a file holds, so it moves whenever the samples, their approved annotations or the manifest
    change. Rows are created by writes (import, approval, ``build_downloads``), never by a page; a
    task builds each once (claimed by ``claim_token``) and a newer ready build deletes the older ones.
    """

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="downloads")
    split = models.CharField(max_length=4, choices=Split.choices)
    kind = models.CharField(max_length=8, choices=DownloadKind.choices)
    key = models.CharField(max_length=80)
    status = models.CharField(max_length=8, choices=DownloadStatus.choices, default=DownloadStatus.BUILDING)
    file = models.FileField(upload_to=download_file_name, max_length=255, blank=True, storage=private_storage)
    size_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    sample_count = models.PositiveIntegerField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "split", "kind", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "split", "kind", "key"], name="download_once_per_key"),
            models.CheckConstraint(name="download_status_valid",
                                   condition=Q(status__in=[c.value for c in DownloadStatus])),
            models.CheckConstraint(name="download_kind_valid", condition=Q(kind__in=[c.value for c in DownloadKind])),
            # A ready download has its file and figures; the view serves nothing else.
            models.CheckConstraint(
                name="download_ready_has_file",
                condition=~Q(status=DownloadStatus.READY)
                | (~Q(file="") & Q(size_bytes__isnull=False, sample_count__isnull=False, built_at__isnull=False)),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark.slug} {self.split}.{self.kind} ({self.status}, {self.key})"
