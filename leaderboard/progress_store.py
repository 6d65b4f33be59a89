"""The Progress tab's figures stored by the board's refresh, so that its page reads a few dozen numbers, not the board.

Per month (UTC), for all submissions and per kind of weights ("open", "closed", "other": unstated), the board's
last build stores how many public submissions were first scored that month and which one scored best
(``leaderboard.progress``'s rules: the earlier one on a tie), as ``[count, best score, best submission id]``, in the
board's payload under ``progress``. The page (``stored_rows``) takes the groups' cells, runs the best-so-far record
over the months and reads the holders' names by primary key: what ``progress_rows`` computes from every point, at
100,000 entries in milliseconds instead of 1.4 s. A refresh counts again only the months its changed submissions
were in, before or after the change (``months_of`` before and after; ``summary_update``), each by a few SQL
queries (``month_summary``: counts and top scores per kind of weights, then each top's first entry by the
accuracy indexes, ``LIMIT 1``), not a pass over its entries in Python (a month can hold most of the board); the
first build and a repair count every month from the points (``summary_of``), which ``month_summary`` equals.
While the board's build is behind the results (a change not refreshed yet) the page computes from the points as
before.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from django.db.models import Case, Count, F, FloatField, Max, Q, QuerySet, When
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


MODES = ("text", "adaptive", "oracle")


def _headline() -> Case:
    """The entry's headline accuracy in SQL: its ``headline_mode``'s column (NULL for no mode), as ``points``."""
    return Case(*(When(headline_mode=mode, then=F(f"{mode}_acc")) for mode in MODES),
                default=None, output_field=FloatField())


def _month_rows(benchmark: Benchmark, month: str) -> QuerySet[BoardEntry]:
    from leaderboard.selectors import public_entries

    start, end = _bounds(month)
    return public_entries(benchmark).alias(first=Coalesce("submission__first_finished_at", "finished_at")).annotate(
        score=_headline()).filter(first__gte=start, first__lt=end, score__isnull=False)


def month_summary(benchmark: Benchmark, month: str) -> dict[str, list[Any]]:
    """``summary_of(points(benchmark, [month]))[month]`` by SQL instead of a pass over the month's entries in Python:
    one query counts the month's entries and takes their best score per weights (``GROUP BY``); then each group's
    best entry is the first, in first-scored time and then the board's order (``public_entries``'s), of those at
    that score: ``ORDER BY ... LIMIT 1`` over the entries the accuracy indexes find at that value (one per mode)."""
    rows = _month_rows(benchmark, month)
    counts: dict[str, int] = {}
    tops: dict[str, float] = {}
    for weights, n, top in rows.order_by().values("submission__weights").annotate(
            n=Count("pk"), top=Max("score")).values_list("submission__weights", "n", "top"):
        key = _kind(weights)
        counts[key] = counts.get(key, 0) + n
        tops[key] = top if key not in tops else max(tops[key], top)
    if not counts:
        return {}
    counts["all"], tops["all"] = sum(counts.values()), max(tops.values())
    cells: dict[str, list[Any]] = {}
    for key in ("all", "open", "closed", "other"):
        if key not in counts:
            continue
        group = rows.order_by()
        if key == "other":
            group = group.exclude(submission__weights__in=["open", "closed"])
        elif key != "all":
            group = group.filter(submission__weights=key)
        # The entries at the top score, per mode an equality on that mode's accuracy index, then the first of them.
        at_top = [group.filter(headline_mode=mode, **{f"{mode}_acc": tops[key]}).annotate(
            first_at=Coalesce("submission__first_finished_at", "finished_at")).values_list(
            "submission_id", "first_at", "finished_at") for mode in MODES]
        best = at_top[0].union(*at_top[1:], all=True).order_by("first_at", "finished_at", "submission_id")[0]
        cells[key] = [counts[key], tops[key], best[0]]
    return cells


def months_of(benchmark: Benchmark, submission_ids: Collection[int]) -> set[str]:
    """The months these submissions' entries count in now (on the board or not: read before and after a change)."""
    if not submission_ids:
        return set()
    whens = BoardEntry.objects.filter(benchmark=benchmark, submission_id__in=list(submission_ids)).values_list(
        Coalesce("submission__first_finished_at", "finished_at"), flat=True)
    return {month_of(w) for w in whens if w is not None}


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
