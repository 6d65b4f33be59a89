"""The Tools tab: what the tools changed, text -> adaptive (docs/metrics.md section 15), one row per entry.

A wide tab like the toolchains one (leaderboard.wide_tabs): the board's refresh orders its rows (tool
contribution, highest first; rows without it last) and marks the best values; a page computes its own rows
from the parts of the results below. The figures are the scorer's (``results["tool_effect"]``); this module
only reads them.
"""

from __future__ import annotations

from typing import Any

from leaderboard.figures import NONE, Fig, count_fig, mean_fig, path, rate_fig
from leaderboard.selectors import Cell, TableRow, TabSource, mark_column

PAIR = "text → adaptive"  # the row's "mode": the pair of modes its figures compare
# The parts of a submission's results the tab reads (selectors.tab_sources); the per-domain and per-category
# groups (most of tool_effect) are the model page's.
PARTS: tuple[tuple[str, ...], ...] = (("tool_effect", "overall"), ("tool_effect", "shown"), ("tool_effect", "reason"))

# (label, key, better, scale); "pp": percentage points of accuracy.
COLUMNS: tuple[tuple[str, str, str | None, float], ...] = (
    ("Text %", "text", "higher", 100.0), ("Adaptive %", "adaptive", "higher", 100.0),
    ("Tool contribution (pp)", "contribution", "higher", 100.0), ("Drift without tools (pp)", "drift", None, 100.0),
    ("Solved by tools", "solved", "higher", 1.0), ("Broken by tools", "broken", "lower", 1.0),
    ("Tools called, nothing changed", "unchanged", None, 1.0), ("Tool-only solves", "tool_only", "higher", 1.0),
    ("Oracle headroom %", "oracle_headroom", None, 100.0), ("Tool outputs shown %", "shown", "higher", 100.0),
)


def _count(value: int | None, n: int | None) -> Fig:
    return Fig(None if value is None else float(value), n=n, digits=0)


def group_figs(group: dict[str, Any] | None, shown: Any, reason: str | None) -> dict[str, Fig]:
    """A stored ToolEffectGroup (overall, a domain's) as the tab's figures, by column key; every figure not
    available, with the reason, when the group is."""
    if not isinstance(group, dict):
        missing = Fig(None, reason=reason)
        return {key: missing for _, key, _, _ in COLUMNS}
    n = group.get("n")
    tool_only = group.get("tool_only") or {}
    return {
        "text": count_fig(group["text_correct"], n) if n else NONE,
        "adaptive": count_fig(group["adaptive_correct"], n) if n else NONE,
        "contribution": mean_fig(group.get("contribution"), 100.0),
        "drift": mean_fig(group.get("drift"), 100.0),
        "solved": _count(group.get("solved"), n), "broken": _count(group.get("broken"), n),
        "unchanged": _count(group.get("unchanged"), n), "tool_only": _count(tool_only.get("count"), tool_only.get("n")),
        "oracle_headroom": rate_fig(group.get("oracle_headroom")),
        "shown": rate_fig(shown),
    }


def tools_table(sources: list[TabSource]) -> list[TableRow]:
    """One row per entry whose file has both text and adaptive lines (with its reason when the figures are not
    available: no valid tool call), best tool contribution first."""
    rows = []
    for src in sources:
        effect = path(src.results, "tool_effect")
        if src.reported or not isinstance(effect, dict) or not (effect.get("overall") or effect.get("shown")):
            continue
        if effect.get("overall") is None and not _both_modes(effect.get("reason")):
            continue
        figs = group_figs(effect.get("overall"), effect.get("shown"), effect.get("reason"))
        rows.append(TableRow(src, PAIR, [Cell(figs[key]) for _, key, _, _ in COLUMNS]))
    contribution = [key for _, key, _, _ in COLUMNS].index("contribution")
    rows.sort(key=lambda r: (r.cells[contribution].fig.value is None, -(r.cells[contribution].fig.value or 0.0)))
    for col, (_, _, better, _) in enumerate(COLUMNS):
        if better is not None:
            mark_column(rows, col, better == "higher")
    return rows


def _both_modes(reason: Any) -> bool:
    """Whether a not-available tool_effect still had both modes (its reason is about the calls)."""
    return isinstance(reason, str) and "mode predictions" not in reason
