"""The leaderboard's own tables: a derived row per scored submission, and the papers' reported results.

``BoardEntry`` is a cache in table form, never a source of truth: everything in it is derived from
a submission's ``results`` and its ``PredictionResult`` rows, and ``services.entries_sync`` rebuilds
it whenever the submission's ``scored_at`` moves. It exists because the overview must sort 1,000
submissions in milliseconds, and parsing 1,000 full ``results`` documents per request cannot.

``ReportedResult`` holds the numbers a benchmark's authors printed (AdaptMMBench Tables 1-3): they
are shown badged with their citation and never enter routing baselines or paired tests.
"""

from __future__ import annotations

from django.db import models

from evaluation.models import on_board_q


class BoardEntryQuerySet(models.QuerySet):
    def on_board(self) -> BoardEntryQuerySet:
        """Entries whose submission is on the board now (public, done, not deleted): checked at read time,
        so an unpublished or deleted row leaves every page at once, before the refresh drops its entry."""
        return self.filter(on_board_q("submission__"))


class BoardEntry(models.Model):
    submission = models.OneToOneField("evaluation.Submission", on_delete=models.CASCADE, related_name="board_entry")
    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+")
    # The submission's scored_at and heartbeat_at this row was built from. The pipeline moves the
    # heartbeat on every stage, so a re-score makes the row stale; heartbeat_at is compared rather than
    # scored_at because SQLite stores it before the large ``results`` column (no overflow-page reads).
    scored_at = models.DateTimeField(null=True)
    heartbeat_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)  # copied so the overview never reads the submission's late columns
    # Copied for the Progress tab's months (progress_store.month_summary reads a month from the index below, not
    # through every submission): when the submission was first scored (its first_finished_at, else finished_at),
    # that month in UTC as YYYYMM, and its weights (services.entry_copies); and the headline mode's accuracy.
    # Nullable so that SQLite adds the columns without copying the table (a column with a default, or not null,
    # makes Django rebuild it); migration 0019 filled them on the rows built before.
    first_at = models.DateTimeField(null=True)
    first_month = models.PositiveIntegerField(null=True)
    weights = models.CharField(max_length=6, null=True, blank=True)  # noqa: DJ001 - see above
    headline_acc = models.FloatField(null=True)
    # The mode the overview's cost, tokens and rank score refer to (adaptive when scored, else text).
    headline_mode = models.CharField(max_length=8, blank=True)
    # Overview figures, in percent for shares; each with its 95 % bootstrap interval where the library gives one.
    text_acc = models.FloatField(null=True)
    text_lo = models.FloatField(null=True)
    text_hi = models.FloatField(null=True)
    adaptive_acc = models.FloatField(null=True)
    adaptive_lo = models.FloatField(null=True)
    adaptive_hi = models.FloatField(null=True)
    oracle_acc = models.FloatField(null=True)
    oracle_lo = models.FloatField(null=True)
    oracle_hi = models.FloatField(null=True)
    mcc = models.FloatField(null=True)
    mcc_lo = models.FloatField(null=True)
    mcc_hi = models.FloatField(null=True)
    kcov = models.FloatField(null=True)
    kcov_lo = models.FloatField(null=True)
    kcov_hi = models.FloatField(null=True)
    kcov_n = models.PositiveIntegerField(default=0)
    tool_eff = models.FloatField(null=True)
    tool_eff_lo = models.FloatField(null=True)
    tool_eff_hi = models.FloatField(null=True)
    tokens = models.FloatField(null=True)  # mean input + output tokens per sample, headline mode
    # Share of samples answered (an answer and no failure class), headline mode, in percent; null for
    # results scored before it was recorded (results format 1): "not available", never 0.
    answered = models.FloatField(null=True)
    cost = models.FloatField(null=True)  # mean $ per sample, headline mode
    # Where the row came from (Submission.provenance: "run" or "file"), the public part of a run's record
    # (evaluation.provenance.public_run; {} for a file), and the row digests (docs/runs.md, "The verified
    # tier"): empty when scored before digests existed, shown as "not available".
    provenance = models.CharField(max_length=4, default="file")
    run_info = models.JSONField(default=dict)
    digest = models.CharField(max_length=64, blank=True)
    digest_dev = models.CharField(max_length=64, blank=True)
    # Why a figure of the row is not available (metrics.md section 14), by figure: {"tool_eff": "no tool
    # calls in this file", "cost": ...}; a figure not named has a value or was never recorded.
    reasons = models.JSONField(default=dict)
    # Large values last: SQLite walks a value's overflow pages to read any column stored after it, and
    # the overview reads only the columns above (migration 0003 put these at the end of the table).
    # Per-sample vectors over the benchmark's non-aux samples (by primary key), for paired tests and
    # routing: {mode: "10-1?..."} with 1 right, 0 wrong, - no prediction (wrong), ? undecided (a row left to an
    # LLM judge: neither); {mode: [cost $, ...]};
    # {mode: [tokens, ...]}; "invoked" is the adaptive mode's tool use as a 1/0/- string.
    correct = models.JSONField(default=dict)
    invoked = models.TextField(blank=True)
    costs = models.JSONField(default=dict)
    token_counts = models.JSONField(default=dict)
    # Accuracy per domain split by recovery transform: {mode: {domain: {"wo_enh": [count, n, undecided],
    # "all": [...]}}} (entries built before migration 0011 had [count, n]; figures.cell_fig reads both).
    domain_table = models.JSONField(default=dict)
    built_at = models.DateTimeField(auto_now=True)

    objects = BoardEntryQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["benchmark", "scored_at"], name="board_entry_benchmark_idx"),
            # Narrow indexes the overview reads instead of the wide rows (their vectors fill a page each):
            # the count and cost bounds, and the default order (adaptive accuracy, then finished, id).
            models.Index(fields=["benchmark", "cost"], name="board_entry_cost_idx"),
            models.Index(fields=["benchmark", "-adaptive_acc", "finished_at", "submission"],
                         name="board_entry_adaptive_idx"),
            # The other ranked orders, read by the ranks' update after a change (rank_update: an entry's place
            # in the order, found by LIMIT 1 queries), and by the overview sorted by them.
            models.Index(fields=["benchmark", "-text_acc", "finished_at", "submission"], name="board_entry_text_idx"),
            models.Index(fields=["benchmark", "-oracle_acc", "finished_at", "submission"],
                         name="board_entry_oracle_idx"),
            models.Index(fields=["benchmark", "-mcc", "finished_at", "submission"], name="board_entry_mcc_idx"),
            # A Progress month's entries of one kind of weights as a range (its count), best first in the order
            # that picks the month's best (progress_store.month_summary: a LIMIT 1 is one seek).
            models.Index(fields=["benchmark", "first_month", "weights", "-headline_acc", "first_at", "finished_at",
                                 "submission"], name="board_entry_month_idx"),
        ]

    def __str__(self) -> str:
        return f"board entry of submission {self.submission_id}"


class BoardCounts(models.Model):
    """How many of the board's public rows have each kind of figure, the overview's cost bounds and the Tools
    tab's row count, as the board's last build counted them (``selectors.figures_present``, written by
    ``services.board_refresh``, which also brings them up by what changed from here): one narrow row the overview
    and the tabs offered read by its key, the counts' one copy (not in the build's payload, which SQLite's JSON
    functions parse whole to extract any part of it)."""

    benchmark = models.OneToOneField("annotation.Benchmark", on_delete=models.CASCADE, primary_key=True,
                                     related_name="+")
    counts = models.JSONField(default=dict)

    def __str__(self) -> str:
        return f"board counts of benchmark {self.benchmark_id}"


class ParetoPoint(models.Model):
    """One public submission's figures on the Cost & Pareto tab in one accuracy mode (leaderboard.pareto_store),
    written by the board's refresh when its entry is built: the point in dollars and in tokens, and what the
    routing baselines need of its per-sample vectors (their length, mean accuracy and mean costs). A row exists
    where the mode has an accuracy or an accuracy left to an LLM judge (``reason``)."""

    submission = models.ForeignKey("evaluation.Submission", on_delete=models.CASCADE, related_name="+")
    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=8)
    finished_at = models.DateTimeField(null=True)  # the tab's order: finished, then id (selectors.tab_sources)
    # "<model name> (s<id>)" at the build: the frontier's and the baselines' tie-break (metrics.pareto_frontier);
    # a rename moves the submission's heartbeat, so the row is written again
    name = models.CharField(max_length=300)
    weights = models.CharField(max_length=6, blank=True)  # which of the figure's marker groups it falls in
    accuracy = models.FloatField(null=True)  # a share; null: not available
    usd = models.FloatField(null=True)  # mean $ per sample; null: not plotted in dollars
    tokens = models.FloatField(null=True)  # mean tokens per sample; null: not plotted in tokens
    reason = models.TextField(blank=True)  # why the accuracy is not available, when rows need an LLM judge
    # Its vectors (BoardEntry.correct, costs, token_counts) for the routing baselines: their length (null: not a
    # member: no vectors, or an undecided row), the share right, the mean cost in each unit
    base_n = models.PositiveIntegerField(null=True)
    base_acc = models.FloatField(null=True)
    base_usd = models.FloatField(null=True)
    base_tokens = models.FloatField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["submission", "mode"], name="pareto_point_unique_mode")]
        indexes = [models.Index(fields=["benchmark", "mode", "finished_at", "submission"], name="pareto_point_order_idx"),
                   # the frontier's neighbourhood after a frontier point left (pareto_store._frontier_update), and
                   # the page's notes: the rows without a cost in a unit, without an accuracy, in the tab's order
                   models.Index(fields=["benchmark", "mode", "usd", "finished_at", "submission"],
                                name="pareto_point_usd_idx"),
                   models.Index(fields=["benchmark", "mode", "tokens", "finished_at", "submission"],
                                name="pareto_point_tokens_idx"),
                   models.Index(fields=["benchmark", "mode", "accuracy", "finished_at", "submission"],
                                name="pareto_point_accuracy_idx")]

    def __str__(self) -> str:
        return f"{self.mode} Pareto point of submission {self.submission_id}"


class ParetoState(models.Model):
    """What the Cost & Pareto tab draws for one accuracy mode and cost unit, over the submissions of the board's
    last build (leaderboard.pareto_store): counts, the frontier, the routing baselines and the per-sample
    minima the Oracle is updated from. The authors' reported rows are merged in when the page is read."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+")
    mode = models.CharField(max_length=8)
    unit = models.CharField(max_length=6)
    # {"plotted", "positive" (a cost above 0), "unplotted", "undecided", "groups": {weights: plotted above 0}}
    counts = models.JSONField(default=dict)
    frontier = models.JSONField(default=list)  # [[submission id, name, accuracy, cost], ...] by ascending cost
    baselines = models.JSONField(default=list)  # [{"kind", "submission_id", "accuracy", "cost", "n"}, ...]
    # The baselines' state: the Strongest and Cheapest members, the members' vector lengths, and per sample the
    # cheapest right member and the cheapest member (pareto_store.Oracle); large, so last (SQLite)
    picks = models.JSONField(default=dict)
    oracle = models.BinaryField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "mode", "unit"], name="pareto_state_unique")]

    def __str__(self) -> str:
        return f"Pareto state of benchmark {self.benchmark_id}, {self.mode}, {self.unit}"


class ReportedResult(models.Model):
    """One model's figures as printed by a benchmark's authors; ``figures`` follows docs/leaderboard.md."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="reported_results")
    model_name = models.CharField(max_length=200)
    organisation = models.CharField(max_length=200, blank=True)
    weights = models.CharField(max_length=6, blank=True)  # open | closed | "" (as Submission.weights)
    position = models.PositiveSmallIntegerField(default=0)  # row order in the paper
    figures = models.JSONField(default=dict)
    citation = models.TextField()
    source = models.CharField(max_length=200, blank=True)  # e.g. "AdaptMMBench (arXiv 2602.02676), Tables 1-3"
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "position", "model_name"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "model_name"], name="reported_result_unique_model"),
            models.CheckConstraint(name="reported_result_model_name_not_empty", condition=~models.Q(model_name="")),
        ]

    def __str__(self) -> str:
        return f"{self.model_name} (reported) on {self.benchmark_id}"


class EntryRank(models.Model):
    """One public submission's place on its whole board by one tested column, computed when the
    benchmark's results change (``services.board_refresh``), never per view: its position in the
    column's order, whether a tie group starts at it, its own 95 % bootstrap interval of the column's
    statistic, the rank interval counted from every entry's own interval, and the paired test against the
    entry above it (docs/metrics.md section 8, "Honest ranks").

    ``position``, ``rank_low`` and ``rank_high`` are as of the row's ``seq``: a refresh after a change writes the
    changed entries' rows and records each entry it took out or put in as a ``RankShift``; a row's figures now are
    its stored ones moved by the shifts recorded after it (``leaderboard.rank_read``), so that a change does not
    rewrite every row below it. The shared rank is the position of the group's first entry (``starts_group``)."""

    # No index of their own: the unique (submission, metric) and the (benchmark, metric, ...) indexes serve both
    # keys, and each index is one more write per row a refresh writes (on PostgreSQL, each row's new version).
    submission = models.ForeignKey("evaluation.Submission", on_delete=models.CASCADE, related_name="+",
                                   db_index=False)
    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+", db_index=False)
    metric = models.CharField(max_length=8)  # text | adaptive | oracle (accuracy) | mcc
    # The entry's place in the order (value descending, then finished, then id): its value and finish as ranked.
    value = models.FloatField(null=True)
    finished_at = models.DateTimeField(null=True)
    position = models.PositiveIntegerField()  # 1-based, as of ``seq``
    starts_group = models.BooleanField(default=False)  # the first entry, or significantly below the one above
    rank_low = models.PositiveIntegerField(null=True)  # as of ``seq``
    rank_high = models.PositiveIntegerField(null=True)
    # The entry's own 95 % bootstrap interval of the statistic (accuracy as a share, or MCC) the rank interval
    # is counted from; null, with the rank interval, for an entry whose vector is not the board's length.
    stat_low = models.FloatField(null=True)
    stat_high = models.FloatField(null=True)
    above = models.IntegerField(null=True)  # the submission id of the entry above in this order
    p_above = models.FloatField(null=True)
    significant_above = models.BooleanField(null=True)
    seq = models.PositiveIntegerField(default=0)  # the last RankShift this row's figures include (0: a build's)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["submission", "metric"], name="entry_rank_unique_metric")]
        indexes = [models.Index(fields=["benchmark", "metric", "position"], name="entry_rank_position_idx"),
                   # the order, for the neighbours of a change (rank_update) and a group's first entry (rank_read)
                   models.Index(fields=["benchmark", "metric", "-value", "finished_at", "submission"],
                                name="entry_rank_order_idx"),
                   models.Index(fields=["benchmark", "metric", "-value", "finished_at", "submission"],
                                condition=models.Q(starts_group=True), name="entry_rank_group_start_idx"),
                   models.Index(fields=["benchmark", "metric", "stat_low"], name="entry_rank_stat_low_idx"),
                   models.Index(fields=["benchmark", "metric", "stat_high"], name="entry_rank_stat_high_idx")]

    def __str__(self) -> str:
        return f"place {self.position} of submission {self.submission_id} by {self.metric}"


class RankShift(models.Model):
    """An entry taken out of (``delta`` -1) or put into (+1) a ranked order by a refresh after a change, with its
    place in the order and its own interval: every row written before it (a lower ``seq``) moves by it where the
    entry is ahead of it (position) or its interval crosses the row's (rank interval ends). Cleared when the
    ranks are compacted or built whole (``rank_update.ranks_compact``, ``services.ranks_build``)."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+")
    metric = models.CharField(max_length=8)
    seq = models.PositiveIntegerField()
    submission_id = models.IntegerField()  # not a key: the submission may be gone
    value = models.FloatField()
    finished_at = models.DateTimeField(null=True)
    delta = models.SmallIntegerField()
    stat_low = models.FloatField()
    stat_high = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["benchmark", "metric", "seq"], name="rank_shift_seq_idx")]

    def __str__(self) -> str:
        return f"{'+' if self.delta > 0 else '-'} submission {self.submission_id} by {self.metric} at {self.seq}"


class TabIndexRow(models.Model):
    """A row of a wide tab's table (leaderboard.wide_tabs: Accuracy by domain, Mode selection, Reasoning process,
    Toolchains, Tools) in one of the tab's orders, so that a page of the tab is a range of an index: ``ORDER BY
    sort_key, tie, reported, finished_at, source_pos, mode_pos LIMIT 50 OFFSET k``.

    ``order`` names the order: the tab's own (its slug: the sources' order; Mode selection by MCC; Tools by tool
    contribution), or one of the Tools tab's other sorts (``tools:<column>:<1 descending | 0 ascending>``).
    ``sort_key`` and ``tie`` are the row's place in it (0 where the sources' order alone decides; never null:
    a row without the value has a key above every value, so it goes last on both databases), then the sources'
    order: the submissions by (finished_at, id), then the authors' reported rows (``source_pos`` their place
    in ReportedResult's order), a submission's modes in the table's order (``mode_pos``). The rows of a tab's
    own order carry the values the tab marks its best and second-best by (``values``, a value per column), and the
    Tools tab's its figures as shown (``figures``).
    Written by the board's refresh for the submissions it rebuilt (and every reported row), deleted for those
    that left the board; the full build writes them all."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="+",
                                  db_index=False)  # the order index starts with it
    order = models.CharField(max_length=32)
    submission = models.ForeignKey("evaluation.Submission", on_delete=models.CASCADE, null=True, related_name="+")
    key = models.CharField(max_length=16)  # the table row's source: "s<submission id>" or "r<reported result id>"
    mode = models.CharField(max_length=20)
    sort_key = models.FloatField()
    tie = models.FloatField()
    reported = models.BooleanField()
    finished_at = models.DateTimeField(null=True)
    source_pos = models.BigIntegerField()
    mode_pos = models.SmallIntegerField()
    values = models.JSONField(null=True)
    # The Tools tab's own-order rows: the row's figures as a page shows them, intervals and all (``wide_tabs``:
    # [value, low, high, n, digits, reason] per column), drawn by the refresh so that a page draws no bootstrap.
    figures = models.JSONField(null=True)

    class Meta:
        # the page's columns (key, mode) last: the walk to a page's offset reads the index alone (PostgreSQL read
        # each skipped row's heap tuple without them: 130-260 ms to the middle of 300,000 rows, 25 ms with them)
        indexes = [models.Index(fields=["benchmark", "order", "sort_key", "tie", "reported", "finished_at",
                                        "source_pos", "mode_pos", "key", "mode"], name="tab_index_order_idx")]

    def __str__(self) -> str:
        return f"{self.order} row {self.key} {self.mode}"
