"""The board's stored ranks as they are now: each ``EntryRank`` row's figures moved by the ``RankShift`` rows
recorded after it (issue 37: a change writes what changed, not every row below it).

A row stores its position and rank-interval ends as of its ``seq``. Each later shift is one entry taken out of
(-1) or put into (+1) the order, with its place in the order and its own bootstrap interval; it moves

- the row's position, where the shifted entry is ahead of the row in the order (value descending, finished, id);
- ``rank_low`` (1 + the entries whose lower bound is above the row's upper bound), where the shifted entry's
  lower bound is above the row's upper bound;
- ``rank_high`` (the entries whose upper bound is not below the row's lower bound), where the shifted entry's
  upper bound is not below the row's lower bound.

A tie group's shared rank is the position of its first entry (the nearest row at or above with ``starts_group``).
The shifts are few (``rank_update.COMPACT_AFTER`` at most before they are folded into the rows), so each row costs
a few comparisons, and a row's stored position is within that many places of its position now: a page of the
order reads the rows whose stored position is within that margin of the page (the position index).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils.dateparse import parse_datetime

from annotation.models import Benchmark
from leaderboard.models import EntryRank, RankShift

# What a row is read with to be shifted.
PLACE_FIELDS = ("submission_id", "position", "seq", "value", "finished_at", "starts_group")


def date_key(finished: datetime | None, nulls_last: bool) -> tuple[int, Any]:
    """A finish time's place in the database's ascending order (NULL first on SQLite, last on PostgreSQL)."""
    if finished is None:
        return (1 if nulls_last else -1, 0)
    return (0, finished)


def order_key(value: float, finished: datetime | None, sid: int, nulls_last: bool | None = None) -> tuple[Any, ...]:
    """An entry's place in a ranked order as a Python key: value descending, then finished, then id."""
    if nulls_last is None:
        nulls_last = connection.features.nulls_order_largest
    return (-value, date_key(finished, nulls_last), sid)


@dataclass(frozen=True)
class Shift:
    seq: int
    key: tuple[Any, ...]
    delta: int
    low: float
    high: float


def shifts_of(benchmark: Benchmark | int, metrics: Iterable[str] | None = None) -> dict[str, list[Shift]]:
    """The recorded shifts per metric, in order (one query)."""
    nulls_last = connection.features.nulls_order_largest
    where, params = "benchmark_id = %s", [getattr(benchmark, "pk", benchmark)]
    if metrics is not None:
        names = list(metrics)
        if not names:
            return {}
        where += f" AND metric IN ({', '.join(['%s'] * len(names))})"
        params += names
    out: dict[str, list[Shift]] = {}
    with connection.cursor() as cursor:  # in SQL as written: read with every page of the board (the ORM's cost)
        cursor.execute("SELECT metric, seq, submission_id, value, finished_at, delta, stat_low, stat_high FROM "
                       f"{RankShift._meta.db_table} WHERE {where} ORDER BY seq, id", params)
        for metric, seq, sid, value, finished, delta, low, high in cursor.fetchall():
            out.setdefault(metric, []).append(Shift(seq, order_key(value, _aware(finished), sid, nulls_last), delta,
                                                    low, high))
    return out


def rows_of(where: str, params: Sequence[Any], fields: Sequence[str] = PLACE_FIELDS) -> list[dict[str, Any]]:
    """Stored rank rows as dicts of ``fields`` (finish times aware, flags booleans, as the ORM reads them), by a
    condition in SQL: a page's rows are read with every uncached page, where the ORM's compiling costs more than
    the query."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(fields)} FROM {EntryRank._meta.db_table} WHERE {where}", params)
        out = [dict(zip(fields, got)) for got in cursor.fetchall()]
    for row in out:
        if "finished_at" in row:
            row["finished_at"] = _aware(row["finished_at"])
        for flag in ("starts_group", "significant_above"):
            if row.get(flag) is not None:
                row[flag] = bool(row[flag])
    return out


class Mover:
    """Moves stored rows by the shifts recorded after each: per ``seq`` a row can have, the later shifts sorted by
    place, by lower bound and by upper bound with their running sums, so that a row costs three bisections (a
    whole board's export reads every row)."""

    def __init__(self, shifts: Sequence[Shift], nulls_last: bool | None = None) -> None:
        self.shifts = shifts
        self.nulls_last = connection.features.nulls_order_largest if nulls_last is None else nulls_last
        self._after: dict[int, tuple[list[Any], list[int], list[float], list[int], list[float], list[int]]] = {}

    def _later(self, seq: int) -> tuple[list[Any], list[int], list[float], list[int], list[float], list[int]]:
        if seq not in self._after:
            later = [s for s in self.shifts if s.seq > seq]

            def sums(pairs: list[tuple[Any, int]]) -> tuple[list[Any], list[int]]:
                pairs.sort(key=lambda p: p[0])
                run, total = [0], 0
                for _, d in pairs:
                    total += d
                    run.append(total)
                return [p[0] for p in pairs], run

            self._after[seq] = (*sums([(s.key, s.delta) for s in later]), *sums([(s.low, s.delta) for s in later]),
                                *sums([(s.high, s.delta) for s in later]))
        return self._after[seq]

    def __call__(self, row: dict[str, Any]) -> tuple[int, Any, Any]:
        """(position, rank_low, rank_high) of a stored row now."""
        position, low, high = row["position"], row.get("rank_low"), row.get("rank_high")
        keys, by_key, lows, by_low, highs, by_high = self._later(row["seq"])
        if not keys:
            return position, low, high
        if row["value"] is not None:  # the shifted entries ahead of the row
            key = order_key(row["value"], row["finished_at"], row["submission_id"], self.nulls_last)
            position += by_key[bisect_left(keys, key)]
        if low is not None and row.get("stat_high") is not None:  # lower bounds above its upper bound
            low += by_low[-1] - by_low[bisect_right(lows, row["stat_high"])]
        if high is not None and row.get("stat_low") is not None:  # upper bounds not below its lower bound
            high += by_high[-1] - by_high[bisect_left(highs, row["stat_low"])]
        return position, low, high


def moved(row: dict[str, Any], shifts: Sequence[Shift], nulls_last: bool | None = None) -> tuple[int, Any, Any]:
    """(position, rank_low, rank_high) of one stored row now: its stored figures moved by the later shifts."""
    return Mover(shifts, nulls_last)(row)


def _aware(value: Any) -> datetime | None:
    """A finish time read by SQL as the ORM reads it: aware, in UTC (SQLite gives naive UTC, or text)."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def nearest(benchmark: Benchmark | int, metric: str, value: float, finished: datetime | None, sid: int, *,
            forward: bool, starts_only: bool = False, excluded: Collection[int] = ()) -> dict[str, Any] | None:
    """The nearest row (``PLACE_FIELDS``) of an ordering ahead of (or, ``forward``, after) a place in the order; of
    the group starts only, or leaving out some submissions. Two queries at most, each a range of an order index
    read from that place (``LIMIT 1``): the rows at the same value first, then beyond it. In SQL as written here
    (it runs a few times per changed entry and per page; the ORM's compiling cost ten times the query's)."""
    nulls_last = connection.features.nulls_order_largest
    at = connection.ops.adapt_datetimefield_value(finished) if finished is not None else None
    where, params = ["benchmark_id = %s", "metric = %s"], [getattr(benchmark, "pk", benchmark), metric]
    if starts_only:
        where.append("starts_group")  # as the partial index's condition reads (entry_rank_group_start_idx)
    if excluded:
        where.append(f"submission_id NOT IN ({', '.join(['%s'] * len(excluded))})")
        params += list(excluded)
    # the same value: a later (earlier) finish, or the same and a greater (smaller) id; NULL dates where the
    # database sorts them (first on SQLite, last on PostgreSQL)
    later, sign = (">", "<") if forward else ("<", ">")
    same_params: list[Any]
    if finished is None:
        same, same_params = f"(finished_at IS NULL AND submission_id {later} %s)", [sid]
        if nulls_last != forward:
            same += " OR finished_at IS NOT NULL"
    else:
        same, same_params = f"finished_at {later} %s OR (finished_at = %s AND submission_id {later} %s)", [at, at, sid]
        if nulls_last == forward:
            same += " OR finished_at IS NULL"
    order = ("value DESC, finished_at ASC, submission_id ASC" if forward
             else "value ASC, finished_at DESC, submission_id DESC")
    base = " AND ".join(where)
    for part, part_params in ((f"value = %s AND ({same})", [value, *same_params]), (f"value {sign} %s", [value])):
        got = rows_of(f"{base} AND {part} ORDER BY {order} LIMIT 1", [*params, *part_params])
        if got:
            return got[0]
    return None


def group_start(benchmark: Benchmark | int, metric: str, row: dict[str, Any]) -> dict[str, Any] | None:
    """The first entry of the row's tie group: the nearest row at or above it that starts one (a range of the
    group starts' partial index)."""
    if row["starts_group"]:
        return row
    return nearest(benchmark, metric, row["value"], row["finished_at"], row["submission_id"], forward=False,
                   starts_only=True)


def next_group_start(benchmark: Benchmark | int, metric: str, row: dict[str, Any]) -> dict[str, Any] | None:
    """The first entry of the next tie group below the row, if any."""
    return nearest(benchmark, metric, row["value"], row["finished_at"], row["submission_id"], forward=True,
                   starts_only=True)


@dataclass(frozen=True)
class Now:
    """A stored row's figures now."""

    position: int
    shared_rank: int
    rank_low: int | None
    rank_high: int | None
    above: int | None
    p_above: float | None
    significant_above: bool | None
    stat_low: float | None
    stat_high: float | None


ROW_FIELDS = (*PLACE_FIELDS, "metric", "rank_low", "rank_high", "stat_low", "stat_high", "above", "p_above",
              "significant_above")


def ranks_now(benchmark: Benchmark | int, rows: Iterable[dict[str, Any]],
              shifts: dict[str, list[Shift]] | None = None) -> dict[tuple[str, int], Now]:
    """The figures now of stored rows (``ROW_FIELDS``) of one board, by (metric, submission id). A row's group start
    is read once per run of rows that follow each other on the board (one indexed query per run)."""
    nulls_last = connection.features.nulls_order_largest
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_metric.setdefault(row["metric"], []).append(row)
    if shifts is None:
        shifts = shifts_of(benchmark, by_metric)
    out: dict[tuple[str, int], Now] = {}
    for metric, mine in by_metric.items():
        move = Mover(shifts.get(metric, []), nulls_last)
        placed = sorted(((move(r), r) for r in mine), key=lambda x: x[0][0])
        start_at: int | None = None
        last: int | None = None
        for (position, low, high), r in placed:
            if r["starts_group"]:
                start_at = position
            elif last is None or position != last + 1 or start_at is None:  # not right below the row before
                start = group_start(benchmark, metric, r)
                start_at = move(start)[0] if start is not None else position
            last = position
            out[(metric, r["submission_id"])] = Now(position, start_at, low, high, r["above"], r["p_above"],
                                                    r["significant_above"], r["stat_low"], r["stat_high"])
    return out


def board_ranks_now(benchmark: Benchmark | int) -> dict[tuple[str, int], Now]:
    """Every stored row's figures now (the tests compare them with a whole build's; the compaction writes them)."""
    shifts = shifts_of(benchmark)  # before the rows (``rank_update.ranks_compact``: a read straddling a fold)
    return ranks_now(benchmark, EntryRank.objects.filter(benchmark=benchmark).values(*ROW_FIELDS), shifts)


def page_ids(benchmark: Benchmark | int, metric: str, offset: int, limit: int,
             shifts: list[Shift] | None = None) -> list[int]:
    """The submission ids at positions ``offset + 1 .. offset + limit`` of a ranked order now: the rows whose stored
    position is within the shifts' count of that range, by the position index, placed now. ``shifts``: the
    ordering's, if read already."""
    sh = shifts_of(benchmark, [metric]).get(metric, []) if shifts is None else shifts
    margin = len(sh)
    rows = rows_of("benchmark_id = %s AND metric = %s AND position > %s AND position <= %s",
                   [getattr(benchmark, "pk", benchmark), metric, offset - margin, offset + limit + margin])
    move = Mover(sh)
    placed = sorted((move(r)[0], r["submission_id"]) for r in rows)
    return [sid for position, sid in placed if offset < position <= offset + limit]


def position_now(benchmark: Benchmark | int, metric: str, submission_id: int,
                 shifts: list[Shift] | None = None) -> int | None:
    """One entry's position in a ranked order now (None: no such row). ``shifts``: the ordering's, if read already."""
    row = EntryRank.objects.filter(submission_id=submission_id, metric=metric).values(*PLACE_FIELDS).first()
    if row is None:
        return None
    return moved(row, shifts_of(benchmark, [metric]).get(metric, []) if shifts is None else shifts)[0]
