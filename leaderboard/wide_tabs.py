"""The wide tabs' tables (Accuracy by domain, Mode selection, Reasoning process, Toolchains, Tools), paged so that an
uncached page reads and computes its own rows only, however large the board.

What a page needs of the whole board is kept by the board's refresh: which rows the table has, in order (a
model x mode row per key and mode), as ``TabIndexRow`` rows the database orders (a page is a range of an
index: ``ORDER BY ... LIMIT 50 OFFSET k``; the Tools tab has a stored order per sort it offers), and, in the
build's payload, each table's row count and, per mode and column, the best and second-best value (the ▲/△
marks). A page reads its range of the order, then the results of its own rows' submissions
(``selectors.tab_sources(submission_ids=...)``, which keeps only those still on the board: a row that left it
since the build is left out) and computes their figures and intervals with the same functions the refresh ran
over the whole board. The Cost & Pareto tab has its own stored points, frontier and baselines
(``leaderboard.pareto_store``).

A change costs what changed (``tables_update``): the rows of the submissions rebuilt now are computed from their
results and written, those of the submissions that left the board deleted, the reported rows written again; the
marks move by those rows alone, from a window per mode and column of the best distinct values and how many rows
hold each (``WINDOW`` of them; the column is read again only when its window runs out). The full build
(``tables_build``: the board's first, ``board_rebuild``) computes everything from every submission's results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from itertools import islice
from typing import Any

from django.db import connection

from annotation.models import Benchmark
from evaluation.derived import derived_read
from evaluation.metrics.types import BOARD_MODES as MODES
from leaderboard import cache, selectors
from leaderboard.board import PAGE_SIZE
from leaderboard.figures import Fig
from leaderboard.models import TabIndexRow
from leaderboard.paging import page_rows, page_span
from leaderboard.tools_tab import (COLUMNS as TOOLS_COLUMNS, DEFAULT_SORT, PARTS as TOOLS_PARTS, sort_choice,
                                   sorted_positions, tools_table)

# The parts of a submission's results each wide tab reads (selectors.tab_sources), as paths.
TAB_PARTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "domains": tuple(("modes", m, "accuracy", k) for m in MODES for k in ("wo_enh", "all", "aux_line")),
    "mode-selection": (("mode_selection",),),
    "process": (("modes", "adaptive", "process"),),
    "toolchains": tuple(("modes", m, "toolchain") for m in ("adaptive", "oracle")),
    "tools": TOOLS_PARTS,
}
INDEXED = tuple(TAB_PARTS)
# Tabs a visitor sorts by any column: the index keeps the rows in each order the tab offers.
SORTED = ("tools",)
_TOOLS_KEYS = [key for _, key, _, _ in TOOLS_COLUMNS]
_CONTRIBUTION = _TOOLS_KEYS.index(DEFAULT_SORT)
# The Tools tab's orders besides its own (tool contribution, highest first): (name, column, descending).
TOOLS_ORDERS = tuple((f"tools:{key}:{int(desc)}", i, desc) for i, key in enumerate(_TOOLS_KEYS)
                     for desc in (True, False) if (key, desc) != (DEFAULT_SORT, True))
BIG = 1e300  # the sort key of a row without the value: above every value, so the row goes last
ORDER_FIELDS = ("sort_key", "tie", "reported", "finished_at", "source_pos", "mode_pos")  # TabIndexRow's index
WINDOW = 8  # the best distinct values the refresh keeps per mode and column (with their rows' counts)
BATCH = 5000  # index rows built and written at a time by the full build


def _table(benchmark: Benchmark, tab: str, sources: list[selectors.TabSource], intervals: bool = True,
           memo: dict[Any, Any] | None = None) -> list[Any]:
    """The tab's rows over ``sources`` (all the board's in the refresh, a page's when read); ``intervals=False``:
    the values alone; ``memo``: the Tools tab's figures drawn already (the refresh's, ``tools_table``)."""
    if tab == "domains":
        return selectors.domain_table(benchmark, sources)[1]
    if tab == "mode-selection":
        return selectors.mode_selection(sources)
    if tab == "process":
        return selectors.process_table(sources, selectors.process_columns(benchmark.figures))
    if tab == "tools":
        return tools_table(sources, intervals, memo)
    return selectors.toolchain_table(sources)


def _tables(benchmark: Benchmark, sources: list[selectors.TabSource]) -> dict[str, list[Any]]:
    """Every indexed tab's rows over ``sources``, as the refresh stores them: the values alone, but the Tools tab's
    figures with their intervals (stored with its rows, so that a page draws no bootstrap), each set of counts
    drawn once."""
    return {tab: _table(benchmark, tab, sources, intervals=tab == "tools", memo={}) for tab in INDEXED}


def _fig_list(fig: Fig) -> list[Any]:
    return [fig.value, fig.lo, fig.hi, fig.n, fig.digits, fig.reason]


def _row_id(row: Any) -> tuple[str, str]:
    return row.source.key, getattr(row, "mode", "")


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


def order_name(tab: str, params: Any) -> str:
    """The stored order a page of ``tab`` reads: the tab's own, or the Tools tab's sort chosen in ``params``."""
    if tab not in SORTED:
        return tab
    key, desc = sort_choice(params)
    return tab if (key, desc) == (DEFAULT_SORT, True) else f"{tab}:{key}:{int(desc)}"


def _key(value: float | None, desc: bool) -> float:
    """A value's sort key in an ascending order (descending: negated); a row without it last."""
    return BIG if value is None else -value if desc else value


# TabIndexRow's columns as ``_index_rows`` gives them, written by ``_write``.
COLUMNS = ("benchmark_id", "order", "submission_id", "key", "mode", "sort_key", "tie", "reported", "finished_at",
           "source_pos", "mode_pos", "values", "figures")


def _index_rows(benchmark: Benchmark, sources: list[selectors.TabSource],
                tables: dict[str, list[Any]]) -> Iterator[tuple[Any, ...]]:
    """The index rows of ``tables`` (computed over ``sources``), as tuples of ``COLUMNS`` in the database's own
    form: each table row in its tab's own order, with its values, and the Tools tab's rows in each of its other
    orders. Their keys reproduce the tables' sorts: Mode selection by MCC (a row without it as -2), highest first,
    and Tools by contribution, highest first, rows without it last, each stable over the sources' order; a Tools
    sort by a column (``sorted_positions``) keeps ties and rows without the value in the tab's own order
    (``tie``)."""
    finished_field, values_field = TabIndexRow._meta.get_field("finished_at"), TabIndexRow._meta.get_field("values")
    finished = {s.key: finished_field.get_db_prep_save(s.finished_at, connection) for s in sources}
    reported = {s.key: i for i, s in enumerate(s for s in sources if s.reported)}
    for tab, rows in tables.items():
        seen: dict[str, int] = {}
        for row in rows:
            src = row.source
            key, mode = _row_id(row)
            values = _values(row)
            seen[key] = seen.get(key, -1) + 1
            pos = reported[key] if src.reported else src.submission_id
            if tab == "mode-selection":
                own = _key(values[0] if values[0] is not None else -2.0, True)
            elif tab == "tools":
                own = _key(values[_CONTRIBUTION], True)
            else:
                own = 0.0
            figures = [_fig_list(c.fig) for c in row.cells] if tab == "tools" else None
            yield (benchmark.pk, tab, src.submission_id, key, mode, own, 0.0, src.reported, finished[key], pos,
                   seen[key], values_field.get_db_prep_save(values, connection),
                   None if figures is None else values_field.get_db_prep_save(figures, connection))
            if tab == "tools":
                for name, col, desc in TOOLS_ORDERS:
                    yield (benchmark.pk, name, src.submission_id, key, mode, _key(values[col], desc), own,
                           src.reported, finished[key], pos, seen[key], None, None)


def _write(rows: Iterable[tuple[Any, ...]]) -> None:
    """Insert index rows, ``BATCH`` a statement's parameters: the full build writes 27 a submission (270,000 at
    10,000 entries), which Django's ``bulk_create`` took three times as long to prepare as the rest of the build."""
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        connection.ops.quote_name(TabIndexRow._meta.db_table),
        ", ".join(connection.ops.quote_name(c) for c in COLUMNS), ", ".join(["%s"] * len(COLUMNS)))
    it = iter(rows)
    with connection.cursor() as cursor:
        while batch := list(islice(it, BATCH)):
            cursor.executemany(sql, batch)


def _window(values: Iterable[float | None], higher: bool) -> list[Any]:
    """A column's window: [complete, [[value, rows], ...]], its best ``WINDOW`` distinct values (the marks' rule,
    ``selectors.best_values``), best first, each with how many rows hold it; complete: every value is in it."""
    counts = Counter(v for v in values if v is not None)
    return [len(counts) <= WINDOW, [[v, counts[v]] for v in selectors.best_values(counts, higher, WINDOW)]]


def _windows(benchmark: Benchmark, tab: str, rows: Iterable[tuple[str, list[float | None]]]) -> dict[str, Any]:
    """{mode: {"n": rows, "columns": [window per column, None where not marked]}} of a tab's (mode, values) rows."""
    by_mode: dict[str, list[list[float | None]]] = {}
    for mode, values in rows:
        by_mode.setdefault(mode, []).append(values)
    return {mode: {"n": len(vals), "columns": [None if higher is None else _window((v[i] for v in vals), higher)
                                               for i, higher in enumerate(_directions(benchmark, tab, len(vals[0])))]}
            for mode, vals in by_mode.items()}


def _move(window: list[Any], value: float, higher: bool, delta: int) -> bool:
    """A row with ``value`` added to (``delta`` 1) or taken from (-1) a column's window; False: the window cannot
    follow it exactly (a value it should hold is missing), so the column is to be read again."""
    pairs = window[1]
    for j, (held, n) in enumerate(pairs):
        if held == value:
            if n + delta < 0:
                return False
            if n + delta == 0:
                del pairs[j]
            else:
                pairs[j][1] = n + delta
            return True
        if (value > held) if higher else (value < held):  # better than a value held, and not held itself
            if delta < 0:
                return False
            pairs.insert(j, [value, delta])
            if len(pairs) > WINDOW:
                pairs.pop()
                window[0] = False
            return True
    if window[0]:  # below every value held, in a complete window
        if delta < 0:
            return False
        pairs.append([value, delta])
        if len(pairs) > WINDOW:
            pairs.pop()
            window[0] = False
    return True  # else below an incomplete window: a value it does not hold


def _marks(windows: dict[str, Any]) -> dict[str, list[list[float | None]]]:
    """{mode: [[best, second best] per column]} from a tab's windows ({} for a tab without marked columns)."""
    out: dict[str, list[list[float | None]]] = {}
    for mode, entry in windows.items():
        if any(w is not None for w in entry["columns"]):
            out[mode] = [[None, None] if w is None else [*(v for v, _ in w[1][:2]), *[None] * (2 - len(w[1][:2]))]
                         for w in entry["columns"]]
    return out


def _payload(slugs: list[str], windows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The board build's payload keys of the index: per tab its row count and marks (``tab_index``, what a page
    reads) and the windows the next refresh moves the marks with (``tab_windows``)."""
    return {"tab_index": {"domain_slugs": slugs, "tabs": {
        tab: {"count": sum(e["n"] for e in windows[tab].values()), "marks": _marks(windows[tab])} for tab in windows}},
            "tab_windows": windows}


def tables_build(benchmark: Benchmark) -> dict[str, Any]:
    """Every indexed tab's rows in each of its orders (``TabIndexRow``, the benchmark's written again) and its
    marks (the payload keys of ``_payload``), from every public submission's results, read once with the parts
    of every tab: the board's first build and its repair (``board_rebuild``)."""
    parts = sorted({p for tab in INDEXED for p in TAB_PARTS[tab]})
    sources = selectors.tab_sources(benchmark, parts, domain_table=True)
    tables = _tables(benchmark, sources)
    TabIndexRow.objects.filter(benchmark_id=benchmark.pk).delete()
    _write(_index_rows(benchmark, sources, tables))
    return _payload(_domain_slugs(benchmark), {
        tab: _windows(benchmark, tab, ((_row_id(r)[1], _values(r)) for r in rows)) for tab, rows in tables.items()})


def tables_update(benchmark: Benchmark, changed: Collection[int], gone: Collection[int] = ()) -> dict[str, Any]:
    """What ``tables_build`` builds, by what changed: the index rows of the submissions ``changed`` (their entries
    rebuilt) and ``gone`` (left the board) and the reported rows are deleted, those of the changed still on the
    board and of the reported rows computed from their results and written, and the last build's counts and
    marks moved by the rows deleted and written (a column whose window ran out read again). The full build
    instead when the last build has no index (or one for other domains), or when most of the board changed."""
    index = derived_read(benchmark, "board", part="tab_index").payload  # the parts alone: the payload is others' too
    windows = derived_read(benchmark, "board", part="tab_windows").payload
    slugs = _domain_slugs(benchmark)
    if (not isinstance(index, dict) or not isinstance(windows, dict) or index.get("domain_slugs") != slugs
            or set(windows) != set(INDEXED)):
        return tables_build(benchmark)
    ids = sorted(set(changed) | set(gone))
    if len(ids) > max(500, max((t["count"] for t in index["tabs"].values()), default=0) // 4):
        return tables_build(benchmark)  # most of the board: as cheap whole, and one list of ids stays short
    mine = TabIndexRow.objects.filter(submission_id__in=ids)
    # the reported rows by the submission index (no submission: a few dozen rows, every benchmark's), not by the
    # order index's benchmark prefix, which SQLite would take and walk all of the benchmark's rows
    reported = TabIndexRow.objects.filter(pk__in=[pk for pk, b in TabIndexRow.objects.filter(
        submission__isnull=True).values_list("pk", "benchmark_id") if b == benchmark.pk])
    old = [*mine.filter(order__in=INDEXED).values_list("order", "mode", "values"),
           *reported.filter(order__in=INDEXED).values_list("order", "mode", "values")]
    mine.delete()
    reported.delete()
    parts = sorted({p for tab in INDEXED for p in TAB_PARTS[tab]})
    sources = selectors.tab_sources(benchmark, parts, domain_table=True, submission_ids=changed)
    tables = _tables(benchmark, sources)
    _write(_index_rows(benchmark, sources, tables))
    new = [(tab, _row_id(r)[1], _values(r)) for tab, rows in tables.items() for r in rows]
    again: set[str] = set()
    directions_of: dict[tuple[str, int], list[bool | None]] = {}
    for delta, rows in ((-1, old), (1, new)):
        for tab, mode, values in rows:
            directions = directions_of.setdefault((tab, len(values)), _directions(benchmark, tab, len(values)))
            entry = windows[tab].setdefault(mode, {"n": 0, "columns": [
                None if higher is None else [True, []] for higher in directions]})
            entry["n"] += delta
            if len(entry["columns"]) != len(values) or entry["n"] < 0:
                again.add(tab)
                continue
            for window, higher, value in zip(entry["columns"], directions, values):
                if window is not None and value is not None and higher is not None \
                        and not _move(window, value, higher, delta):
                    again.add(tab)
    for tab, modes in windows.items():
        for mode in [m for m, e in modes.items() if e["n"] == 0]:
            del modes[mode]
        if any(w is not None and not w[0] and len(w[1]) < 2 for e in modes.values() for w in e["columns"]):
            again.add(tab)
    for tab in again:  # a window ran out: the tab's values read again, from its index rows
        windows[tab] = _windows(benchmark, tab, TabIndexRow.objects.filter(
            benchmark_id=benchmark.pk, order=tab).values_list("mode", "values"))
    return _payload(slugs, windows)


def _stored_figures(benchmark: Benchmark, ids: Collection[int]) -> dict[tuple[str, str], list[list[Any]]] | None:
    """The Tools tab's figures of these submissions' rows as the board's last build stored them, by (key, mode); None
    when the page must draw them: the build is behind the results (a row's results may have changed since: the page
    shows them as they read now) or made before the figures were stored."""
    version, built_at = cache.build_of(benchmark, "board")
    if built_at is None or version is None or version < benchmark.results_version:
        return None
    found = {(key, mode): figures for key, mode, figures in TabIndexRow.objects.filter(
        submission_id__in=list(ids), order="tools").values_list("key", "mode", "figures")}
    return None if any(f is None for f in found.values()) else found


def _page_keys(benchmark: Benchmark, order: str, start: int, total: int) -> list[tuple[str, str]]:
    """(key, mode) of the rows [start, start + PAGE_SIZE) of a stored order of ``total`` rows: a range of its index,
    walked from the nearer end (a page past the middle reads the order backwards: DESC is the exact reverse of
    ASC on both databases, NULLs included)."""
    limit = min(PAGE_SIZE, total - start)
    if limit <= 0:
        return []
    rows = TabIndexRow.objects.filter(benchmark_id=benchmark.pk, order=order)
    if start <= total - start - limit:
        return list(rows.order_by(*ORDER_FIELDS).values_list("key", "mode")[start:start + limit])
    back = total - start - limit
    return list(rows.order_by(*(f"-{f}" for f in ORDER_FIELDS)).values_list("key", "mode")[back:back + limit])[::-1]


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
    start, pager = page_span(index["count"], params, base)
    keys = _page_keys(benchmark, order_name(tab, params), start, index["count"])
    ids = {int(key[1:]) for key, _ in keys if key.startswith("s")}
    sources = selectors.tab_sources(benchmark, TAB_PARTS[tab], domain_table=tab == "domains", submission_ids=ids)
    stored = _stored_figures(benchmark, ids) if tab == "tools" else None
    if stored is not None:  # the refresh drew the rows' intervals (a bootstrap per figure): the page reads them
        by_key = {s.key: s for s in sources}
        found = {(key, mode): selectors.TableRow(by_key[key], mode, [selectors.Cell(Fig(*f)) for f in figures])
                 for (key, mode), figures in stored.items() if key in by_key}
    else:
        found = {_row_id(r): r for r in _table(benchmark, tab, sources)}
    rows = [found[(key, mode)] for key, mode in keys if (key, mode) in found]  # gone: left the board since
    marks = index["marks"]
    for row in rows:
        columns = marks.get(getattr(row, "mode", "")) or []
        for i, cell in enumerate(getattr(row, "cells", ())):
            cell.place = selectors.place(cell.fig.value, columns[i] if i < len(columns) else ())
    return rows, pager, sources
