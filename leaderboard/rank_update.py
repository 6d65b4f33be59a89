"""The board's ranks after a change, by what changed (issue 37): the stored ``EntryRank`` rows brought to what a full
build (``services.ranks_build``) would write, at a cost that does not read the board.

Per ranked ordering, the changed entries (rebuilt, added or dropped) are taken out of the stored order, then put
back at their new places, one operation at a time, each leaving the rows a full build of the entries then present
would write:

- **out**: a run of changed entries at consecutive positions goes at once (its neighbours above and below are
  unchanged): the rows after it move up by the run's length, the entry below gets the entry above as its new
  neighbour (one paired test), and the others' rank-interval ends that counted a removed entry lose one;
- **in**: an entry's place is after the last entry ahead of it in the order (value descending, finished, id):
  found by ``LIMIT 1`` queries over the board's order index; its own bootstrap interval is computed (it depends on
  its vector alone), its rank interval counted over the stored bounds' indexes (``COUNT``), the rows after it move
  down by one, its two neighbour pairs are tested, and the others' ends its interval crosses gain one.

Positions and rank-interval ends move by range ``UPDATE``s (positions after the place; ``rank_low`` of the entries
whose ``stat_high`` is below the entry's ``stat_low``, ``rank_high`` of those whose ``stat_low`` is not above its
``stat_high``). A tie group changes only where a neighbour test changed: the entries from that point to the next
group's start (the least stored ``shared_rank`` beyond it, from the tie-group index) take the new group's rank, and
the later groups' ranks move with their positions. Each operation costs a few indexed queries, the range
updates, one or two paired tests and the entry's own bootstrap, whatever the board's size; the writes of the range
updates are the rows that move.

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

    def regroup(self, first: int, shared: int, shift: int) -> None:
        """The entry at (stored) ``first`` starts or joins a group of rank ``shared``: it and the entries after it
        up to the next group's start take that rank, and every later group's rank moves by ``shift`` (its
        entries' positions move by as much). Before the positions themselves move."""
        start = self.next_group(first)
        run = self.rows.filter(position__gte=first, position__lt=start) if start else self.rows.filter(
            position__gte=first)
        run.exclude(shared_rank=shared).update(shared_rank=shared)
        if start and shift:
            self.rows.filter(position__gte=start).update(shared_rank=F("shared_rank") + shift)

    def count_in(self, bounds: Bounds, sign: int) -> None:
        """Another entry with these bounds is counted in (``sign`` 1) or out (-1) of the others' rank intervals:
        ``rank_low`` counts the lower bounds strictly above one's upper bound, ``rank_high`` the upper bounds
        not below one's lower bound."""
        self.rows.filter(stat_high__lt=bounds.low).update(rank_low=F("rank_low") + sign)
        self.rows.filter(stat_low__lte=bounds.high).update(rank_high=F("rank_high") + sign)

    def take_out(self, changed: set[int]) -> None:
        got = sorted(self.rows.filter(submission_id__in=changed).values_list("position", "stat_low", "stat_high"))
        runs: list[list[tuple[int, float, float]]] = []
        for item in got:
            if runs and runs[-1][-1][0] == item[0] - 1:
                runs[-1].append(item)
            else:
                runs.append([item])
        for run in reversed(runs):  # from the bottom: the runs above keep their positions
            self._take_out_run(run[0][0], run[-1][0], [Bounds(lo, hi) for _, lo, hi in run])

    def _take_out_run(self, first: int, last: int, bounds: list[Bounds]) -> None:
        k = last - first + 1
        above = self.at(first - 1) if first > 1 else None
        below = self.at(last + 1)
        self.rows.filter(position__gte=first, position__lte=last).delete()
        for b in bounds:
            self.count_in(b, -1)
        if below is None:
            return
        p, sig = self.test(above[0], below[0]) if above else (None, None)
        self.regroup(last + 1, first if above is None or sig else above[1], -k)
        self.rows.filter(submission_id=below[0]).update(above=above[0] if above else None, p_above=p,
                                                        significant_above=sig)
        self.rows.filter(position__gt=last).update(position=F("position") - k)

    def predecessor(self, sid: int, value: float, finished: datetime | None, pending: set[int]) -> int | None:
        """The last stored entry ahead of this one in the board's order (value descending, finished, id; NULL
        dates where the database sorts them): ``LIMIT 1`` over the order's index, read backwards."""
        entries = BoardEntry.objects.filter(benchmark=self.benchmark, **{f"{self.field}__isnull": False}).exclude(
            submission_id__in=pending)
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

    def put_in(self, sid: int, value: float, finished: datetime | None, own: Bounds, pending: set[int]) -> None:
        pred = self.predecessor(sid, value, finished, pending)
        above = None
        if pred is not None:
            got = list(self.rows.filter(submission_id=pred).values_list("position", "shared_rank")[:1])
            if not got:
                raise _Unsure  # an entry of the board without its stored row
            above = (pred, *got[0])
        place = above[1] + 1 if above else 1
        below = self.at(place)
        p, sig = self.test(above[0], sid) if above else (None, None)
        shared = place if above is None or sig else above[2]
        low = 1 + self.rows.filter(stat_low__gt=own.high).count()
        high = 1 + self.rows.filter(stat_high__gte=own.low).count()
        if below is not None:
            p_below, sig_below = self.test(sid, below[0])
            self.regroup(place, place + 1 if sig_below else shared, 1)
            self.rows.filter(submission_id=below[0]).update(above=sid, p_above=p_below, significant_above=sig_below)
            self.rows.filter(position__gte=place).update(position=F("position") + 1)
        self.count_in(own, 1)
        EntryRank.objects.create(
            submission_id=sid, benchmark_id=self.benchmark.pk, metric=self.metric, position=place, shared_rank=shared,
            rank_low=low, rank_high=high, stat_low=own.low, stat_high=own.high, above=above[0] if above else None,
            p_above=p, significant_above=sig)

    def update(self, changed: set[int], new: dict[int, tuple[float, datetime | None]]) -> None:
        """Take the changed entries out, put those with a value (``new``: value, finished) in."""
        if self.rows.filter(stat_low__isnull=True).exists():
            raise _Unsure  # an entry without its own interval: the full build decides the board's length
        self.take_out(changed)
        if not new:
            return
        first = self.at(1)
        if first is None:
            raise _Unsure  # no entry kept: the full build decides the board's length
        length = len(self.row(first[0]))
        if not length or any(len(self.row(sid)) != length for sid in new):
            raise _Unsure
        own = dict(zip(new, (entry_bounds_mcc if self.metric == "mcc" else entry_bounds)(
            [self.row(sid) for sid in new])))
        pending = set(new)
        for sid, (value, finished) in new.items():
            self.put_in(sid, value, finished, own[sid], pending)
            pending.discard(sid)

    def check(self) -> None:
        """The stored rows add up: one per entry with a value, at positions 1..N (two counts over indexes)."""
        got = self.rows.aggregate(n=Count("pk"), top=Max("position"))
        entries = BoardEntry.objects.filter(benchmark=self.benchmark, **{f"{self.field}__isnull": False}).count()
        if not got["n"] == (got["top"] or 0) == entries:
            raise _Unsure


def ranks_update(benchmark: Benchmark, changed: set[int]) -> bool:
    """Bring the stored ranks of ``benchmark`` up to its entries, given the submissions whose entry was rebuilt,
    added or dropped since the last build (``changed``; every other entry as the last build ranked it). False,
    having written nothing: it cannot be done exactly from the stored rows, and the caller builds the whole board."""
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
