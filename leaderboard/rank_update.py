"""The board's ranks after a change, by what changed (issue 37): the stored ``EntryRank`` rows brought to what a full
build (``services.ranks_build``) would write, at a cost that does not read the board.

Per ranked ordering, the changed entries (rebuilt, added or dropped) are taken out of the stored order and those
with a value put back at their new places, at once:

- each new entry's place is after the last unchanged entry ahead of it in the order (value descending, finished,
  id): found by ``LIMIT 1`` queries over the board's order index (migration 0015); its own bootstrap interval is
  computed (it depends on its vector alone) and its rank interval counted over the stored bounds' indexes
  (``COUNT``); the neighbour pairs that are new are tested (one or two paired tests per place);
- the places where something changed (an unchanged entry after which entries were put in or a run taken out: an
  anchor) cut the stored order into segments whose entries all move by the same number of places and keep their
  neighbour tests: one range ``UPDATE`` of the positions per segment; the first entry after each anchor gets its
  new neighbour; a tie group changes only from a changed test to the next group's start (the least stored
  ``shared_rank`` beyond it, from the tie-group index): that run takes the new group's rank, the later groups'
  ranks move with their positions;
- the others' rank-interval ends move by step functions of the changed entries' bounds (``rank_low`` of the
  entries whose ``stat_high`` is below a removed or new entry's ``stat_low``, ``rank_high`` of those whose
  ``stat_low`` is not above its ``stat_high``): one range ``UPDATE`` per step.

So each stored row is written at most once per column, and only if it moves; the reads are a few indexed queries
per changed entry, whatever the board's size.

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
from django.db.models import Count, F, Max, Q

from annotation.models import Benchmark
from evaluation.metrics import entry_bounds, entry_bounds_mcc, neighbour_mcnemar
from evaluation.metrics.ranks import Bounds
from leaderboard.board import Vectors, mcc_cells, mcc_pair_test
from leaderboard.models import BoardEntry, EntryRank

# The orderings whose neighbours are tested and ranked: the BoardEntry field each sorts by (descending).
RANKED = {"text": "text_acc", "adaptive": "adaptive_acc", "oracle": "oracle_acc", "mcc": "mcc"}


def ordered_ids(benchmark: Benchmark, field_name: str) -> list[int]:
    """Public entries with a value, in the overview's unfiltered descending order (ties: finished, id).

    Read from the database with the overview's own ORDER BY, so both agree on where NULL dates go."""
    return list(BoardEntry.objects.on_board().filter(benchmark=benchmark).filter(**{f"{field_name}__isnull": False})
                .order_by(F(field_name).desc(), "finished_at", "submission_id").values_list("submission_id", flat=True))


class _Unsure(Exception):
    """The stored rows cannot be brought up exactly: the savepoint is rolled back and the board built whole."""


Test = tuple[float | None, bool | None]  # a neighbour test's (p, significant); (None, None): none


class _Ordering:
    """One ranked ordering's stored rows, updated in place by taking entries out and putting them in."""

    def __init__(self, benchmark: Benchmark, metric: str, vectors: Callable[[set[int]], dict[int, Vectors]]) -> None:
        self.benchmark, self.metric, self.field = benchmark, metric, RANKED[metric]
        self.rows = EntryRank.objects.filter(benchmark=benchmark, metric=metric)
        self.vectors = vectors
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

    def at(self, position: int) -> tuple[int, int] | None:
        """(submission id, shared rank) of the row at ``position``, if any."""
        got = list(self.rows.filter(position=position).order_by().values_list("submission_id", "shared_rank")[:1])
        return got[0] if got else None

    def next_group(self, position: int) -> int | None:
        """The first tie group starting after ``position``: the least stored shared rank beyond it (each group's
        first entry stores its own position), read from the tie-group index."""
        got = list(self.rows.filter(shared_rank__gt=position).order_by("shared_rank")
                   .values_list("shared_rank", flat=True)[:1])
        return got[0] if got else None

    def predecessor(self, sid: int, value: float, finished: datetime | None, changed: set[int]) -> int | None:
        """The last unchanged entry ahead of this one in the board's order (value descending, finished, id; NULL
        dates where the database sorts them): ``LIMIT 1`` over the order's index, read backwards."""
        entries = BoardEntry.objects.filter(benchmark=self.benchmark, **{f"{self.field}__isnull": False}).exclude(
            submission_id__in=changed)
        nulls_last = connection.features.nulls_order_largest
        if finished is None:
            same = Q(finished_at__isnull=True, submission_id__lt=sid)
            if nulls_last:
                same |= Q(finished_at__isnull=False)
        else:
            same = Q(finished_at__lt=finished) | Q(finished_at=finished, submission_id__lt=sid)
            if not nulls_last:
                same |= Q(finished_at__isnull=True)
        backwards = (F(self.field).asc(), F("finished_at").desc(), F("submission_id").desc())
        for ahead in (Q(**{self.field: value}) & same, Q(**{f"{self.field}__gt": value})):
            got = list(entries.filter(ahead).order_by(*backwards).values_list("submission_id", flat=True)[:1])
            if got:
                return got[0]
        return None

    def update(self, changed: set[int], new: dict[int, tuple[float, datetime | None]]) -> None:
        """Take the changed entries out and put those with a value (``new``: value, finished) in, at once.

        In the stored (old) positions: the removed rows, and the kept rows (anchors) after which something changed
        (new entries put in after them, or a run of removed rows). The kept rows between two anchors (a segment)
        move by the same number of places and keep their neighbour tests; the first kept row after each anchor gets
        a new neighbour. All reads are done before the first write."""
        if self.rows.filter(stat_low__isnull=True).exists():
            raise _Unsure  # an entry without its own interval: the full build decides the board's length
        taken = {sid: (pos, Bounds(lo, hi)) for sid, pos, lo, hi in self.rows.filter(submission_id__in=changed)
                 .values_list("submission_id", "position", "stat_low", "stat_high")}
        removed = {pos for pos, _ in taken.values()}
        size = self.rows.aggregate(top=Max("position"))["top"] or 0
        if new:
            kept = list(self.rows.exclude(submission_id__in=changed).order_by("position")
                        .values_list("submission_id", flat=True)[:1])
            if not kept:
                raise _Unsure  # no entry kept: the full build decides the board's length
            length = len(self.row(kept[0]))
            if not length or any(len(self.row(sid)) != length for sid in new):
                raise _Unsure
        own = dict(zip(new, (entry_bounds_mcc if self.metric == "mcc" else entry_bounds)(
            [self.row(sid) for sid in new]))) if new else {}
        # each new entry after its unchanged predecessor (0: first), those after the same one in the board's order
        after: dict[int, list[int]] = {}
        for sid, (value, finished) in new.items():
            pred = self.predecessor(sid, value, finished, changed)
            at = 0
            if pred is not None:
                got = list(self.rows.filter(submission_id=pred).values_list("position", flat=True)[:1])
                if not got:
                    raise _Unsure  # an entry of the board without its stored row
                at = got[0]
            after.setdefault(at, []).append(sid)
        nulls_last = connection.features.nulls_order_largest
        for group in after.values():
            group.sort(key=lambda sid: (-new[sid][0], _date_key(new[sid][1], nulls_last), sid))
        anchors = sorted(set(after) | {pos - 1 for pos in removed if pos - 1 not in removed})
        if not anchors:
            return  # nothing of this ordering changed
        stored = {a: self.at(a) for a in anchors if a}  # (submission id, shared rank) of each anchor row
        if None in stored.values():
            raise _Unsure  # stored positions with a hole
        clusters = []
        shift = 0
        for j, a in enumerate(anchors):
            b = a + 1
            while b in removed:
                b += 1
            shift += len(after.get(a, ())) - (b - a - 1)
            below = self.at(b) if b <= size else None
            end = anchors[j + 1] if j + 1 < len(anchors) else size  # the segment: stored positions b..end
            group = self.next_group(b) if below is not None else None
            clusters.append((a, b, below, end, group, shift))

        # Neighbour tests, positions and tie groups in the new order, anchor by anchor.
        inserts: list[EntryRank] = []
        neighbours: list[tuple[int, int | None, Test, int]] = []  # (kept row below, its new above, test, shared)
        # (first, last stored position, shared rank to set or None: moved with the position) by segment
        groups: list[tuple[int, int, int | None, int]] = []
        shared = stored[anchors[0]][1] if anchors[0] else 0  # the tie group carried to the next row
        last_shift = 0
        for a, b, below, end, group, shift in clusters:
            above = stored[a][0] if a else None
            place = a + last_shift  # the anchor row's new position
            for sid in after.get(a, ()):
                place += 1
                test = self.test(above, sid) if above is not None else (None, None)
                shared = place if place == 1 or test[1] else shared
                b_own = own[sid]
                inserts.append(EntryRank(
                    submission_id=sid, benchmark_id=self.benchmark.pk, metric=self.metric, position=place,
                    shared_rank=shared, stat_low=b_own.low, stat_high=b_own.high, above=above, p_above=test[0],
                    significant_above=test[1]))
                above = sid
            if below is not None:
                place += 1
                test = self.test(above, below[0]) if above is not None else (None, None)
                shared = place if place == 1 or test[1] else shared
                neighbours.append((below[0], above, test, shared))
                if group is not None and group <= end:
                    groups.append((b, group - 1, shared, shift))
                    groups.append((group, end, None, shift))
                    shared = stored[end][1] + shift if end in stored else shared  # the next anchor's
                else:
                    groups.append((b, end, shared, shift))
            last_shift = shift

        # Rank-interval ends: each kept row's count of the entries whose bounds cross its own, less the removed, plus
        # the new (step functions of its bounds: one range update per step, each row written at most once).
        out_bounds = [bd for _, bd in taken.values()]
        in_bounds = list(own.values())
        # counted over the stored bounds' indexes, the rows taken out subtracted
        kept_low = {sid: self.rows.filter(stat_low__gt=bd.high).count() - sum(o.low > bd.high for o in out_bounds)
                    for sid, bd in own.items()}
        kept_high = {sid: self.rows.filter(stat_high__gte=bd.low).count() - sum(o.high >= bd.low for o in out_bounds)
                     for sid, bd in own.items()}
        for row in inserts:
            sid = row.submission_id
            row.rank_low = 1 + kept_low[sid] + sum(o.low > own[sid].high for o in in_bounds)
            row.rank_high = kept_high[sid] + sum(o.high >= own[sid].low for o in in_bounds)

        # The writes.
        self.rows.filter(submission_id__in=list(taken)).delete()
        self._steps("stat_high", "rank_low", [(bd.low, -1) for bd in out_bounds] + [(bd.low, 1) for bd in in_bounds],
                    below=True)
        self._steps("stat_low", "rank_high", [(bd.high, -1) for bd in out_bounds] + [(bd.high, 1) for bd in in_bounds],
                    below=False)
        for sid, above, (p, sig), _ in neighbours:
            self.rows.filter(submission_id=sid).update(above=above, p_above=p, significant_above=sig)
        # Positions and tie groups by segment, one UPDATE each (a row written once): the runs moving down from the
        # bottom, then the others from the top, so that no run lands on stored positions still to be moved.
        for first, last, value, by in sorted((g for g in groups if g[3] > 0), key=lambda g: -g[0]) + sorted(
                (g for g in groups if g[3] <= 0), key=lambda g: g[0]):
            if first > last:
                continue
            run = self.rows.filter(position__gte=first, position__lte=last)
            if value is not None:
                if by:
                    run.update(position=F("position") + by, shared_rank=value)
                else:
                    run.exclude(shared_rank=value).update(shared_rank=value)
            elif by:
                run.update(position=F("position") + by, shared_rank=F("shared_rank") + by)
        EntryRank.objects.bulk_create(inserts, batch_size=2000)

    def _steps(self, column: str, target: str, thresholds: list[tuple[float, int]], *, below: bool) -> None:
        """Add to ``target`` of each row the sum of the deltas whose threshold its ``column`` is strictly below
        (``below``: rank_low counts the lower bounds above one's upper bound), or not above (rank_high counts
        the upper bounds not below one's lower bound): a range update per step of that sum."""
        by_value: dict[float, int] = {}
        for t, d in thresholds:
            by_value[t] = by_value.get(t, 0) + d
        cuts = sorted(by_value)
        total = sum(by_value.values())
        lo: float | None = None
        for t in [*cuts, None]:
            if total:
                rows = self.rows
                if lo is not None:
                    rows = rows.filter(**{f"{column}__gte" if below else f"{column}__gt": lo})
                if t is not None:
                    rows = rows.filter(**{f"{column}__lt" if below else f"{column}__lte": t})
                rows.update(**{target: F(target) + total})
            if t is not None:
                total -= by_value[t]
                lo = t

    def check(self) -> None:
        """The stored rows add up: one per entry with a value, at positions 1..N (two counts over indexes)."""
        got = self.rows.aggregate(n=Count("pk"), top=Max("position"))
        entries = BoardEntry.objects.filter(benchmark=self.benchmark, **{f"{self.field}__isnull": False}).count()
        if not got["n"] == (got["top"] or 0) == entries:
            raise _Unsure


def _date_key(finished: datetime | None, nulls_last: bool) -> tuple[int, Any]:
    """A finish time's place in the database's ascending order (NULL first on SQLite, last on PostgreSQL)."""
    if finished is None:
        return (1 if nulls_last else -1, 0)
    return (0, finished)


# Changed entries at once above which, when they are also more than a quarter of the board, the ranks are built whole
# (as the wide tabs' index is: wide_tabs.tables_update).
WHOLE_ABOVE = 500


def ranks_update(benchmark: Benchmark, changed: set[int]) -> bool:
    """Bring the stored ranks of ``benchmark`` up to its entries, given the submissions whose entry was rebuilt,
    added or dropped since the last build (``changed``; every other entry as the last build ranked it). False,
    having written nothing: it cannot be done exactly from the stored rows, or more than a quarter of the board (and
    more than ``WHOLE_ABOVE`` entries) changed at once, and the caller builds the whole board."""
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
            for metric, name in RANKED.items():
                at = fields.index(name) + 1
                new = {sid: (v[at], v[0]) for sid, v in sorted(values.items()) if v[at] is not None}
                ordering = _Ordering(benchmark, metric, vectors)
                ordering.update(changed, new)
                ordering.check()
    except _Unsure:
        return False
    return True
