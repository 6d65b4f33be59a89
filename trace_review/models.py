"""Trace review: batches of model traces, who judges which, and what they said (docs/trace_review.md).

A trace is one prediction of a submission, named by (submission, sample, mode) rather than by its
``PredictionResult`` row: a re-score deletes and re-inserts those rows, and human verdicts must
outlive that. The judge's verdicts are read from the current rows when agreement is computed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from evaluation.metrics.types import BOARD_MODES as MODES  # the one definition


class TraceReviewBatch(models.Model):
    """A set of traces to review: one submission's, or a stratified sample across submissions."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="trace_batches")
    name = models.CharField(max_length=200)
    # Empty: a stratified sample over the benchmark's scored submissions (equal share each, spread
    # over domains); set: that submission's traces only.
    submission = models.ForeignKey("evaluation.Submission", on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="trace_batches")
    mode = models.CharField(max_length=8, default="adaptive", choices=[(m, m) for m in MODES])
    size = models.PositiveIntegerField(help_text="How many traces to draw (fewer when fewer exist).")
    people_per_trace = models.PositiveSmallIntegerField(default=2)
    seed = models.IntegerField(default=0)
    # Empty: anyone with the annotator or reviewer role on the benchmark may take traces.
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="trace_batches")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(name="trace_batch_people_positive", condition=Q(people_per_trace__gte=1)),
            models.CheckConstraint(name="trace_batch_size_positive", condition=Q(size__gte=1)),
            models.CheckConstraint(name="trace_batch_mode_valid", condition=Q(mode__in=MODES)),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.benchmark_id})"

    def get_absolute_url(self) -> str:
        return reverse("trace_review:batch", args=[self.pk])


class Trace(models.Model):
    batch = models.ForeignKey(TraceReviewBatch, on_delete=models.CASCADE, related_name="traces")
    submission = models.ForeignKey("evaluation.Submission", on_delete=models.PROTECT, related_name="+")
    sample = models.ForeignKey("annotation.Sample", on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=8)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["batch", "position"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "submission", "sample", "mode"], name="trace_unique"),
            models.UniqueConstraint(fields=["batch", "position"], name="trace_position_unique"),
        ]

    def __str__(self) -> str:
        return f"trace {self.pk}: submission {self.submission_id}, sample {self.sample_id}, {self.mode}"


class TraceAssignmentStatus(models.TextChoices):
    ACTIVE = "active", "In progress"
    DONE = "done", "Done"
    SKIPPED = "skipped", "Skipped"


class TraceAssignment(models.Model):
    """One person's slot on one trace, held by a soft lock while active (like the workbench's queue)."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="trace_assignments")
    status = models.CharField(max_length=8, choices=TraceAssignmentStatus.choices,
                              default=TraceAssignmentStatus.ACTIVE)
    locked_until = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["trace", "reviewer"], name="trace_assignment_unique"),
            models.CheckConstraint(name="trace_assignment_status_valid",
                                   condition=Q(status__in=[c.value for c in TraceAssignmentStatus])),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer_id} on trace {self.trace_id} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("trace_review:review", args=[self.pk])


class HumanVerdict(models.Model):
    """What one person said about one trace, in the shape the judges answer in.

    ``key_steps`` has one matched flag per gold key step, ``calls`` one valid flag per tool call,
    ``step_scores`` one of 1 / 0.5 / 0 per reasoning step; each list follows the order shown.
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="verdicts")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="trace_verdicts")
    answer_correct = models.BooleanField()
    key_steps = models.JSONField(default=list, blank=True)
    calls = models.JSONField(default=list, blank=True)
    step_scores = models.JSONField(default=list, blank=True)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["trace", "created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["trace", "reviewer"], name="human_verdict_unique")]

    def __str__(self) -> str:
        return f"{self.reviewer_id} on trace {self.trace_id}"


class JudgeStabilityRun(models.Model):
    """The judge asked again, N times, about a seeded sample of a benchmark's cached questions
    (docs/judges.md, "Judge stability"). The cached verdicts are never touched; the repeats are
    kept here, one row a question and repeat."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="stability_runs")
    judge = models.CharField(max_length=200)
    prompt_versions = models.JSONField(default=dict)  # kind -> "kind.vN", as the cache keys them
    sample_size = models.PositiveIntegerField()  # questions actually drawn (fewer when fewer are cached)
    repeats = models.PositiveSmallIntegerField()
    seed = models.IntegerField(default=0)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.judge} on {self.benchmark_id}: {self.sample_size} x {self.repeats}"


class JudgeRepeatVerdict(models.Model):
    run = models.ForeignKey(JudgeStabilityRun, on_delete=models.CASCADE, related_name="verdicts")
    kind = models.CharField(max_length=40)  # answer_equivalence, key_step_matching, ...
    input_hash = models.CharField(max_length=64)
    repeat = models.PositiveSmallIntegerField()
    verdict = models.JSONField()  # the judge's label: true/false, or a list of them / of 1, 0.5, 0

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "input_hash", "repeat"], name="judge_repeat_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} repeat {self.repeat} of run {self.run_id}"
