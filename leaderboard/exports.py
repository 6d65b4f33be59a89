"""The leaderboard's rows as CSV and JSON (the same rows the overview shows, in its default order).

Each submission row carries its whole-board standing per tested ordering (``ranks``: the rank shared
with its tie group, the rank's 95 % interval counted from the entries' own bootstrap intervals, the paired test
against the entry above),
stored when the results changed (leaderboard.services.ranks_build). The CSV has the default
ordering's (adaptive accuracy). p-values are numbers here, at full precision.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import orjson

from annotation.models import Benchmark
from config.csv_cells import csv_text_cell
from evaluation.provenance import mismatch_text
from evaluation.derived import derived_read
from evaluation.metrics.types import MODES
from leaderboard import agentx_tab, board, tools_tab
from leaderboard.author_figures_view import NOT_SCORED, RULES, author_figures
from leaderboard.selectors import tab_sources

FIGURES = ("text", "adaptive", "oracle", "mcc", "kcov", "tool_eff")
CSV_HEADER = (
    ["rank", "model", "organisation", "weights", "date", "submission_id", "source", "simulated_demo"]
    + [f"{f}{s}" for f in FIGURES for s in ("", "_low", "_high")]
    + ["answered"]  # beside the figures; the columns are read by name
    + ["tokens", "cost_per_10k_usd", "rank_score", "headline_mode", "citation"]
    + ["tied_rank", "rank_low", "rank_high", "p_vs_above", "significant_vs_above"]
    + ["parameters_billions", "license", "release_date", "model_url", "paper_url"]
    + ["provenance", "digest", "digest_dev", "run_mismatch"]  # docs/runs.md, "The verified tier"
    + ["protocol_version", "protocol_source"]  # the protocol a harness-made row ran under (docs/runs.md)
    + ["scoring"]  # the scoring profile whose rules decided the answers (metrics.md section 13)
    + ["not_available"]  # why an empty figure is empty: "text_acc: 3 of 50 rows need an LLM judge; ..."
)
PROVENANCE = ("provenance", "digest", "digest_dev", "run_mismatch")
PROTOCOL_SOURCES = {"run": "recorded by the platform's run", "file": "the uploaded file's claim, not verified"}
MODEL_DETAILS = ("parameters_billions", "license", "release_date", "model_url", "paper_url")
Standings = dict[str, dict[int, board.Standing]]


def _standing(s: board.Standing | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"rank": s.shared_rank, "low": s.rank_low, "high": s.rank_high, "p_vs_above": s.p_above,
            "significant_vs_above": s.significant_above}


AGENTX_KEYS = tuple(k for k, _, _ in agentx_tab.EXACT_COLUMNS) + agentx_tab.JUDGED_KEYS


def agentx_figures(benchmark: Benchmark) -> dict[int, dict[str, dict[str, Any]]] | None:
    """Agent-X's ten figures per public submission (percent, with the interval), on a benchmark that
    declares them; a judged figure of a submission scored by the offline judge is
    ``{"value": None, ..., "status": "needs an LLM judge"}``, never a number."""
    if not agentx_tab.shows_agentx(benchmark):
        return None
    out: dict[int, dict[str, dict[str, Any]]] = {}
    for row in agentx_tab.agentx_context(benchmark)["rows"]:
        figs = {}
        for c in row.cells + row.judged:
            if c.get("needs_judge"):
                figs[c["key"]] = {"value": None, "low": None, "high": None, "n": 0, "status": agentx_tab.NEEDS_JUDGE}
            else:
                figs[c["key"]] = {"value": _pct(c["mean"]), "low": _pct(c["low"]), "high": _pct(c["high"]), "n": c["n"]}
        out[row.submission_id] = figs
    return out


def authors_figures(benchmark: Benchmark) -> dict[int, dict[str, Any]] | None:
    """The authors' own figures of each public submission row (HR-Bench's cycle average, TreeBench's accuracy
    and mean IoU, TIR-Bench's score; leaderboard/author_figures_view.py), on a benchmark whose scoring profile
    has them (None otherwise): ``{"rule", "figures": [{mode, key, label, value (percent), not_available}]}``,
    a figure undefined on the file null with the reason; a row scored before they existed says so."""
    if benchmark.scoring not in RULES:
        return None
    out: dict[int, dict[str, Any]] = {}
    for src in tab_sources(benchmark, [("author_figures",)], domain_table=False):
        if src.submission_id is None:
            continue
        rule, figures = author_figures(src.results)
        out[src.submission_id] = {
            "rule": rule or RULES[benchmark.scoring][0],
            "figures": [{"mode": f.mode, "key": f.key, "label": f.label, "value": f.percent,
                         "not_available": f.reason or None} for f in figures],
            "not_available": None if rule else NOT_SCORED}
    return out


def authors_csv_keys(scoring: str) -> list[str]:
    """The ``author_<key>_<mode>`` columns of a benchmark whose profile has the authors' figures, after
    ``author_rule``; their reasons, where not available, join the row's ``not_available`` column."""
    return ["author_rule"] + [f"author_{key}_{mode}" for key, _, _ in RULES[scoring][1] for mode in MODES]


def _authors_flat(scoring: str, row: dict[str, Any] | None) -> tuple[list[Any], list[str]]:
    """The ``author_*`` cells of one row, and its ``not_available`` notes ("author_miou_text: why")."""
    if row is None:
        return [None] * len(authors_csv_keys(scoring)), []
    by = {(f["key"], f["mode"]): f for f in row["figures"]}
    cells: list[Any] = [row["rule"]]
    notes = [f"author_figures: {row['not_available']}"] if row["not_available"] else []
    for key, _, _ in RULES[scoring][1]:
        for mode in MODES:
            f = by.get((key, mode))
            cells.append(f["value"] if f else None)
            if f and f["not_available"]:
                notes.append(f"author_{key}_{mode}: {f['not_available']}")
    return cells, notes


def _pct(v: float | None) -> float | None:
    return None if v is None else 100 * v


def _agentx_flat(figs: dict[str, dict[str, Any]] | None) -> list[Any]:
    out: list[Any] = []
    for key in AGENTX_KEYS:
        f = (figs or {}).get(key) or {}
        out += [f.get("status") or f.get("value"), f.get("low"), f.get("high")]
    return out


def ordered(rows: list[board.Row]) -> list[board.Row]:
    return board.ranked(board.sort_rows(rows, board.DEFAULT_SORT, True))


def row_dict(row: board.Row, standings: Standings | None = None, scoring: str | None = None) -> dict[str, Any]:
    """One row with every figure and its interval (percent for shares; MCC in [-1, 1]). ``scoring``: the
    benchmark's scoring profile, which decided every submission row on the board (a change re-scores them)."""
    out: dict[str, Any] = {
        "rank": row.rank, "model": row.model_name, "organisation": row.organisation, "weights": row.weights or None,
        "date": row.date.isoformat() if row.date else None, "submission_id": row.submission_id,
        "source": "reported by the authors" if row.reported else "submission", "simulated_demo": row.is_demo,
    }
    for name in FIGURES:
        out[name] = getattr(row, name).as_dict()
    out.update(tokens=row.tokens, cost_per_10k_usd=row.cost_10k, rank_score=row.rank_score,
               headline_mode=row.headline_mode or None, citation=row.citation or None,
               parameters_billions=row.parameters_billions, license=row.license or None,
               release_date=row.release_date.isoformat() if row.release_date else None,
               model_url=row.model_url or None, paper_url=row.paper_url or None)
    # percent of the samples answered in the headline mode; None where unknown (reported rows, old results)
    out["answered"] = row.answered.value
    # Where the row came from and its digests (None: a reported row, or not available: scored before digests)
    out.update(provenance=row.provenance or None, digest=row.digest or None, digest_dev=row.digest_dev or None,
               run=row.run or None, run_mismatch=mismatch_text(row.run) or None)
    out["protocol"] = _protocol(row)
    out["ranks"] = {m: _standing((standings or {}).get(m, {}).get(row.submission_id)) for m in board.TESTED}
    out["scoring"] = None if row.reported else scoring  # a paper's figures follow the paper's own rules
    # Figures with nothing under them in the file, and why (metrics.md section 14): null values above.
    out["not_available"] = dict(row.reasons) or None
    return out


def _protocol(row: board.Row) -> dict[str, Any] | None:
    """The protocol a harness-made row ran under: its version, page and who says so (a hosted run's record, or
    an uploaded run_model file's own lines); None when the row names none."""
    version, page = row.run.get("protocol_version"), row.run.get("protocol_page")
    if row.reported or not version:
        return None
    return {"version": version, "page": page,
            "source": PROTOCOL_SOURCES["file" if row.run.get("claimed_by_file") else "run"]}


def _csv_cell(value: Any) -> Any:
    """Numbers stay numbers (a negative MCC is no formula); text a spreadsheet would run is escaped."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return csv_text_cell(value)


def csv_header(*, agentx: bool, tools: bool, authors_of: str | None) -> list[str]:
    """The CSV's column names: CSV_HEADER, then Agent-X's, the Tools tab's and the authors' (of the scoring profile
    ``authors_of``) where the benchmark has them. Its CSVW metadata (leaderboard/csv_metadata.py) reads the same."""
    return (CSV_HEADER + ([f"agentx_{k}{s}" for k in AGENTX_KEYS for s in ("", "_low", "_high")] if agentx else [])
            + (list(tools_tab.CSV_KEYS) if tools else []) + (authors_csv_keys(authors_of) if authors_of else []))


def rows_csv(rows: list[board.Row], standings: Standings | None = None, agentx: dict[int, dict] | None = None,
             scoring: str | None = None, tools: dict[int, dict] | None = None,
             authors: dict[int, dict] | None = None) -> str:
    """``agentx``: Agent-X's figures by submission (``agentx_figures``), as extra columns; ``scoring``: the
    benchmark's scoring profile (each submission row's ``scoring`` column); ``tools``: the Tools tab's figures
    by submission (``tools_tab.tool_figures``), as the ``tools_*`` columns; ``authors``: the authors' figures
    by submission (``authors_figures``), as the ``author_*`` columns (percent)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    with_authors = authors is not None and scoring in RULES
    writer.writerow(csv_header(agentx=agentx is not None, tools=tools is not None,
                               authors_of=str(scoring) if with_authors else None))
    for row in ordered(rows):
        d = row_dict(row, standings, scoring)
        flat = [d["rank"], d["model"], d["organisation"], d["weights"], d["date"], d["submission_id"], d["source"],
                d["simulated_demo"]]
        for name in FIGURES:
            flat += [d[name]["value"], d[name]["low"], d[name]["high"]]
        flat.append(d["answered"])
        flat += [d["tokens"], d["cost_per_10k_usd"], d["rank_score"], d["headline_mode"], d["citation"]]
        r = d["ranks"][board.DEFAULT_SORT] or {}
        flat += [r.get("rank"), r.get("low"), r.get("high"), r.get("p_vs_above"), r.get("significant_vs_above")]
        flat += [d[name] for name in MODEL_DETAILS]
        flat += [d[name] for name in PROVENANCE]
        flat += [(d["protocol"] or {}).get("version"), (d["protocol"] or {}).get("source")]
        flat.append(d["scoring"])
        notes = [f"{k}: {v}" for k, v in sorted((d["not_available"] or {}).items())]
        author_cells: list[Any] = []
        if with_authors:
            author_cells, author_notes = _authors_flat(str(scoring), (authors or {}).get(row.submission_id)
                                                       if not row.reported else None)
            notes += author_notes
        flat.append(" | ".join(notes) or None)
        if agentx is not None:
            flat += _agentx_flat(agentx.get(row.submission_id) if not row.reported else None)
        if tools is not None:
            flat += tools_tab.csv_cells(tools.get(row.submission_id) if not row.reported else None)
        flat += author_cells
        writer.writerow([_csv_cell(v) for v in flat])
    return buf.getvalue()


def rows_payload(benchmark: Benchmark, rows: list[board.Row], standings: Standings | None = None) -> dict[str, Any]:
    agentx = agentx_figures(benchmark)
    out = {
        "benchmark": {"slug": benchmark.slug, "name": benchmark.name, "version": benchmark.version,
                      "scoring": benchmark.scoring, "scoring_label": benchmark.get_scoring_display()},
        "order": "adaptive accuracy, descending; rows without it last",
        "units": {"shares": "percent", "mcc": "[-1, 1]", "cost_per_10k_usd": "US dollars per 10,000 samples",
                  "parameters_billions": "billions of parameters, as the submitter stated",
                  "answered": "percent of the samples with an answer and no failure class, in the headline mode "
                              "(null: not available)",
                  "provenance": "run: made by a hosted run of the platform's harness (its record in run); file: an "
                                "uploaded file (run: its protocol claim, if its lines make one); null: the authors' "
                                "reported figures",
                  "protocol": "the protocol a harness-made row ran under: version, page (/b/<slug>/protocol/) and "
                              "source: recorded by the platform's run, or the uploaded file's claim (run_model "
                              "writes it on every line; not verified); null: the row names none",
                  "digest": "sha256 (hex) of the row's canonical per-sample records with the scorer and judge-prompt "
                            "versions; digest_dev: of the dev split's records (the public records export); null: "
                            "not available (scored before digests existed). docs/runs.md, The verified tier",
                  "not_available": "figure -> why it is null: nothing in the file carries it (no tool calls, "
                                   "steps or token usage), never a 0",
                  "run_mismatch": "set when the endpoint answered as another model than the run asked for",
                  "scoring": "the scoring profile whose rules decided the answers: generic (the platform's), "
                             "vtcbench, vlmevalkit, mmreason, hrbench, treebench or tirbench (the authors' released "
                             "rules; docs/metrics.md); null on the authors' reported rows",
                  "author_figures": "the authors' own figures by their rule (rule), per mode in percent: HR-Bench's "
                                    "accuracy averaged over cycles, TreeBench's overall accuracy and mean IoU of "
                                    "the boxes, TIR-Bench's score (docs/metrics.md); a value null where the rule "
                                    "leaves it undefined, why in not_available; null on a benchmark without them "
                                    "and on the authors' reported rows",
                  "intervals": "95 % bootstrap percentile intervals (1,000 resamples)",
                  "tools": "what the tools changed, text -> adaptive (docs/metrics.md section 15): text and "
                           "adaptive accuracy, oracle headroom and tool outputs shown in percent; tool contribution "
                           "and drift without tools in percentage points (they add up to adaptive - text); the "
                           "counts solved, broken, unchanged and tool_only as numbers; null: not available, why in "
                           "reason",
                  "ranks": "per ordering (text, adaptive, oracle accuracy; mcc), on the whole board: rank shared by "
                           "neighbours that do not differ significantly (paired test, p < 0.05), the rank's 95 % "
                           "interval (low: 1 + the entries whose own 95 % bootstrap interval lies wholly above this "
                           "one's; high: the entries whose interval reaches this one's), and the test against the entry above"},
        "rows": [row_dict(r, standings, benchmark.scoring) for r in ordered(rows)],
    }
    build = derived_read(benchmark, "board", payload=False)
    # The rows are the board's last build; "updating": a change to the results is not in them yet.
    out["build"] = {"built_at": build.built_at.isoformat() if build.built_at else None, "updating": build.updating}
    if agentx is not None:  # the Agent-X tab's figures of each submission row (percent, 95 % intervals)
        for d in out["rows"]:
            d["agentx"] = agentx.get(d["submission_id"]) if d["source"] == "submission" else None
    tools = tools_tab.tool_figures(benchmark)  # what the tools changed, text -> adaptive (the Tools tab)
    authors = authors_figures(benchmark)
    for d in out["rows"]:
        d["tools"] = tools.get(d["submission_id"]) if d["source"] == "submission" else None
        d["author_figures"] = (authors or {}).get(d["submission_id"]) if d["source"] == "submission" else None
    return out


def rows_json(benchmark: Benchmark, rows: list[board.Row], standings: Standings | None = None) -> bytes:
    return orjson.dumps(rows_payload(benchmark, rows, standings), option=orjson.OPT_INDENT_2)
