"""``leaderboard.csv``'s CSVW metadata (``/b/<slug>/leaderboard.csv-metadata.json``, config/csvw.py): every
column of the benchmark's CSV with its title, datatype and unit. The column names stay as they are (an outside
interface, interfaces.md); this is where their units are. docs/leaderboard.md, "Units of the CSV"."""

from __future__ import annotations

from typing import Any

from annotation.models import Benchmark
from config.csvw import Column, table_metadata
from evaluation.agentx_figures import EXACT_COLUMNS, JUDGED_COLUMNS, JUDGED_KEYS, NEEDS_JUDGE
from evaluation.metrics.types import MODES
from leaderboard import agentx_tab, tools_tab
from leaderboard.author_figures_view import RULES
from leaderboard.exports import AGENTX_KEYS, csv_header

PCT = "percent"
_FIGURES = {"text": ("Accuracy, text mode", PCT), "adaptive": ("Accuracy, adaptive mode (tools offered)", PCT),
            "oracle": ("Accuracy, oracle mode (the reference toolchain's images given)", PCT),
            "mcc": ("Mode selection: Matthews correlation of 'called a tool' with 'text mode was wrong', in [-1, 1]",
                    "dimensionless, -1 to 1"),
            "kcov": ("Key-step coverage, adaptive mode", PCT),
            "tool_eff": ("Tool effectiveness, adaptive mode: share of calls that are valid and useful", PCT)}
_BOUNDS = {"": "", "_low": ", lower end of its 95 % bootstrap interval",
           "_high": ", upper end of its 95 % bootstrap interval"}

FIXED: dict[str, Column] = {c.name: c for c in [
    Column("rank", "Position on the board in the default order (adaptive accuracy, descending)", "integer"),
    Column("model", "The model's name as submitted"),
    Column("organisation", "Who made the model, as submitted"),
    Column("weights", "open or closed weights, as submitted"),
    Column("date", "When the row was scored (ISO 8601, UTC); empty on the authors' reported rows", "datetime"),
    Column("submission_id", "The submission's id (/b/<slug>/m/<id>/); empty on the authors' reported rows",
           "integer"),
    Column("source", "'submission' or 'reported by the authors'"),
    Column("simulated_demo", "True on the demo's simulated rows", "boolean"),
    *[Column(f"{name}{suffix}", f"{label}{_BOUNDS[suffix]}", "number", unit)
      for name, (label, unit) in _FIGURES.items() for suffix in _BOUNDS],
    Column("answered", "Share of the samples with an answer and no failure class, in the headline mode", "number",
           PCT),
    Column("tokens", "Mean tokens per sample (input and output), in the headline mode", "number", "tokens per sample"),
    Column("cost_per_10k_usd", "Cost of answering 10,000 samples at the submitted prices, in the headline mode",
           "number", "USD per 10,000 samples"),
    Column("rank_score", "RouterArena's accuracy-cost score (b = 0.1), in [0, 1], headline mode", "number",
           "dimensionless, 0 to 1"),
    Column("headline_mode", "The mode the row's answered, tokens, cost and rank score refer to"),
    Column("citation", "The paper a reported row comes from"),
    Column("tied_rank", "Rank in the default order shared with neighbours that do not differ significantly",
           "integer"),
    Column("rank_low", "Best end of the rank's 95 % interval: 1 + the entries whose own 95 % bootstrap interval "
           "of the figure lies wholly above this entry's", "integer"),
    Column("rank_high", "Worst end of the rank's 95 % interval: the entries (this one too) whose own 95 % "
           "bootstrap interval of the figure reaches this entry's", "integer"),
    Column("p_vs_above", "p-value of the paired test against the entry above (exact McNemar)", "number",
           "probability, 0 to 1"),
    Column("significant_vs_above", "True when p_vs_above < 0.05", "boolean"),
    Column("parameters_billions", "Parameter count as the submitter stated it", "number", "billions of parameters"),
    Column("license", "The model's license, as submitted"),
    Column("release_date", "The model's release date, as submitted", "date"),
    Column("model_url", "The model's page, as submitted", "url"),
    Column("paper_url", "The model's paper, as submitted", "url"),
    Column("provenance", "run: a hosted run of the platform's harness; file: an uploaded file; empty: reported"),
    Column("digest", "sha256 (hex) of the row's canonical per-sample records (docs/runs.md)"),
    Column("digest_dev", "sha256 (hex) of the dev split's records"),
    Column("run_mismatch", "Set when the endpoint answered as another model than the run asked for"),
    Column("protocol_version", "The protocol a harness-made row ran under (/b/<slug>/protocol/)"),
    Column("protocol_source", "Who says so: recorded by the platform's run, or the uploaded file's claim"),
    Column("scoring", "The scoring profile whose rules decided the answers (docs/metrics.md); empty on reported rows"),
    Column("not_available", "Why an empty figure is empty: 'figure: reason', separated by ' | '"),
]}


def _agentx(name: str) -> Column:
    key, suffix = next((k, name[len(f"agentx_{k}"):]) for k in sorted(AGENTX_KEYS, key=len, reverse=True)
                       if name.startswith(f"agentx_{k}"))
    labels = {k: label for k, label, _ in EXACT_COLUMNS} | dict(zip(JUDGED_KEYS, JUDGED_COLUMNS, strict=True))
    # a judged figure scored by the offline judge reads NEEDS_JUDGE in the value cell: no value, not text
    return Column(name, f"Agent-X: {labels[key]}{_BOUNDS[suffix]}", "number", PCT,
                  null=("", NEEDS_JUDGE) if not suffix else ("",))


def _tools(name: str) -> Column:
    key = name.removeprefix("tools_")
    label, _key, _better, scale = next(c for c in tools_tab.COLUMNS if c[1] == key)
    if scale == 1.0:
        return Column(name, f"What the tools changed, text -> adaptive: {label} (samples)", "integer", "samples")
    unit = "percentage points" if "(pp)" in label else PCT
    return Column(name, f"What the tools changed, text -> adaptive: {label}", "number", unit)


def _authors(name: str, scoring: str) -> Column:
    if name == "author_rule":
        return Column(name, "The authors' rule the author_* columns follow")
    for key, label, _ in RULES[scoring][1]:
        for mode in MODES:
            if name == f"author_{key}_{mode}":
                return Column(name, f"The authors' figure by their own rule: {label}, {mode} mode", "number", PCT)
    raise KeyError(name)


def column(name: str, scoring: str | None = None) -> Column:
    """The metadata of one CSV column; KeyError for a column this module does not describe."""
    if name in FIXED:
        return FIXED[name]
    if name.startswith("agentx_"):
        return _agentx(name)
    if name.startswith("tools_"):
        return _tools(name)
    if name.startswith("author_") and scoring in RULES:
        return _authors(name, str(scoring))
    raise KeyError(name)


def leaderboard_metadata(benchmark: Benchmark) -> dict[str, Any]:
    """The metadata of ``/b/<slug>/leaderboard.csv``, the columns exactly as that file's header has them."""
    header = csv_header(agentx=agentx_tab.shows_agentx(benchmark), tools=True,
                        authors_of=benchmark.scoring if benchmark.scoring in RULES else None)
    return table_metadata(
        csv_url="leaderboard.csv", title=f"{benchmark.name} leaderboard",
        description="The overview's rows in its default order; the same rows as leaderboard.json (docs/leaderboard.md)",
        columns=[column(name, benchmark.scoring) for name in header])
