"""The router track of a benchmark (docs/routers.md): its fixed split and the router submissions.

The pool itself (which models, their per-sample correctness and cost) is read from the
evaluation app's public scored submissions each time (``routers.pool``), unless it was imported from a
release's files (its cells are stored here); what must never move is stored here too: the split of the
benchmark's samples, drawn once by a fixed seed, and each pool version.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone


class RouterTrack(models.Model):
    """A benchmark's router track: the mode its pool is read in and the seed of its split."""

    benchmark = models.OneToOneField("annotation.Benchmark", on_delete=models.CASCADE, related_name="router_track")
    mode = models.CharField(max_length=8)
    seed = models.PositiveIntegerField(default=42)
    # Where the split came from: drawn by the seed (samples added later are split and appended), or a
    # release's SPLITS/*.jsonl (import_router_splits; samples it does not list stay out of the track).
    split_source = models.CharField(max_length=8, default="seed")
    # An imported pool (import_router_matrix): the pool is this version's own cells, not the leaderboard's
    # submissions. None: the pool is built from the public priced submissions.
    imported = models.ForeignKey("RouterPoolVersion", on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"router track of {self.benchmark_id} ({self.mode}, seed {self.seed})"


class RouterPoolVersion(models.Model):
    """One content of a track's pool: which model names, from which submissions, in which mode.

    A version names a content: the pool coming back to an earlier content is that earlier version again.
    """

    track = models.ForeignKey(RouterTrack, on_delete=models.CASCADE, related_name="pool_versions")
    number = models.PositiveIntegerField()
    signature = models.CharField(max_length=64)  # sha256 of [mode, sorted (model, submission id)], or of the imported content
    members = models.JSONField(default=dict)  # {model name: submission id}; {model name: None} when imported
    # "" for a pool built from the leaderboard's submissions; "imported from <files>" for one whose cells are
    # its own (RouterPoolCell), with the release's cost bounds when it gave them.
    origin = models.TextField(blank=True)
    bounds = models.JSONField(null=True, blank=True)  # [cmin, cmax] ($ per sample) from the release
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["track", "number"]
        constraints = [
            models.UniqueConstraint(fields=["track", "number"], name="router_pool_version_number"),
            models.UniqueConstraint(fields=["track", "signature"], name="router_pool_version_signature"),
        ]

    def __str__(self) -> str:
        return f"pool v{self.number} of {self.track_id}"


class RouterPoolCell(models.Model):
    """One (sample, model) of an imported pool: correct or not, and its cost. The model is a named pool
    member, not a Submission: an imported pool has no submissions behind it."""

    version = models.ForeignKey(RouterPoolVersion, on_delete=models.CASCADE, related_name="cells")
    sample = models.ForeignKey("annotation.Sample", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    correct = models.BooleanField()
    cost_usd = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "sample", "model"], name="router_cell_one_per_sample_model"),
            models.CheckConstraint(name="router_cell_cost_non_negative", condition=Q(cost_usd__gte=0)),
            models.CheckConstraint(name="router_cell_model_not_empty", condition=~Q(model="")),
        ]

    def __str__(self) -> str:
        return f"{self.model} on {self.sample_id} in {self.version_id}"


class RouterSplit(models.TextChoices):
    TRAIN = "train", "Train"
    DEV = "dev", "Dev"
    TEST = "test", "Test"


class RouterSplitSample(models.Model):
    """Which split one sample is in; written once, never changed (a sample added later is appended)."""

    track = models.ForeignKey(RouterTrack, on_delete=models.CASCADE, related_name="split_samples")
    sample = models.ForeignKey("annotation.Sample", on_delete=models.CASCADE, related_name="+")
    split = models.CharField(max_length=5, choices=RouterSplit.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["track", "sample"], name="router_split_one_per_sample"),
            models.CheckConstraint(name="router_split_valid", condition=Q(split__in=[c.value for c in RouterSplit])),
        ]
        indexes = [models.Index(fields=["track", "split"], name="router_split_idx")]

    def __str__(self) -> str:
        return f"{self.sample_id} in {self.split}"


class RouterStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    SCORING = "scoring", "Scoring"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class RouterSubmission(models.Model):
    """A router's picks on the test split (JSON Lines) and, once scored, its figures."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.PROTECT, related_name="router_submissions")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="router_submissions")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    is_public = models.BooleanField(default=False)
    file = models.FileField(upload_to="routers/%Y/%m/", max_length=255)
    original_name = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=8, choices=RouterStatus.choices, default=RouterStatus.QUEUED)
    status_at = models.DateTimeField(default=timezone.now)  # last status change; the sweeper reads it
    # Its message could not be published (the broker was down): the sweeper's next run sends it.
    enqueue_failed = models.BooleanField(default=False)
    failure_reason = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)  # [{"line", "field", "message"}], first 50
    # The pool it was scored on: {"mode", "models": {name: submission id}}, and that pool's version.
    pool = models.JSONField(default=dict, blank=True)
    pool_version = models.ForeignKey(RouterPoolVersion, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+")
    results = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(name="router_status_valid", condition=Q(status__in=[c.value for c in RouterStatus])),
            models.CheckConstraint(name="router_name_not_empty", condition=~Q(name="")),
        ]
        indexes = [models.Index(fields=["benchmark", "is_public", "status"], name="router_board_idx")]

    def __str__(self) -> str:
        return f"router #{self.pk} {self.name} on {self.benchmark_id} ({self.status})"

    def get_absolute_url(self) -> str:
        # The Routers tab is the leaderboard's (named by URL only: the leaderboard sits above this app).
        return reverse("leaderboard:tab", args=[self.benchmark.slug, "routers"]) + f"#router-{self.pk}"


class RouterReference(models.Model):
    """The platform's learned reference router (kNN over TF-IDF, docs/routers.md) for one pool content and
    split: trained on the worker, never in a web request; pages read its stored picks.

    ``inputs`` names everything training reads (the models, the train and test samples with their
    questions, train's Q and C), so a pool version whose data moved (a split appended to, a question
    edited) gets a new row, and the same inputs are never trained twice.
    """

    track = models.ForeignKey(RouterTrack, on_delete=models.CASCADE, related_name="references")
    pool_version = models.ForeignKey(RouterPoolVersion, on_delete=models.CASCADE, related_name="references")
    inputs = models.CharField(max_length=64)
    status = models.CharField(max_length=8, choices=RouterStatus.choices, default=RouterStatus.QUEUED)
    status_at = models.DateTimeField(default=timezone.now)  # last status change; the sweeper reads it
    # Its message could not be published (the broker was down): the sweeper's next run sends it.
    enqueue_failed = models.BooleanField(default=False)
    picks = models.JSONField(null=True, blank=True)  # {test sample uid: model name}
    failure_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["track", "inputs"], name="router_reference_one_per_inputs"),
            models.CheckConstraint(name="router_reference_status_valid",
                                   condition=Q(status__in=[c.value for c in RouterStatus])),
            models.CheckConstraint(name="router_reference_done_has_picks",
                                   condition=~Q(status=RouterStatus.DONE) | Q(picks__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"reference router of {self.track_id} on pool v{self.pool_version_id} ({self.status})"


class RouterReported(models.Model):
    """A router's figures as a paper printed them (VL-RouterBench's Table 2): shown badged with the
    citation, on the paper's own pool, so never in the chart, the frontier or the paired tests."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="router_reported")
    name = models.CharField(max_length=200)
    group = models.CharField(max_length=100, blank=True)
    position = models.PositiveSmallIntegerField(default=0)  # row order in the paper
    figures = models.JSONField(default=dict)  # accuracy (%), cost_per_10k_usd, rank_score (%), rank, throughput_ktok_s
    source = models.CharField(max_length=200)
    citation = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "name"], name="router_reported_unique_name"),
            models.CheckConstraint(name="router_reported_name_not_empty", condition=~Q(name="")),
        ]

    def __str__(self) -> str:
        return f"{self.name} (reported) on {self.benchmark_id}"
