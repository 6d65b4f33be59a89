"""The Progress tab's figures stored by the board's refresh, so that its page reads a few dozen numbers, not the board.

Per month (UTC), for all submissions and per kind of weights ("open", "closed", "other": unstated), the board's
last build stores how many public submissions were first scored that month and which one scored best
(``leaderboard.progress``'s rules: the earlier one on a tie), as ``[count, best score, best submission id]``, in the
board's payload under ``progress``. The page (``stored_rows``) takes the groups' cells, runs the best-so-far record
over the months and reads the holders' names by primary key: what ``progress_rows`` computes from every point, at
100,000 entries in milliseconds instead of 1.4 s. A refresh counts again only the months its changed submissions
were in, before or after the change (``months_of`` before and after; ``summary_update``), each by a few SQL
queries over an index of the entries' own copies of their first-scored month and time, weights and headline
accuracy (``month_summary``: the month's count per weights, a range; each one's best, the first row of its range),
not a pass over its entries in Python nor a read of their submissions (a month can hold most of the board); the
first build and a repair count every month from the points (``summary_of``, read through the submissions), which
``month_summary`` equals.
While the board's build is behind the results (a change not refreshed yet) the page computes from the points as
before.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import Coalesce

from annotation.models import Benchmark
from evaluation.derived import derived_read
from evaluation.models import Submission
from leaderboard.models import BoardEntry
from leaderboard.progress import MonthRow, Point, month_of, progress_rows

Summary = dict[str, dict[str, list[Any]]]  # month -> "all" or a kind of weights -> [count, best score, best id]


def _kind(weights: str) -> str:
    return weights if weights in ("open", "closed") else "other"


def _bounds(month: str) -> tuple[datetime, datetime]:
    year, number = int(month[:4]), int(month[5:7])
    return datetime(year, number, 1, tzinfo=UTC), datetime(year + number // 12, number % 12 + 1, 1, tzinfo=UTC)


def points(benchmark: Benchmark, months: Collection[str] | None = None) -> list[Point]:
    """Every public submission with a headline accuracy, in the board's order (``selectors.public_entries``): when it
    was first scored, its weights, score, name and submission id (one query); of the given months only (None: all)."""
    from leaderboard.selectors import public_entries

    rows = public_entries(benchmark).alias(first=Coalesce("submission__first_finished_at", "finished_at"))
    if months is not None:
        if not months:
            return []
        where = Q()
        for month in months:
            start, end = _bounds(month)
            where |= Q(first__gte=start, first__lt=end)
        rows = rows.filter(where)
    out = []
    for first, weights, name, mode, text, adaptive, oracle, sid in rows.values_list(
            Coalesce("submission__first_finished_at", "finished_at"), "submission__weights", "submission__model_name",
            "headline_mode", "text_acc", "adaptive_acc", "oracle_acc", "submission_id"):
        score = {"text": text, "adaptive": adaptive, "oracle": oracle}.get(mode)
        if first is not None and score is not None:
            out.append(Point(first, weights, score, name, sid))
    return out


def summary_of(found: list[Point]) -> Summary:
    """Per month, for all points and for each kind of weights: the count and the best point (the first of the best
    in time order)."""
    out: Summary = {}
    for p in sorted(found, key=lambda p: p.when):  # stable: the board's order among equal times, as progress_rows
        cells = out.setdefault(month_of(p.when), {})
        for key in ("all", _kind(p.weights)):
            cell = cells.get(key)
            if cell is None:
                cells[key] = [1, p.score, p.submission_id]
            else:
                cell[0] += 1
                if p.score > cell[1]:
                    cell[1], cell[2] = p.score, p.submission_id
    return out


def _number(month: str) -> int:
    """A month as ``BoardEntry.first_month`` stores it (YYYYMM)."""
    return int(month[:4]) * 100 + int(month[5:7])


BEST_FIRST = ("-headline_acc", "first_at", "finished_at", "submission_id")  # progress_rows's pick, board_entry_month_idx


def month_summary(benchmark: Benchmark, month: str) -> dict[str, list[Any]]:
    """``summary_of(points(benchmark, [month]))[month]`` by SQL over the build's entries (the refresh calls it after
    dropping those whose submission left the board, so they are the public entries ``points`` reads), from their own
    copies of the first-scored month and time, weights and headline accuracy (``services.entry_copies``,
    ``entry_fields``), never their submissions: one ``GROUP BY`` over the month's range of ``board_entry_month_idx``
    counts its entries per weights; per weights the best entry is the first of its range in that index's order
    (best score, then first-scored time and the board's order, ``public_entries``'s): one seek each; a group of
    several weights (all, other) takes the first of their bests, by a query when their scores tie."""
    rows = BoardEntry.objects.filter(benchmark=benchmark, first_month=_number(month), headline_acc__isnull=False)
    counts = dict(rows.order_by().values("weights").annotate(n=Count("pk")).values_list("weights", "n"))
    if not counts:
        return {}
    best = {weights: rows.filter(weights=weights).order_by(*BEST_FIRST).values_list(
        "submission_id", "headline_acc")[0] for weights in counts}
    groups: dict[str, list[str]] = {"all": list(counts)}
    for weights in counts:
        groups.setdefault(_kind(weights), []).append(weights)
    cells: dict[str, list[Any]] = {}
    for key, members in groups.items():
        top = max(best[w][1] for w in members)
        tied = [best[w][0] for w in members if best[w][1] == top]
        first = tied[0] if len(tied) == 1 else BoardEntry.objects.filter(submission_id__in=tied).order_by(  # by key
            *BEST_FIRST).values_list("submission_id", flat=True)[0]
        cells[key] = [sum(counts[w] for w in members), top, first]
    return cells


def months_of(benchmark: Benchmark, submission_ids: Collection[int]) -> set[str]:
    """The months these submissions' entries count in now (on the board or not: read before and after a change)."""
    if not submission_ids:
        return set()
    # by the submission key alone (they are the benchmark's): with the benchmark too, SQLite's planner walks its index
    months = BoardEntry.objects.filter(submission_id__in=list(submission_ids)).values_list("first_month", flat=True)
    return {f"{m // 100:04d}-{m % 100:02d}" for m in months if m is not None}


def summary_update(benchmark: Benchmark, last: Any, months: set[str] | None) -> Summary:
    """The summary after a refresh: ``last`` (the last build's) with ``months`` counted again; every month when
    ``months`` is None or there is no summary to start from."""
    if months is None or not isinstance(last, dict):
        return summary_of(points(benchmark))
    out = {m: v for m, v in last.items() if m not in months}
    for month in sorted(months):  # by SQL: a month holding 100,000 entries costs its indexed counts, not a pass over them
        cells = month_summary(benchmark, month)
        if cells:
            out[month] = cells
    return out


def _rows(summary: Summary, names: dict[int, str]) -> list[MonthRow]:
    """``progress_rows`` from the summary: per group, each month's count and best, and the best so far."""
    kinds = {k for cells in summary.values() for k in cells}
    groups = ["all", "open", "closed"] if {"open", "closed"} <= kinds else ["all"]
    rows: list[MonthRow] = []
    for group in groups:
        record: list[Any] | None = None
        for month in sorted(summary):
            cell = summary[month].get(group)
            if cell is None:
                continue
            if record is None or cell[1] > record[1]:
                record = cell
            rows.append(MonthRow(month, group, cell[0], cell[1], names.get(cell[2], ""),
                                 record[1], names.get(record[2], "")))
    return rows


def stored_rows(benchmark: Benchmark) -> list[MonthRow] | None:
    """The Progress tab's rows from the board's last build, or None when it cannot give them exactly: a build made
    before it stored them, or one behind the results (a change not refreshed yet: the page then counts the points)."""
    build = derived_read(benchmark, "board", part="progress")
    if build.built_at is None or build.version < benchmark.results_version or not isinstance(build.payload, dict):
        return None
    summary: Summary = build.payload
    ids = {cell[2] for cells in summary.values() for cell in cells.values()}
    names = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "model_name"))
    return _rows(summary, names)


def progress_rows_now(benchmark: Benchmark) -> list[MonthRow]:
    """The Progress tab's rows: stored by the board's build when it is current, else computed from every point."""
    stored = stored_rows(benchmark)
    return stored if stored is not None else progress_rows(points(benchmark))
