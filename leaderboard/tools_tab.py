"""The Tools tab: what the tools changed, text -> adaptive (docs/metrics.md section 15), one row per entry.

A wide tab like the toolchains one (leaderboard.wide_tabs): the board's refresh orders its rows (tool
contribution, highest first; rows without it last) and marks the best values; a page computes its own rows
from the parts of the results below. The results keep the figures' integers (``results["tool_effect"]``); the
scoring library turns them into values, intervals and tests (``tool_effect.group_from_counts``).
"""

from __future__ import annotations

from typing import Any

from evaluation.metrics.profiles import UNDECIDED
from evaluation.metrics.tool_effect import contribution_values, group_from_counts, paired_difference, shown_rate
from evaluation.metrics.types import Mean, Rate
from evaluation.models import PredictionResult
from leaderboard.figures import Fig, count_fig, path
from leaderboard.model_page import ModeTest
from leaderboard.selectors import Cell, TableRow, TabSource, mark_column, tab_sources

PAIR = "text → adaptive"  # the row's "mode": the pair of modes its figures compare
# The parts of a submission's results the tab reads (selectors.tab_sources); the per-domain and per-category
# groups (most of tool_effect) are the model page's.
PARTS: tuple[tuple[str, ...], ...] = (("tool_effect", "overall"), ("tool_effect", "shown"), ("tool_effect", "reason"),
                                      ("tool_effect", "has_oracle"))

# (label, key, better, scale): the shape of the other wide tabs' columns; "pp": percentage points of accuracy.
COLUMNS: tuple[tuple[str, str, str | None, float], ...] = (
    ("Text %", "text", "higher", 100.0), ("Adaptive %", "adaptive", "higher", 100.0),
    ("Tool contribution (pp)", "contribution", "higher", 100.0), ("Drift without tools (pp)", "drift", None, 100.0),
    ("Solved by tools", "solved", "higher", 1.0), ("Broken by tools", "broken", "lower", 1.0),
    ("Tools called, nothing changed", "unchanged", None, 1.0), ("Tool-only solves", "tool_only", "higher", 1.0),
    ("Oracle headroom %", "oracle_headroom", None, 100.0), ("Tool outputs shown %", "shown", "higher", 100.0),
)


def _count(value: int | None, n: int | None) -> Fig:
    return Fig(None if value is None else float(value), n=n, digits=0)


def _mean(m: Mean) -> Fig:
    """A share of samples (a Mean in [-1, 1]) in percentage points, with its interval."""
    if m.value is None:
        return Fig(None, n=m.n, reason=m.reason)
    iv = m.interval
    return Fig(100 * m.value, 100 * iv.low if iv else None, 100 * iv.high if iv else None, m.n)


def _rate(r: Rate) -> Fig:
    if r.value is None:
        return Fig(None, n=r.n or None, reason=r.reason)
    iv = r.interval
    return Fig(100 * r.value, 100 * iv.low if iv else None, 100 * iv.high if iv else None, r.n)


def group_figs(effect: dict[str, Any], group: Any, *, intervals: bool = True, shown: bool = True) -> dict[str, Fig]:
    """A stored group (``tool_effect.stored``: its integers) as the tab's figures, by column key, its values and
    (``intervals``) their bootstrap intervals computed by the library; every figure not available, with the
    effect's reason, when it is. ``shown``: the tool outputs shown (the file's, not a domain's)."""
    reason = effect.get("reason")
    if not isinstance(group, dict):
        missing = Fig(None, reason=reason)
        return {key: missing for _, key, _, _ in COLUMNS}
    g = group_from_counts(group, has_oracle=bool(effect.get("has_oracle")), intervals=intervals)
    text = count_fig(g.text_correct, g.n) if intervals else Fig(100 * g.text_correct / g.n if g.n else None, n=g.n)
    adaptive = (count_fig(g.adaptive_correct, g.n) if intervals
                else Fig(100 * g.adaptive_correct / g.n if g.n else None, n=g.n))
    return {
        "text": text, "adaptive": adaptive, "contribution": _mean(g.contribution), "drift": _mean(g.drift),
        "solved": _count(g.solved, g.n), "broken": _count(g.broken, g.n), "unchanged": _count(g.unchanged, g.n),
        "tool_only": _count(g.tool_only.count, g.tool_only.n), "oracle_headroom": _rate(g.oracle_headroom),
        "shown": _rate(shown_rate(effect.get("shown"), intervals=intervals)) if shown else Fig(None),
    }


def _memo_key(effect: dict[str, Any]) -> Any:
    """What ``group_figs`` of an effect's overall group depends on, hashable; None: not worth a key."""
    group, shown = effect.get("overall"), effect.get("shown")
    try:
        return (tuple(sorted(group.items())) if isinstance(group, dict) else group, bool(effect.get("has_oracle")),
                effect.get("reason"), tuple(sorted(shown.items())) if isinstance(shown, dict) else shown)
    except TypeError:  # an unhashable value: computed each time
        return None


def tools_table(sources: list[TabSource], intervals: bool = True,
                memo: dict[Any, dict[str, Fig]] | None = None) -> list[TableRow]:
    """One row per entry whose file has both text and adaptive lines (with its reason when the figures are not
    available: no valid tool call), best tool contribution first. ``intervals=False``: the values alone.
    ``memo``: figures already drawn, by what they depend on (``_memo_key``; the refresh draws every row's intervals
    and stores them, wide_tabs, and many rows share their counts)."""
    rows = []
    for src in sources:
        effect = path(src.results, "tool_effect")
        if src.reported or not isinstance(effect, dict) or not (effect.get("overall") or effect.get("shown")):
            continue
        if effect.get("overall") is None and not _both_modes(effect.get("reason")):
            continue
        key = _memo_key(effect) if memo is not None else None
        figs = memo.get(key) if memo is not None and key is not None else None
        if figs is None:
            figs = group_figs(effect, effect.get("overall"), intervals=intervals)
            if memo is not None and key is not None:
                memo[key] = figs
        rows.append(TableRow(src, PAIR, [Cell(figs[key]) for _, key, _, _ in COLUMNS]))
    contribution = [key for _, key, _, _ in COLUMNS].index("contribution")
    rows.sort(key=lambda r: (r.cells[contribution].fig.value is None, -(r.cells[contribution].fig.value or 0.0)))
    for col, (_, _, better, _) in enumerate(COLUMNS):
        if better is not None:
            mark_column(rows, col, better == "higher")
    return rows


SORT_PARAMS = ("sort", "desc", "page")  # what the tab's page reads
DEFAULT_SORT = "contribution"
_KEYS = [key for _, key, _, _ in COLUMNS]


def sort_choice(params: Any) -> tuple[str, bool]:
    """(column key, descending) from the query string; a column's default direction is its better one."""
    key = params.get("sort", DEFAULT_SORT)
    key = key if key in _KEYS else DEFAULT_SORT
    better = COLUMNS[_KEYS.index(key)][2]
    desc = params.get("desc", "0" if better == "lower" else "1") == "1"
    return key, desc


def sorted_positions(values: list[list[float | None]], params: Any) -> list[int]:
    """The row positions in the chosen order (rows without the value last, ties and those in the given order):
    the whole table's, for a build without the index; the index stores each sort's order as rows the database
    orders the same way (``wide_tabs._index_rows``)."""
    key, desc = sort_choice(params)
    col = _KEYS.index(key)
    known = [i for i, v in enumerate(values) if v[col] is not None]
    known.sort(key=lambda i: values[i][col], reverse=desc)  # type: ignore[arg-type, return-value]  # known: not None
    return known + [i for i, v in enumerate(values) if v[col] is None]


def headers(params: Any, base: str) -> list[dict[str, Any]]:
    """The column headers with their sort links (a second click on the sorted column turns it round)."""
    key, desc = sort_choice(params)
    out = []
    for label, k, better, _ in COLUMNS:
        active = k == key
        flip = "0" if desc else "1"
        default = "0" if better == "lower" else "1"
        out.append({"label": label, "key": k, "better": better, "active": active, "desc": desc if active else None,
                    "url": f"{base}?sort={k}&desc={flip if active else default}",
                    "aria_sort": ("descending" if desc else "ascending") if active else "none"})
    return out


def _both_modes(reason: Any) -> bool:
    """Whether a not-available tool_effect still had both modes (its reason is about the calls)."""
    return isinstance(reason, str) and "mode predictions" not in reason


def tool_figures(benchmark: Any) -> dict[int, dict[str, Any]]:
    """The Tools tab's figures of every public submission row, for the exports and the API: per column key
    ``{value, low, high, n}`` (percent, percentage points or counts; null with its ``reason`` when not
    available), and ``reason`` for the whole row when its file lacks a mode or a valid tool call."""
    out: dict[int, dict[str, Any]] = {}
    for src in tab_sources(benchmark, PARTS, domain_table=False):
        effect = src.results.get("tool_effect")
        if src.submission_id is None or not isinstance(effect, dict):
            continue
        figs = group_figs(effect, effect.get("overall"))
        row: dict[str, Any] = {key: figs[key].as_dict() for _, key, _, _ in COLUMNS}
        row["reason"] = effect.get("reason")
        out[src.submission_id] = row
    return out


CSV_KEYS = tuple(f"tools_{key}" for _, key, _, _ in COLUMNS)


def csv_cells(row: dict[str, Any] | None) -> list[Any]:
    """The tool figures' values in COLUMNS order (the CSV's ``tools_*`` columns); None where not available."""
    return [((row or {}).get(key) or {}).get("value") for _, key, _, _ in COLUMNS]


# ------------------------------------------------------------------------------ the model page

CELLS = ("rr", "rw", "wr", "ww")  # text right/wrong x adaptive right/wrong
CELL_LABELS = {"rr": "text right, adaptive right", "rw": "text right, adaptive wrong",
               "wr": "text wrong, adaptive right", "ww": "text wrong, adaptive wrong"}


def two_by_two(group: dict[str, Any]) -> dict[str, dict[str, int]]:
    """{cell: {"called": k, "none": m}}: the samples of each cell of text x adaptive, split by whether the
    adaptive line made a valid tool call, from a stored group's counts."""
    n, t = group["n"], group["text_correct"]
    solved, broken, unchanged, kept = group["solved"], group["broken"], group["unchanged"], group.get("kept_right", 0)
    up, down = group["drift_up"], group["drift_down"]
    return {"rr": {"called": kept, "none": t - broken - down - kept},
            "rw": {"called": broken, "none": down},
            "wr": {"called": solved, "none": up},
            "ww": {"called": unchanged - kept, "none": n - t - solved - up - (unchanged - kept)}}


def model_tools(effect: Any, names: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The model page's Tools section: the tab's figures overall and per domain (``names``: a domain's name by
    its slug), and the 2 x 2 table; None for results scored before the figures existed."""
    if not isinstance(effect, dict) or "has_oracle" not in effect:
        return None
    overall = effect.get("overall")
    rows = [("Overall", group_figs(effect, overall))]
    rows += [((names or {}).get(slug, slug), group_figs(effect, g, shown=False))
             for slug, g in sorted((effect.get("by_domain") or {}).items())]
    test = group_from_counts(overall, has_oracle=False, intervals=False) if isinstance(overall, dict) else None
    return {"reason": effect.get("reason"), "columns": COLUMNS,
            "rows": [(label, [figs[k] for _, k, _, _ in COLUMNS]) for label, figs in rows],
            "table": two_by_two(overall) if isinstance(overall, dict) else None,
            "p_value": test.p_value if test else None}


def filter_label(code: str) -> str:
    """``wr-called`` as words, for the filtered sample list's note."""
    calls = "a valid tool call" if code.endswith("-called") else "no valid tool call"
    return f"{CELL_LABELS[code[:2]]}, {calls}"


def sample_cells(submission_id: int) -> dict[str, str]:
    """Each sample's 2 x 2 cell and call split (``"wr-called"``) for the model page's filtered sample list; a
    missing line is wrong, as in the figures. One query."""
    return {uid: f"{'r' if t else 'w'}{'r' if a else 'w'}-{'called' if called else 'none'}"
            for uid, (t, a, called) in _pairs(submission_id).items()}


def _pairs(submission_id: int) -> dict[str, tuple[bool, bool, bool]]:
    """{uid: (right in text, right in adaptive, a valid call)} of the non-aux samples with a text or adaptive
    line; a missing line is wrong and calls nothing. A sample either answer of which is undecided (it needs an
    LLM judge) is left out, as the figures leave it out (metrics.tool_effect)."""
    lines: dict[str, dict[str, tuple[bool, bool]]] = {}
    undecided: set[str] = set()
    for uid, mode, correct, decided_by, calls in PredictionResult.objects.filter(
            submission_id=submission_id, mode__in=("text", "adaptive"), sample__aux_line=False).values_list(
            "sample__uid", "mode", "correct", "decided_by", "calls"):
        lines.setdefault(uid, {})[mode] = (correct, any(not c.get("errors") for c in calls or ()))
        if decided_by == UNDECIDED:
            undecided.add(uid)
    return {uid: (modes.get("text", (False, False))[0], *modes.get("adaptive", (False, False)))
            for uid, modes in lines.items() if uid not in undecided}


def compare_tools(a: Any, b: Any) -> ModeTest | None:
    """The compare page's row: tool contribution of A against B (percentage points) with the paired bootstrap
    over the benchmark's samples (a sample neither has a line for adds 0 to both); None unless both have it."""
    ga, gb = path(a.results, "tool_effect", "overall"), path(b.results, "tool_effect", "overall")
    if not isinstance(ga, dict) or not isinstance(gb, dict) or ga.get("n") != gb.get("n"):
        return None
    pa, pb = _pairs(a.pk), _pairs(b.pk)
    uids = sorted(set(pa) | set(pb))
    none = (False, False, False)
    va = contribution_values(*zip(*(pa.get(u, none) for u in uids))) if uids else []
    vb = contribution_values(*zip(*(pb.get(u, none) for u in uids))) if uids else []
    pad = [0] * (ga["n"] - len(uids))
    test = paired_difference(va + pad, vb + pad)
    return ModeTest("tool contribution", group_figs(a.results["tool_effect"], ga)["contribution"],
                    group_figs(b.results["tool_effect"], gb)["contribution"],
                    100 * test.statistic, test.p_value, test.significant, None,
                    f"paired bootstrap on {test.n} samples")
