"""The wide tabs' tables (Accuracy by domain, Mode selection, Reasoning process, Toolchains, Tools), paged so that an
uncached page reads and computes its own rows only, however large the board.

What a page needs of the whole board is computed by the board's refresh (``tables_build``, stored in the
board build's payload): which rows the table has, in order (a model x mode row per key and mode), and, per
mode and column, the best and second-best value (the ▲/△ marks). A page reads that index, then the results
of its own rows' submissions (``selectors.tab_sources(submission_ids=...)``, which keeps only those still on
the board: a row that left it since the build is left out) and computes their figures and intervals with the
same functions the refresh ran over the whole board. The Cost & Pareto tab is not indexed: its frontier and
baselines are the whole board's, computed per page (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.models import Benchmark
from evaluation.metrics.types import BOARD_MODES as MODES
from leaderboard import selectors
from leaderboard.paging import page_rows
from leaderboard.tools_tab import PARTS as TOOLS_PARTS, sorted_positions, tools_table

# The parts of a submission's results each wide tab reads (selectors.tab_sources), as paths.
TAB_PARTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "domains": tuple(("modes", m, "accuracy", k) for m in MODES for k in ("wo_enh", "all", "aux_line")),
    "mode-selection": (("mode_selection",),),
    "process": (("modes", "adaptive", "process"),),
    "toolchains": tuple(("modes", m, "toolchain") for m in ("adaptive", "oracle")),
    "tools": TOOLS_PARTS,
}
INDEXED = tuple(TAB_PARTS)
# Tabs a visitor sorts by any column: the index keeps each row's values too, and a page sorts the index.
SORTED = ("tools",)


def _table(benchmark: Benchmark, tab: str, sources: list[selectors.TabSource], intervals: bool = True) -> list[Any]:
    """The tab's rows over ``sources`` (all the board's in the refresh, a page's when read); ``intervals=False``:
    the refresh's, which needs the values alone (the Tools tab then draws no bootstrap)."""
    if tab == "domains":
        return selectors.domain_table(benchmark, sources)[1]
    if tab == "mode-selection":
        return selectors.mode_selection(sources)
    if tab == "process":
        return selectors.process_table(sources, selectors.process_columns(benchmark.figures))
    if tab == "tools":
        return tools_table(sources, intervals)
    return selectors.toolchain_table(sources)


def _row_id(row: Any) -> tuple[str, str]:
    return row.source.key, getattr(row, "mode", "")


def _marks(rows: Sequence[Any]) -> dict[str, list[list[float | None]]]:
    """{mode: [[best, second best] per column]}: the values the whole table marked ▲ and △ (TableRow tables)."""
    out: dict[str, list[list[float | None]]] = {}
    for row in rows:
        if not hasattr(row, "cells"):
            return {}
        marks = out.setdefault(row.mode, [[None, None] for _ in row.cells])
        for i, cell in enumerate(row.cells):
            if cell.place in (1, 2):
                marks[i][cell.place - 1] = cell.fig.value
    return out


def tables_build(benchmark: Benchmark) -> dict[str, Any]:
    """Every indexed tab's rows in order and its marks (the board's refresh stores them with its build):
    the results read once, with the parts of every tab."""
    parts = sorted({p for tab in INDEXED for p in TAB_PARTS[tab]})
    sources = selectors.tab_sources(benchmark, parts, domain_table=True)
    out = {}
    for tab in INDEXED:
        rows = _table(benchmark, tab, sources, intervals=False)
        out[tab] = {"rows": [list(_row_id(r)) for r in rows], "marks": _marks(rows)}
        if tab in SORTED:
            out[tab]["values"] = [[c.fig.value for c in r.cells] for r in rows]
    return out


def table_page(benchmark: Benchmark, tab: str, params: Any, base: str) -> tuple[list[Any], dict[str, Any],
                                                                                 list[selectors.TabSource]]:
    """One page of ``tab``'s table, its pager and the sources of its rows. From the board build's index when
    it has one: the page's rows alone are read and computed, the marks are the whole board's. A build made
    before the index existed gives the whole table, computed here, as before."""
    index = selectors.board_table_index(benchmark, tab)
    if index is None:
        sources = selectors.tab_sources(benchmark, TAB_PARTS[tab], domain_table=tab == "domains")
        table = _table(benchmark, tab, sources)
        if tab in SORTED:
            table = [table[i] for i in sorted_positions([[c.fig.value for c in r.cells] for r in table], params)]
        rows, pager = page_rows(table, params, base)
        return rows, pager, sources
    order = index["rows"]
    if tab in SORTED and "values" in index:
        order = [order[i] for i in sorted_positions(index["values"], params)]
    keys, pager = page_rows(order, params, base)
    ids = {int(key[1:]) for key, _ in keys if key.startswith("s")}
    sources = selectors.tab_sources(benchmark, TAB_PARTS[tab], domain_table=tab == "domains", submission_ids=ids)
    found = {_row_id(r): r for r in _table(benchmark, tab, sources)}
    rows = [found[(key, mode)] for key, mode in keys if (key, mode) in found]  # gone: left the board since
    marks = index["marks"]
    for row in rows:
        for i, cell in enumerate(getattr(row, "cells", ())):
            columns = marks.get(row.mode) or []
            best = columns[i] if i < len(columns) else [None, None]
            value = cell.fig.value
            cell.place = 0 if value is None else 1 if value == best[0] else 2 if value == best[1] else 0
    return rows, pager, sources
