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

from collections.abc import Collection, Sequence
from typing import Any

import orjson
from django.db.models import TextField
from django.db.models.functions import Cast

from annotation.models import Benchmark
from evaluation.metrics.types import BOARD_MODES as MODES
from evaluation.models import Submission
from leaderboard import selectors
from leaderboard.models import EntryTabRows
from leaderboard.paging import page_rows
from leaderboard.tools_tab import COLUMNS as TOOLS_COLUMNS, PARTS as TOOLS_PARTS, sorted_positions, tools_table

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


def _values(row: Any) -> list[float | None]:
    """The values a row is ordered and marked by: its cells' (the Mode selection tab's: its MCC)."""
    return [c.fig.value for c in row.cells] if hasattr(row, "cells") else [row.mcc.value]


def _directions(benchmark: Benchmark, tab: str, width: int) -> list[bool | None]:
    """Per column: True, higher is better; False, lower is; None, not marked (as each tab's table marks them)."""
    if tab == "domains":
        return [True] * width
    columns = {"process": selectors.process_columns(benchmark.figures), "toolchains": selectors.TOOLCHAIN_COLUMNS,
               "tools": TOOLS_COLUMNS}.get(tab)
    if columns is None:  # mode-selection: not marked
        return [None] * width
    return [None if better is None else better == "higher" for _, _, better, _ in columns]


def _domain_slugs(benchmark: Benchmark) -> list[str]:
    return [slug for slug, _ in selectors.domains_of(benchmark)]


def _rows_by_source(tables: dict[str, list[Any]]) -> dict[str, dict[str, list[list[Any]]]]:
    """{source key: {tab: [[mode, values], ...]}}: each source's own rows of the tabs' tables, in table order."""
    out: dict[str, dict[str, list[list[Any]]]] = {}
    for tab, rows in tables.items():
        for row in rows:
            key, mode = _row_id(row)
            out.setdefault(key, {}).setdefault(tab, []).append([mode, _values(row)])
    return out


def _assemble(benchmark: Benchmark, ordered: list[dict[str, list[list[Any]]]],
              keys: list[str]) -> dict[str, Any]:
    """The tabs' index from each source's rows (``keys[i]``'s are ``ordered[i]``, in the sources' order): the
    tables' own order (Mode selection by MCC, Tools by contribution; stable sorts as theirs) and their marks (per
    mode and column, the best and second-best distinct value), as ``tables_build`` computes them from the tables."""
    out: dict[str, Any] = {}
    for tab in INDEXED:
        flat = [(key, mode, values) for key, rows in zip(keys, ordered) for mode, values in rows.get(tab, ())]
        if tab == "mode-selection":
            flat.sort(key=lambda r: r[2][0] if r[2][0] is not None else -2, reverse=True)
        elif tab == "tools":
            col = [key for _, key, _, _ in TOOLS_COLUMNS].index("contribution")
            flat.sort(key=lambda r: (r[2][col] is None, -(r[2][col] or 0.0)))
        marks: dict[str, list[list[float | None]]] = {}
        if tab != "mode-selection" and flat:
            by_mode: dict[str, list[list[float | None]]] = {}
            for _, mode, values in flat:
                by_mode.setdefault(mode, []).append(values)
            for mode, rows in by_mode.items():
                directions = _directions(benchmark, tab, len(rows[0]))
                marks[mode] = []
                for i, higher in enumerate(directions):
                    if higher is None:
                        marks[mode].append([None, None])
                        continue
                    distinct = sorted({v[i] for v in rows if v[i] is not None}, reverse=higher)[:2]
                    marks[mode].append([*distinct, *[None] * (2 - len(distinct))])
        out[tab] = {"rows": [[key, mode] for key, mode, _ in flat], "marks": marks}
        if tab in SORTED:
            out[tab]["values"] = [values for _, _, values in flat]
    return out


def _store(benchmark: Benchmark, rows: dict[str, dict[str, list[list[Any]]]], ids: Collection[int],
           slugs: list[str]) -> None:
    """Write the tab rows of the submissions ``ids`` (none: a submission without rows in any tab)."""
    EntryTabRows.objects.filter(submission_id__in=list(ids)).delete()
    EntryTabRows.objects.bulk_create(
        [EntryTabRows(submission_id=pk, benchmark_id=benchmark.pk, rows={**rows.get(f"s{pk}", {}),
                                                                         "domain_slugs": slugs}) for pk in ids],
        batch_size=2000)


def tables_build(benchmark: Benchmark) -> dict[str, Any]:
    """Every indexed tab's rows in order and its marks (the board's refresh stores them with its build):
    the results read once, with the parts of every tab. The full build (the board's first, and its repair):
    it also writes every submission's tab rows again (``EntryTabRows``), which ``tables_update`` assembles from."""
    parts = sorted({p for tab in INDEXED for p in TAB_PARTS[tab]})
    sources = selectors.tab_sources(benchmark, parts, domain_table=True)
    out = {}
    tables = {}
    for tab in INDEXED:
        rows = tables[tab] = _table(benchmark, tab, sources, intervals=False)
        out[tab] = {"rows": [list(_row_id(r)) for r in rows], "marks": _marks(rows)}
        if tab in SORTED:
            out[tab]["values"] = [[c.fig.value for c in r.cells] for r in rows]
    EntryTabRows.objects.filter(benchmark_id=benchmark.pk).delete()
    _store(benchmark, _rows_by_source(tables), [s.submission_id for s in sources if s.submission_id is not None],
           _domain_slugs(benchmark))
    return out


def tables_update(benchmark: Benchmark, changed: Collection[int], gone: Collection[int] = ()) -> dict[str, Any]:
    """The index ``tables_build`` builds, by what changed: the tab rows of the submissions ``changed`` (their
    entries rebuilt), of those without stored rows and of those stored for other domains are computed from their
    results and stored; those of ``gone`` are dropped; the rest are read from ``EntryTabRows`` (narrow JSON, no
    results) and the index assembled from all (``_assemble``). The reported rows are computed each time."""
    slugs = _domain_slugs(benchmark)
    listed = (Submission.objects.on_board().filter(benchmark=benchmark, board_entry__isnull=False)
              .order_by("finished_at", "pk").values_list("pk", Cast("tab_rows__rows", TextField())))
    changed = set(changed)
    stored: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    for pk, text in listed:
        order.append(pk)
        rows = orjson.loads(text) if text else None
        if rows is not None and pk not in changed and rows.get("domain_slugs") == slugs:
            stored[pk] = rows
    todo = [pk for pk in order if pk not in stored]
    parts = sorted({p for tab in INDEXED for p in TAB_PARTS[tab]})
    sources = selectors.tab_sources(benchmark, parts, domain_table=True, submission_ids=todo)
    fresh = _rows_by_source({tab: _table(benchmark, tab, sources, intervals=False) for tab in INDEXED})
    if gone:
        EntryTabRows.objects.filter(submission_id__in=list(gone)).delete()
    _store(benchmark, fresh, todo, slugs)
    keys = [f"s{pk}" for pk in order] + [s.key for s in sources if s.reported]
    ordered = [stored.get(pk) or fresh.get(f"s{pk}", {}) for pk in order]
    ordered += [fresh.get(s.key, {}) for s in sources if s.reported]
    return _assemble(benchmark, ordered, keys)


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
