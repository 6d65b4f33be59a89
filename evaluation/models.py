from urllib.parse import urlencode

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from config.storages import private_storage, random_name
from evaluation.converters import FORMAT_CHOICES
from evaluation.metrics.types import MODES
from evaluation.model_meta import format_parameters, validate_http_url, validate_parameters, validate_release_date


class JudgeVerdict(models.Model):
    """One cached judge verdict, keyed by (judge, prompt version, input hash).

    Re-scoring asks the cache first, so a question answered once is never paid for again,
    and every figure can be traced down to the verdicts it stands on.
    """

    judge = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    input_hash = models.CharField(max_length=64)
    verdict = models.JSONField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "prompt_version", "input_hash"], name="judge_verdict_unique_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} {self.prompt_version} {self.input_hash[:12]}"


# ---------------------------------------------------------------------------------------------
# Submissions (issue 5). Everything below is the submission pipeline's.


class SubmissionStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    VALIDATING = "validating", "Validating"
    SCORING = "scoring", "Scoring"
    JUDGING = "judging", "Judging"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


FINAL_STATUSES = (SubmissionStatus.DONE, SubmissionStatus.FAILED)
ACTIVE_STATUSES = (
    SubmissionStatus.QUEUED, SubmissionStatus.VALIDATING, SubmissionStatus.SCORING, SubmissionStatus.JUDGING,
)


class Provenance(models.TextChoices):
    """Where a submission's file came from (spec/runs.md, "The verified tier")."""

    FILE = "file", "submitted file"
    RUN = "run", "run by the platform"


class Weights(models.TextChoices):
    UNKNOWN = "", "Not stated"
    OPEN = "open", "Open weights"
    CLOSED = "closed", "Closed weights"


def prediction_file_name(instance: "Submission", filename: str) -> str:
    """A random name in private storage: the file is served to its owner and staff only (docs/security.md)."""
    return random_name(timezone.now().strftime("submissions/%Y/%m"), filename)


# "On the board": public, done, not deleted: what every public page, export, API and refresh shows (and
# whose predictions people may see in trace review: docs/security.md). The one definition: a field ->
# the value it must have; ``on_board_q`` turns it into a condition, ``Submission.is_on_board`` checks a row.
ON_BOARD = {"status": SubmissionStatus.DONE, "is_public": True, "deleted_at": None}


def on_board_q(prefix: str = "") -> Q:
    """``ON_BOARD`` as a condition on submissions, or on rows that lead to one (``prefix="submission__"``).
    A submission published and later re-scored, unpublished or deleted drops out."""
    cond = {}
    for name, value in ON_BOARD.items():
        if value is None:
            cond[f"{prefix}{name}__isnull"] = True
        else:
            cond[f"{prefix}{name}"] = value
    return Q(**cond)


class SubmissionQuerySet(models.QuerySet):
    def on_board(self) -> "SubmissionQuerySet":
        """The submissions the public pages show (``on_board_q``)."""
        return self.filter(on_board_q())


# What asking for the authors' full pipeline does, in the same words wherever it is asked (submit
# --full-pipeline, the upload API's full_pipeline, the upload form): docs/metrics.md section 13.
FULL_PIPELINE_HELP = ("under a scoring profile, the authors' full pipeline: rows their rule leaves to their LLM judge "
                      "are undecided (not wrong) until an LLM judge decides them (docs/metrics.md)")


class Submission(models.Model):
    """One prediction file and the model it came from; its scores once the pipeline is done.

    The uploaded file is kept whatever happens to it. ``results`` holds the per-mode aggregates
    (``evaluation.reports.report_to_json``); ``PredictionResult`` rows hold the per-prediction detail.
    """

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.PROTECT, related_name="submissions")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="submissions")
    # Model metadata (comes with the upload, not in the file).
    model_name = models.CharField(max_length=200)
    organisation = models.CharField(max_length=200, blank=True)
    model_url = models.URLField(max_length=500, blank=True, validators=[validate_http_url])  # code or model card
    paper_url = models.URLField(max_length=500, blank=True, validators=[validate_http_url])
    weights = models.CharField(max_length=6, choices=Weights.choices, default=Weights.UNKNOWN, blank=True)
    parameters_billions = models.FloatField(null=True, blank=True, validators=[validate_parameters])
    license = models.CharField(max_length=100, blank=True)  # as the model card states it: "Apache-2.0", "proprietary"
    release_date = models.DateField(null=True, blank=True, validators=[validate_release_date])
    price_input_per_mtok = models.FloatField(null=True, blank=True)   # USD per million input tokens
    price_output_per_mtok = models.FloatField(null=True, blank=True)  # USD per million output tokens
    description = models.TextField(blank=True)
    # Visibility: private until the owner publishes; deletion is soft so scores stay auditable.
    is_public = models.BooleanField(default=False)
    is_demo = models.BooleanField(default=False)  # a simulated demo entry (evaluation/simulator.py)
    # "run": the file was made by a hosted run of the platform's harness (HostedRun.submission), whose
    # record is ``run_record``: harness and prompt versions, sampling settings, the date, the model ids
    # the endpoint returned and the model it was asked for. "file": uploaded.
    provenance = models.CharField(max_length=4, choices=Provenance.choices, default=Provenance.FILE)
    run_record = models.JSONField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    # The prediction file in our format: as uploaded, or converted from ``source_file``. Both in private
    # storage under random names (docs/security.md).
    file = models.FileField(upload_to=prediction_file_name, max_length=255, storage=private_storage)
    # The format it was uploaded in (evaluation.converters); for an author's format the upload
    # is kept as it came in ``source_file`` and converted by the validation stage into ``file``.
    format = models.CharField(max_length=12, choices=FORMAT_CHOICES, default="jsonl")
    source_file = models.FileField(upload_to=prediction_file_name, max_length=255, blank=True, storage=private_storage)
    original_name = models.CharField(max_length=255, blank=True)
    file_size = models.BigIntegerField(default=0)
    # The pipeline.
    status = models.CharField(max_length=10, choices=SubmissionStatus.choices, default=SubmissionStatus.QUEUED)
    # Bumped on every status change and progress report; the sweeper judges staleness by it.
    heartbeat_at = models.DateTimeField(default=timezone.now)
    # How many times the current stage was claimed (started) by a worker; reset when a stage moves
    # on. Counted at the claim, so a file that kills its worker every time still uses up its tries.
    attempts = models.PositiveSmallIntegerField(default=0)
    # Who holds the current stage ("host:pid:random", empty when nobody): a delivery of the same
    # stage claims it only if this is empty or the holder's heartbeat is older than
    # SUBMISSION_STUCK_SECONDS (evaluation/pipeline/claims.py, _claim).
    claim_token = models.CharField(max_length=64, blank=True, default="")
    # Its current stage's message could not be published (the broker was down: at upload, or when the
    # previous stage finished). The sweeper sends it at its next run, instead of waiting for the stage to
    # look stuck; a successful send clears it (services.submissions_sweep, queueing.submission_enqueue).
    enqueue_failed = models.BooleanField(default=False)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    failure_reason = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)  # [{"line", "field", "message"}], first N
    # What the conversion from an author's format read differently from the file, without refusing it
    # (a repeated VTC-Bench item: the last line kept); shown on the submission page and in the API.
    conversion_warnings = models.JSONField(default=list, blank=True)
    # Under a scoring profile: the authors' full pipeline (with their LLM judge) rather than their exact
    # matching (FULL_PIPELINE_HELP says it the same way in the command, the API and the upload form):
    # matching, so rows their rule leaves to the judge are undecided until an LLM judge decides them
    # (docs/metrics.md, "Undecided is not wrong").
    full_pipeline = models.BooleanField(default=False)
    errors_truncated = models.BooleanField(default=False)
    n_lines = models.PositiveIntegerField(default=0)
    n_predictions = models.PositiveIntegerField(default=0)
    coverage = models.JSONField(default=dict, blank=True)  # {mode: {"predicted", "missing", "missing_examples"}}
    # Tool calls the scorer counts invalid by rule (unknown tool, outside the tool set, bad
    # arguments), found while validating: {"count", "examples": [{"line", "field", "message"}]}.
    tool_notes = models.JSONField(default=dict, blank=True)
    # With a remote judge, before it is paid (evaluation/judge_estimate.py): questions, cached,
    # requests, input_tokens, output_tokens, cost_usd. Empty with the offline judge.
    judge_estimate = models.JSONField(default=dict, blank=True)
    # Results (kept through a re-score until the new ones replace them).
    results = models.JSONField(null=True, blank=True)
    scorer_version = models.CharField(max_length=64, blank=True)
    judge_name = models.CharField(max_length=200, blank=True)
    # The row's digests (evaluation.metrics.digest; docs/runs.md "The verified tier"): sha256 over its
    # canonical per-sample records with the scorer and judge-prompt versions, all of them and the dev
    # split's, stored when scoring finishes (a read never computes them); ``digest_parts`` holds the same
    # per mode: {"modes": {mode: hex}, "dev_modes": {mode: hex}}. Empty: scored before digests existed
    # ("not available" until a re-score).
    digest = models.CharField(max_length=64, blank=True)
    digest_dev = models.CharField(max_length=64, blank=True)
    digest_parts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When it was first done; a re-score moves finished_at (and hides the row meanwhile), not this. The
    # leaderboard as of a date and the progress chart place a model by it (docs/leaderboard.md).
    first_finished_at = models.DateTimeField(null=True, blank=True)
    scored_at = models.DateTimeField(null=True, blank=True)

    objects = SubmissionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                name="submission_status_valid", condition=Q(status__in=[c.value for c in SubmissionStatus])
            ),
            models.CheckConstraint(name="submission_weights_valid", condition=Q(weights__in=[c.value for c in Weights])),
            models.CheckConstraint(
                name="submission_prices_non_negative",
                condition=(Q(price_input_per_mtok__isnull=True) | Q(price_input_per_mtok__gte=0))
                & (Q(price_output_per_mtok__isnull=True) | Q(price_output_per_mtok__gte=0)),
            ),
            models.CheckConstraint(
                name="submission_parameters_positive",
                condition=Q(parameters_billions__isnull=True) | Q(parameters_billions__gt=0),
            ),
            models.CheckConstraint(name="submission_model_name_not_empty", condition=~Q(model_name="")),
            models.CheckConstraint(name="submission_format_valid", condition=Q(format__in=[c[0] for c in FORMAT_CHOICES])),
        ]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="submission_sweep_idx"),
            models.Index(fields=["owner", "benchmark", "created_at"], name="submission_quota_idx"),
            models.Index(fields=["benchmark", "is_public"], name="submission_board_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.model_name} on {self.benchmark_id} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("evaluation:detail", args=[self.pk])

    def get_board_row_url(self) -> str:
        """The board's overview searched for the model (so the row is on the first page) and scrolled to
        its row (``row-s<id>``; leaderboard_tags.overview_row). By URL name: evaluation imports no leaderboard
        code."""
        query = urlencode({"q": self.model_name})
        return f"{reverse('leaderboard:board', args=[self.benchmark.slug])}?{query}#row-s{self.pk}"

    @property
    def is_on_board(self) -> bool:
        return all(getattr(self, name) == value for name, value in ON_BOARD.items())

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def is_converting(self) -> bool:
        """Validating an author-format upload not yet converted: progress counts rows or items read."""
        return self.status == SubmissionStatus.VALIDATING and self.format != "jsonl" and not self.file

    @property
    def parameters_label(self) -> str:
        """"7B", "1.5B", "500M"; empty when not stated."""
        return format_parameters(self.parameters_billions)

    @property
    def prices(self) -> tuple[float, float] | None:
        if self.price_input_per_mtok is None or self.price_output_per_mtok is None:
            return None
        return (self.price_input_per_mtok, self.price_output_per_mtok)


class PredictionResult(models.Model):
    """What the scorer decided about one prediction line (metrics.types.PredictionResult)."""

    # No index of its own: the unique constraint below leads with submission_id and serves every
    # lookup by submission; a second index only cost ~0.2 s per 91,620-row write (PostgreSQL).
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="prediction_results",
                                   db_index=False)
    sample = models.ForeignKey("annotation.Sample", on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=8)
    correct = models.BooleanField()
    decided_by = models.CharField(max_length=210)  # "rule", "judge:<name>", or "undecided" (needs an LLM judge)
    extracted = models.TextField(blank=True)
    answer_verdict = models.BooleanField(null=True)
    n_steps = models.PositiveIntegerField(default=0)
    n_calls = models.PositiveIntegerField(default=0)
    l_eff = models.PositiveIntegerField(default=0)
    l_gt = models.PositiveIntegerField(default=0)
    calls = models.JSONField(default=list, blank=True)  # [{"name", "valid", "decided_by", "errors"}]
    effective = models.JSONField(default=list, blank=True)
    toolset_prf = models.JSONField(null=True, blank=True)
    edit_distance = models.FloatField(null=True, blank=True)
    key_steps = models.JSONField(null=True, blank=True)
    kcov = models.FloatField(null=True, blank=True)
    kcov_any = models.FloatField(null=True, blank=True)
    step_scores = models.JSONField(null=True, blank=True)
    step_score = models.FloatField(null=True, blank=True)
    iou = models.FloatField(null=True, blank=True)
    tokens = models.BigIntegerField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["submission", "id"]
        constraints = [
            # Re-running a stage can never leave two rows for one prediction.
            models.UniqueConstraint(fields=["submission", "sample", "mode"], name="prediction_result_unique"),
            models.CheckConstraint(name="prediction_result_mode_valid",
                                   condition=Q(mode__in=list(MODES))),
        ]

    def __str__(self) -> str:
        verdict = "right" if self.correct else "undecided" if self.decided_by == "undecided" else "wrong"
        return f"{self.submission_id} {self.sample_id} {self.mode}: {verdict}"


class SweepRun(models.Model):
    """When the sweeper last ran and what it did (one row, pk 1; the admin health page reads it)."""

    ran_at = models.DateTimeField()
    resent = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"sweep at {self.ran_at:%Y-%m-%d %H:%M:%S}: re-sent {self.resent}, failed {self.failed}"


class WorkerBeat(models.Model):
    """A worker process's heartbeat, one row per queue it consumes: written by the worker itself every
    WORKER_HEARTBEAT_SECONDS (evaluation/worker_beats.py), read by the submission page, the API and the
    health page to say when no worker serves the pipeline's queue. Rows are kept after a worker stops:
    the last one seen is what the pages report."""

    worker = models.CharField(max_length=200)  # Celery's node name, e.g. "pipeline@host"
    queue = models.CharField(max_length=200)
    pid = models.PositiveIntegerField(default=0)
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["worker", "queue"], name="worker_beat_unique")]
        indexes = [models.Index(fields=["queue", "seen_at"], name="worker_beat_queue_seen")]

    def __str__(self) -> str:
        return f"{self.worker} on {self.queue}: seen {self.seen_at:%Y-%m-%d %H:%M:%S}"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    STOPPED = "stopped", "Stopped by its budget"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


RUN_ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)
RUN_FINAL_STATUSES = (RunStatus.DONE, RunStatus.STOPPED, RunStatus.CANCELLED, RunStatus.FAILED)


def run_file_name(instance: "HostedRun", filename: str) -> str:
    return random_name(timezone.now().strftime("runs/%Y/%m"), filename)


class HostedRun(models.Model):
    """A run of the harness on the workers (spec/runs.md, docs/runs.md "Hosted runs"): a benchmark's
    split, a model behind an endpoint, the modes and settings; its progress, spending and failures;
    once done, the submission its file became (provenance "run").

    The API key is stored encrypted (``evaluation.secrets``, Fernet), shown to no one, and emptied when
    the run ends unless ``keep_endpoint``. A worker claims the run (``claim_token``) and renews
    ``heartbeat_at``; a run whose heartbeat goes stale is sent again by the sweeper and resumes from the
    request cache, so nothing is paid twice; after RUNS_MAX_ATTEMPTS it fails with a reason.
    """

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.PROTECT, related_name="hosted_runs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="hosted_runs")
    endpoint = models.URLField(max_length=500)
    model = models.CharField(max_length=200)  # the name the endpoint serves
    api_key_encrypted = models.TextField(blank=True)
    keep_endpoint = models.BooleanField(default=False)
    modes = models.JSONField(default=list)
    split = models.CharField(max_length=8, default="all")
    # Harness settings: family, protocol, max_turns, concurrency, max_tokens, temperature, seed, budget_usd.
    options = models.JSONField(default=dict, blank=True)
    # The submission's details: model_name, organisation, weights, prices, is_public ... (as the upload form's).
    details = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    estimate = models.JSONField(default=dict, blank=True)
    spent_usd = models.FloatField(default=0.0)
    requests_sent = models.PositiveIntegerField(default=0)
    requests_cached = models.PositiveIntegerField(default=0)
    # Requests sent again because the worker that sent them first died before their answer (both were paid).
    requests_resent = models.PositiveIntegerField(default=0)
    failures = models.JSONField(default=dict, blank=True)
    # Pairs asked again in a later pass because the provider was unavailable, by the class they had failed with.
    retried = models.JSONField(default=dict, blank=True)
    model_ids = models.JSONField(default=list, blank=True)
    failure_reason = models.TextField(blank=True)
    predictions = models.FileField(upload_to=run_file_name, max_length=255, blank=True, storage=private_storage)
    submission = models.OneToOneField(Submission, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="hosted_run")
    claim_token = models.CharField(max_length=80, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Its message could not be published (the broker was down): the sweeper's next run sends it.
    enqueue_failed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="hosted_run_status_beat")]
        constraints = [
            models.CheckConstraint(name="hosted_run_status_valid", condition=Q(status__in=[c.value for c in RunStatus])),
            models.CheckConstraint(name="hosted_run_split_valid", condition=Q(split__in=["all", "dev", "test"])),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.model} on {self.benchmark_id} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("runs:detail", args=[self.pk])

    @property
    def is_final(self) -> bool:
        return self.status in RUN_FINAL_STATUSES

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)


class DerivedState(models.Model):
    """Which ``Benchmark.results_version`` one kind of figure derived from a benchmark's public results was
    last built for, and what that build stored (docs/architecture.md, "Derived figures").

    A refresh task per kind (settings.RESULTS_CHANGED_TASKS) builds it when the version moves; readers
    only read it: when ``version`` is behind the benchmark's they serve this build, marked as updating.
    ``payload`` holds a kind's own build where it has no table of its own (the board has BoardEntry and
    EntryRank; the router pool's baselines and the guessability audit's rows are stored here).
    """

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16)  # board | routers | guessability | agentx
    version = models.PositiveBigIntegerField(default=0)
    built_at = models.DateTimeField(null=True)  # None: never built
    payload = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "kind"], name="derived_state_unique_kind")]

    def __str__(self) -> str:
        return f"{self.kind} of benchmark {self.benchmark_id} at version {self.version}"


class ResultsChange(models.Model):
    """Which submission a move of ``Benchmark.results_version`` was for (``services.benchmark_results_bump``), written
    in the change's transaction: a refresh reads the changes since the version it last built, so it finds what
    changed without comparing every submission with its derived row (the board's refresh, issue 37). A row without
    a submission: a change to no particular one (reported rows loaded) or to any (a bulk write), for which the
    refresh compares them all. Versions commit in order (the bump holds the benchmark's row until commit), so the
    changes up to a version read are all there."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+")
    version = models.PositiveBigIntegerField()  # the results_version the change moved the benchmark to
    submission_id = models.IntegerField(null=True)  # not a key: the row outlives a deleted submission
    anything = models.BooleanField(default=False)  # any submission may have changed: compare them all

    class Meta:
        indexes = [models.Index(fields=["benchmark", "version"], name="results_change_version_idx")]

    def __str__(self) -> str:
        return f"change {self.version} of benchmark {self.benchmark_id}: submission {self.submission_id}"
