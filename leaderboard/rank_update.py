"""The board's ranks after a change, by what changed (issue 37): the stored ``EntryRank`` rows and the recorded
``RankShift`` rows brought to figures (``rank_read``) equal to what a full build (``services.ranks_build``) writes,
at a cost that does not read, nor write, the board.

Per ranked ordering, the changed entries (rebuilt, added or dropped) are taken out of the stored order and those
with a value put back at their new places, at once:

- each changed entry, at its old place (a row's stored value, finish and id) or its new one, falls between two kept
  rows, found by ``LIMIT 1`` queries over the rows' order index (migration 0018); the new entries of each such gap
  are placed after the kept row above it (at its position now plus one each), their own bootstrap intervals
  computed (each depends on its vector alone) and their rank intervals counted over the stored bounds' indexes
  (``COUNT``); the new neighbour pairs are tested (the new entries against the entry above, the kept row below
  the gap against its new neighbour), which sets whether a tie group starts at each;
- every entry taken out or put in is recorded as a shift (its place, its bounds, +1 or -1, the change's ``seq``):
  the kept rows are not written, their positions and rank-interval ends are moved by the later shifts when read;
- past ``COMPACT_AFTER`` shifts in an ordering the sweeper folds the shifts into the rows (``ranks_fold_due``,
  ``ranks_compact``: positions counted again from the stored places, rank-interval ends from the stored bounds, one
  pass without bootstrap), off the refresh's way: a fold can write most of the board (a re-score's new bounds move
  the rank intervals of every entry whose bounds they cross). A refresh folds only past ``FOLD_IN_REFRESH_AFTER``
  (no sweeper running).

So a change writes its own rows, the row below each gap and its shifts; the reads are a few indexed queries per
changed entry, whatever the board's size.

Exact where it runs; where it cannot be sure (no earlier build, an entry without its own interval because its vector
is not the board's length, stored rows that do not add up to the board's entries) nothing is written (a savepoint
rolled back) and the refresh builds the whole board (``leaderboard/tests/test_rank_update.py`` and
``test_board_refresh_sequence.py`` compare the two, field by field).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Max

from annotation.models import Benchmark
from evaluation.metrics import entry_bounds, entry_bounds_mcc, neighbour_mcnemar
from evaluation.metrics.ranks import Bounds
from leaderboard.board import Vectors, mcc_cells, mcc_pair_test
from leaderboard.models import BoardEntry, EntryRank, RankShift
from leaderboard.rank_read import PLACE_FIELDS, ROW_FIELDS, Mover, Shift, moved, nearest, order_key, shifts_of

# The orderings whose neighbours are tested and ranked: the BoardEntry field each sorts by (descending).
RANKED = {"text": "text_acc", "adaptive": "adaptive_acc", "oracle": "oracle_acc", "mcc": "mcc"}


def ordered_places(benchmark: Benchmark, field_name: str) -> list[tuple[int, float, datetime | None]]:
    """Public entries with a value, in the overview's unfiltered descending order (ties: finished, id): (submission
    id, value, finished) each. Read from the database with the overview's own ORDER BY, so both agree on where NULL
    dates go."""
    return list(BoardEntry.objects.on_board().filter(benchmark=benchmark).filter(**{f"{field_name}__isnull": False})
                .order_by(F(field_name).desc(), "finished_at", "submission_id").values_list(
                    "submission_id", field_name, "finished_at"))


class _Unsure(Exception):
    """The stored rows cannot be brought up exactly: the savepoint is rolled back and the board built whole."""


Test = tuple[float | None, bool | None]  # a neighbour test's (p, significant); (None, None): none


class _Ordering:
    """One ranked ordering's stored rows, updated by taking the changed entries out and putting them in."""

    def __init__(self, benchmark: Benchmark, metric: str, vectors: Callable[[set[int]], dict[int, Vectors]],
                 seq: int, shifts: list[Shift]) -> None:
        self.benchmark, self.metric, self.field = benchmark, metric, RANKED[metric]
        self.rows = EntryRank.objects.filter(benchmark=benchmark, metric=metric)
        self.vectors = vectors
        self.seq, self.shifts = seq, shifts
        self.batch: list[Shift] = []  # this change's
        self.cells: dict[int, Any] = {}

    def row(self, sid: int) -> Any:
        """The entry's vector as the full build tests and bootstraps it (MCC: its cells, one byte each)."""
        if sid not in self.cells:
            v = self.vectors({sid}).get(sid)
            if v is None:
                raise _Unsure  # a stored row without its entry
            self.cells[sid] = array("b", mcc_cells(v)) if self.metric == "mcc" else v.correct.get(self.metric, "")
        return self.cells[sid]

    def test(self, above: int, sid: int) -> Test:
        a, b = self.row(above), self.row(sid)
        got = mcc_pair_test(a, b) if self.metric == "mcc" else neighbour_mcnemar([a, b])[1]  # as ranks_build tests
        return (got.p_value, got.significant) if got is not None else (None, None)

    def update(self, changed: set[int], new: dict[int, tuple[float, datetime | None]]) -> None:
        """Take the changed entries out and put those with a value (``new``: value, finished) in, at once.

        Each changed entry, at its old place or its new one, falls between two kept rows (a gap: ``a`` above,
        ``b`` below; None at an end), found by the order index. In each gap the new entries are placed after
        ``a`` (their positions: ``a``'s now, moved by this change's shifts, plus one each), tested against the
        entry above, and ``b`` gets its new neighbour above, test and group start. The kept rows are not written:
        the shifts recorded for the entries taken out and put in move their positions and rank-interval ends
        when they are read (``rank_read``). All reads are done before the first write."""
        if self.rows.filter(stat_low__isnull=True).exists():
            raise _Unsure  # an entry without its own interval: the full build decides the board's length
        if self.rows.filter(value__isnull=True).exists():
            raise _Unsure  # a row without its place (one migrated from an entry that had none): built whole
        taken = {r["submission_id"]: r for r in self.rows.filter(submission_id__in=changed).values(*ROW_FIELDS)}
        kept = self.rows.exclude(submission_id__in=changed)
        if new:
            some = list(kept.order_by().values_list("submission_id", flat=True)[:1])
            if not some:
                raise _Unsure  # no entry kept: the full build decides the board's length
            length = len(self.row(some[0]))
            if not length or any(len(self.row(sid)) != length for sid in new):
                raise _Unsure
        own = dict(zip(new, (entry_bounds_mcc if self.metric == "mcc" else entry_bounds)(
            [self.row(sid) for sid in new]))) if new else {}
        nulls_last = connection.features.nulls_order_largest

        # The gaps between kept rows where something changed, by the kept row above (None: the top).
        gaps: dict[int | None, tuple[dict[str, Any] | None, dict[str, Any] | None, list[int]]] = {}
        places = [(r["value"], r["finished_at"], sid, False) for sid, r in taken.items()]
        places += [(value, finished, sid, True) for sid, (value, finished) in new.items()]
        for value, finished, sid, put in places:
            a = nearest(self.benchmark, self.metric, value, finished, sid, forward=False, excluded=changed)
            at = a["submission_id"] if a is not None else None
            if at not in gaps:
                b = nearest(self.benchmark, self.metric, value, finished, sid, forward=True, excluded=changed)
                gaps[at] = (a, b, [])
            if put:
                gaps[at][2].append(sid)

        # (submission, value, finished, delta, bounds) of each entry taken out or put in
        recorded = [(sid, r["value"], r["finished_at"], -1, Bounds(r["stat_low"], r["stat_high"]))
                    for sid, r in taken.items()]
        recorded += [(sid, value, finished, 1, own[sid]) for sid, (value, finished) in new.items()]
        batch = [Shift(self.seq, order_key(value, finished, sid, nulls_last), delta, bd.low, bd.high)
                 for sid, value, finished, delta, bd in recorded]
        shifts = self.shifts + batch
        self.batch = batch

        # Rank-interval ends of the new entries: the stored bounds counted over their indexes, the rows taken out
        # subtracted, the new added (the kept rows' ends move by the shifts when read).
        out_bounds = [Bounds(r["stat_low"], r["stat_high"]) for r in taken.values()]
        in_bounds = list(own.values())
        inserts: list[EntryRank] = []
        below: list[tuple[int, int | None, Test, bool]] = []  # (kept row b, its new above, test, starts a group)
        for a, b, ins in gaps.values():
            ins.sort(key=lambda sid: order_key(new[sid][0], new[sid][1], sid, nulls_last))
            place = moved(a, shifts, nulls_last)[0] if a is not None else 0
            above = a["submission_id"] if a is not None else None
            for sid in ins:
                place += 1
                test = self.test(above, sid) if above is not None else (None, None)
                bd = own[sid]
                low = 1 + self.rows.filter(stat_low__gt=bd.high).count() - sum(o.low > bd.high for o in out_bounds) \
                    + sum(o.low > bd.high for o in in_bounds)
                high = self.rows.filter(stat_high__gte=bd.low).count() - sum(o.high >= bd.low for o in out_bounds) \
                    + sum(o.high >= bd.low for o in in_bounds)
                value, finished = new[sid]
                inserts.append(EntryRank(
                    submission_id=sid, benchmark_id=self.benchmark.pk, metric=self.metric, value=value,
                    finished_at=finished, position=place, starts_group=above is None or bool(test[1]),
                    rank_low=low, rank_high=high, stat_low=bd.low, stat_high=bd.high, above=above, p_above=test[0],
                    significant_above=test[1], seq=self.seq))
                above = sid
            if b is not None:
                test = self.test(above, b["submission_id"]) if above is not None else (None, None)
                below.append((b["submission_id"], above, test, above is None or bool(test[1])))

        # The writes.
        self.rows.filter(submission_id__in=list(taken)).delete()
        RankShift.objects.bulk_create([RankShift(
            benchmark_id=self.benchmark.pk, metric=self.metric, seq=self.seq, submission_id=sid, value=value,
            finished_at=finished, delta=delta, stat_low=bd.low, stat_high=bd.high)
            for sid, value, finished, delta, bd in recorded])
        for sid, above, (p, sig), starts in below:
            self.rows.filter(submission_id=sid).update(above=above, p_above=p, significant_above=sig,
                                                       starts_group=starts)
        EntryRank.objects.bulk_create(inserts, batch_size=2000)

    def check(self) -> None:
        """The stored rows add up: one per entry with a value (two counts over indexes), the last in the order at
        the last position now (a row gone without its shift, as when a submission is deleted outright and its rows
        with it, leaves the rows below it a place too low)."""
        rows = self.rows.count()
        entries = BoardEntry.objects.filter(benchmark=self.benchmark, **{f"{self.field}__isnull": False}).count()
        if rows != entries:
            raise _Unsure
        last = self.rows.order_by(F("value").asc(), F("finished_at").desc(), F("submission_id").desc()).values(
            *PLACE_FIELDS).first()
        if last is not None and Mover(self.shifts + self.batch)(last)[0] != rows:
            raise _Unsure


# Changed entries at once above which, when they are also more than a quarter of the board, the ranks are built whole
# (as the wide tabs' index is: wide_tabs.tables_update).
WHOLE_ABOVE = 500


def ranks_update(benchmark: Benchmark, changed: set[int]) -> bool:
    """Bring the stored ranks of ``benchmark`` up to its entries, given the submissions whose entry was rebuilt,
    added or dropped since the last build (``changed``; every other entry as the last build ranked it). False,
    having written nothing: it cannot be done exactly from the stored rows, or more than a quarter of the board (and
    more than ``WHOLE_ABOVE`` entries) changed at once, and the caller builds the whole board. When more than
    ``FOLD_IN_REFRESH_AFTER`` shifts of an ordering are recorded (the sweeper, which folds them past
    ``COMPACT_AFTER``, is not running), they are folded into its rows here (``ranks_compact``)."""
    if len(changed) > WHOLE_ABOVE and len(changed) * 4 > BoardEntry.objects.filter(benchmark=benchmark).count():
        # Each changed entry costs a few indexed queries, each excluding the changed ones: a bulk change (an
        # import, a thousand clones) is cheaper built whole (90 s against 13 s for 1,000 at once on PostgreSQL).
        return False
    cache: dict[int, Vectors] = {}

    def vectors(ids: set[int]) -> dict[int, Vectors]:
        missing = ids - cache.keys()
        if missing:
            for sid, correct, invoked in BoardEntry.objects.filter(submission_id__in=missing).values_list(
                    "submission_id", "correct", "invoked"):
                cache[sid] = Vectors(correct=correct, invoked=invoked)
        return cache

    fields = list(RANKED.values())
    values = {sid: rest for sid, *rest in BoardEntry.objects.filter(benchmark=benchmark, submission_id__in=changed)
              .values_list("submission_id", "finished_at", *fields)}
    try:
        with transaction.atomic():
            shifts = shifts_of(benchmark)
            last = max((s.seq for sh in shifts.values() for s in sh), default=None)
            if last is None:  # none since the last fold or build: the rows' own (a fold writes its rows at its last)
                last = EntryRank.objects.filter(benchmark=benchmark).aggregate(m=Max("seq"))["m"] or 0
            seq = 1 + last  # always above every row's: a row ignores the shifts up to its own seq
            for metric, name in RANKED.items():
                at = fields.index(name) + 1
                new = {sid: (v[at], v[0]) for sid, v in sorted(values.items()) if v[at] is not None}
                ordering = _Ordering(benchmark, metric, vectors, seq, shifts.get(metric, []))
                ordering.update(changed, new)
                ordering.check()
    except _Unsure:
        return False
    if any(len(sh) >= FOLD_IN_REFRESH_AFTER for sh in shifts_of(benchmark).values()):
        ranks_compact(benchmark)
    return True


# Shifts of one ordering past which the sweeper folds them into its rows (``ranks_fold_due``): each read moves a row
# by them, and a page reads the rows within that many places of it; folding them rewrites the ordering's rows once.
COMPACT_AFTER = 64
# Past this many, the refresh folds them itself: the sweeper is not running (a page then reads up to 2 x 256 rows
# more than its 50).
FOLD_IN_REFRESH_AFTER = 4 * COMPACT_AFTER


def ranks_fold_due() -> dict[int, int]:
    """The sweeper's fold: each benchmark with an ordering of at least ``COMPACT_AFTER`` recorded shifts has them
    folded into its rows, under its board build's lock (the refresh's: a change is not recorded meanwhile). Returns
    {benchmark id: rows written}."""
    from django.db.models import Count

    from evaluation.models import DerivedState

    due = sorted({b for b, in RankShift.objects.values("benchmark_id", "metric").annotate(n=Count("pk")).filter(
        n__gte=COMPACT_AFTER).values_list("benchmark_id")})
    written = {}
    for benchmark in Benchmark.objects.filter(pk__in=due):
        with transaction.atomic():
            list(DerivedState.objects.select_for_update().filter(benchmark_id=benchmark.pk, kind="board").values_list(
                "pk", flat=True))  # held until the fold commits: a refresh of this board waits (derived_refresh)
            if any(len(sh) >= COMPACT_AFTER for sh in shifts_of(benchmark).values()):  # not folded meanwhile
                written[benchmark.pk] = ranks_compact(benchmark)
    return written


def ranks_compact(benchmark: Benchmark) -> int:
    """Fold the recorded shifts into the stored rows: every row's position counted again from the order of the
    stored places (the order index), its rank-interval ends from the stored bounds (what the shifts move them to;
    the rule of ``intervals_from_bounds``, by sorting), written where they differ at the last shift's ``seq``, then
    the shifts up to it deleted. A reader that read the shifts before the fold and the rows after it applies none of
    them to a row written here (a row ignores the shifts up to its own ``seq``), and those it applies to a row left
    as it was move it by nothing: no read straddling a fold sees a rank twice moved. Returns the rows written. One
    pass over the board, no bootstrap, in SQL as written and NumPy (400,000 rows)."""
    import numpy as np

    table = EntryRank._meta.db_table
    written = 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT MAX(seq) FROM {RankShift._meta.db_table} WHERE benchmark_id = %s", [benchmark.pk])
        last = cursor.fetchone()[0]
        if last is None:
            return 0  # nothing recorded since the last fold or build
        for metric in RANKED:
            cursor.execute(f"SELECT id, position, rank_low, rank_high, stat_low, stat_high, seq, value FROM {table} "
                           "WHERE benchmark_id = %s AND metric = %s ORDER BY value DESC, finished_at ASC, "
                           "submission_id ASC", [benchmark.pk, metric])
            got = cursor.fetchall()
            if not got:  # no entry left with a value: nothing for its shifts to move
                RankShift.objects.filter(benchmark=benchmark, metric=metric, seq__lte=last).delete()
                continue
            rows = np.array(got, dtype=np.float64)  # NULL -> nan
            if np.isnan(rows[:, [2, 3, 4, 5, 7]]).any():
                continue  # a row without its place or interval (an older build's): its shifts kept for the full build
            n = len(rows)
            lows, highs = rows[:, 4], rows[:, 5]
            rank_low = 1 + n - np.searchsorted(np.sort(lows), highs, side="right")  # lower bounds above its upper
            rank_high = n - np.searchsorted(np.sort(highs), lows, side="left")  # upper bounds not below its lower
            position = np.arange(1, n + 1)
            changed = (rows[:, 1] != position) | (rows[:, 2] != rank_low) | (rows[:, 3] != rank_high)
            changes = [(int(p), int(lo), int(hi), int(pk)) for p, lo, hi, pk in zip(
                position[changed], rank_low[changed], rank_high[changed], rows[changed, 0])]
            if changes and connection.vendor == "postgresql":  # one statement over the arrays, not a row each
                cursor.execute(f"UPDATE {table} AS r SET position = c.position, rank_low = c.rank_low, "
                               "rank_high = c.rank_high, seq = %s FROM unnest(%s::integer[], %s::integer[], "
                               "%s::integer[], %s::bigint[]) AS c(position, rank_low, rank_high, id) WHERE r.id = c.id",
                               [last, *[list(column) for column in zip(*changes)]])
            elif changes:
                cursor.executemany(f"UPDATE {table} SET position = %s, rank_low = %s, rank_high = %s, seq = %s "
                                   "WHERE id = %s", [(p, lo, hi, last, pk) for p, lo, hi, pk in changes])
            written += len(changes)
            RankShift.objects.filter(benchmark=benchmark, metric=metric, seq__lte=last).delete()
    return written
