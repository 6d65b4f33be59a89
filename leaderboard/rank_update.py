"""The board's ranks after a change, by what changed (issue 37): the stored ``EntryRank`` rows brought to what a full
build (``services.ranks_build``) would write, doing only the changed entries' work.

For each ranked ordering: the changed entries' own bootstrap intervals (``evaluation.metrics.entry_bounds``: each
depends on the entry alone), the paired tests of the neighbour pairs that are new, and, for every entry, its
position, tie group and rank interval computed from the stored rows (a sort of the stored bounds: no resample).
The writes are the differences: the changed entries' rows deleted and inserted, and for the others range updates
(positions shifted over a run of the order, shared ranks over a run, ``rank_low`` over a range of upper bounds and
``rank_high`` over a range of lower bounds, each by a constant) and a row update where the entry above changed.

Exact where it runs; where it cannot be sure (no earlier build, an entry whose vector is not the board's length,
stored rows that do not follow the order) it says so and the refresh builds the whole board
(``leaderboard/tests/test_board_refresh_sequence.py`` compares the two, field by field).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from django.db.models import F

from annotation.models import Benchmark
from evaluation.metrics import entry_bounds, entry_bounds_mcc, intervals_from_bounds, neighbour_mcnemar, shared_ranks
from evaluation.metrics.ranks import Bounds
from leaderboard.board import Vectors, mcc_cells, mcc_pair_test
from leaderboard.models import BoardEntry, EntryRank

# The orderings whose neighbours are tested and ranked: the BoardEntry field each sorts by (descending).
RANKED = {"text": "text_acc", "adaptive": "adaptive_acc", "oracle": "oracle_acc", "mcc": "mcc"}

_STORED = ("submission_id", "position", "shared_rank", "rank_low", "rank_high", "stat_low", "stat_high", "above",
           "p_above", "significant_above")


def ordered_ids(benchmark: Benchmark, field_name: str) -> list[int]:
    """Public entries with a value, in the overview's unfiltered descending order (ties: finished, id).

    Read from the database with the overview's own ORDER BY, so both agree on where NULL dates go."""
    return list(BoardEntry.objects.on_board().filter(benchmark=benchmark).filter(**{f"{field_name}__isnull": False})
                .order_by(F(field_name).desc(), "finished_at", "submission_id").values_list("submission_id", flat=True))


@dataclass(frozen=True, slots=True)
class _Old:
    """A stored row of an entry with its own interval (``_plan`` updates boards whose entries all have one)."""

    position: int
    shared_rank: int
    rank_low: int
    rank_high: int
    stat_low: float
    stat_high: float
    above: int | None
    p_above: float | None
    significant_above: bool | None


@dataclass(slots=True)
class _Plan:
    metric: str
    delete: list[int]
    positions: list[tuple[int, int, int]] = field(default_factory=list)  # (first, last old position, shift)
    shared: list[tuple[int, int, int]] = field(default_factory=list)  # (first, last new position, shift)
    lows: list[tuple[float, float, int]] = field(default_factory=list)  # (stat_high from, to, shift of rank_low)
    highs: list[tuple[float, float, int]] = field(default_factory=list)  # (stat_low from, to, shift of rank_high)
    neighbours: list[tuple[int, int | None, float | None, bool | None]] = field(default_factory=list)
    insert: list[EntryRank] = field(default_factory=list)


def _runs(items: Iterable[tuple[Any, int]]) -> list[tuple[Any, Any, int]]:
    """Maximal runs of consecutive items with the same nonzero shift: (first key, last key, shift)."""
    out = []
    for shift, run in groupby(items, key=lambda kv: kv[1]):
        keys = [k for k, _ in run]
        if shift:
            out.append((keys[0], keys[-1], shift))
    return out


def _range_runs(items: list[tuple[float, int]]) -> list[tuple[float, float, int]] | None:
    """Runs over items sorted by a stored bound; None when one bound value falls in two runs (a range update
    by value could not tell them apart; it cannot happen, as the shift is a function of the bound)."""
    items.sort(key=lambda kv: kv[0])
    runs = []
    for shift, run in groupby(items, key=lambda kv: kv[1]):
        keys = [k for k, _ in run]
        runs.append((keys[0], keys[-1], shift))
    for (_, last, _), (first, _, _) in zip(runs, runs[1:]):
        if last == first:
            return None
    return [r for r in runs if r[2]]


def _plan(benchmark: Benchmark, metric: str, changed: set[int], vectors: Callable[[set[int]], dict[int, Vectors]]
          ) -> _Plan | None:
    rows = list(EntryRank.objects.filter(benchmark=benchmark, metric=metric).order_by("position").values_list(*_STORED))
    if [r[1] for r in rows] != list(range(1, len(rows) + 1)) or any(None in r[3:7] for r in rows):
        return None  # not the order a build writes, or an entry without its own interval (the length may move)
    old = {r[0]: _Old(*r[1:]) for r in rows}
    ids = ordered_ids(benchmark, RANKED[metric])
    if not rows and not ids:
        return _Plan(metric, delete=[])  # an ordering no entry has a figure for (no MCC on the board): nothing to do
    kept = [sid for sid in ids if sid not in changed]
    if not kept or kept != [r[0] for r in rows if r[0] not in changed]:
        return None  # nothing kept, or the unchanged entries moved (a row written outside the refresh)
    new = [sid for sid in ids if sid in changed]
    fresh = [i for i in range(1, len(ids)) if ids[i] in changed or ids[i - 1] in changed
             or old[ids[i]].above != ids[i - 1]]
    got = vectors(set(new) | {ids[i] for i in fresh} | {ids[i - 1] for i in fresh} | {kept[0]})

    def row(sid: int) -> Any:
        return array("b", mcc_cells(got[sid])) if metric == "mcc" else got[sid].correct.get(metric, "")

    length = len(row(kept[0]))
    new_rows = [row(sid) for sid in new]
    if not length or any(len(r) != length for r in new_rows):
        return None  # the full build decides the board's length and who is ranked
    own = dict(zip(new, (entry_bounds_mcc if metric == "mcc" else entry_bounds)(new_rows))) if new else {}
    tests: dict[int, tuple[float | None, bool | None]] = {}
    for i in fresh:
        a, b = row(ids[i - 1]), row(ids[i])
        test = mcc_pair_test(a, b) if metric == "mcc" else neighbour_mcnemar([a, b])[1]  # as ranks_build tests
        tests[i] = (test.p_value, test.significant) if test is not None else (None, None)
    sig: list[bool | None] = [None]
    for i in range(1, len(ids)):
        sig.append(tests[i][1] if i in tests else old[ids[i]].significant_above)
    shared = shared_ranks(sig)
    bounds = [own[sid] if sid in own else Bounds(old[sid].stat_low, old[sid].stat_high) for sid in ids]
    intervals = [iv for iv in intervals_from_bounds(bounds) if iv is not None]  # every entry has its bounds
    at = {sid: i for i, sid in enumerate(ids)}

    plan = _Plan(metric, delete=sorted(changed & (old.keys() | set(new))))
    plan.positions = _runs((old[sid].position, at[sid] + 1 - old[sid].position) for sid in kept)
    plan.shared = _runs((at[sid] + 1, shared[at[sid]] - old[sid].shared_rank) for sid in kept)
    lows = _range_runs([(old[sid].stat_high, intervals[at[sid]].low - old[sid].rank_low) for sid in kept])
    highs = _range_runs([(old[sid].stat_low, intervals[at[sid]].high - old[sid].rank_high) for sid in kept])
    if lows is None or highs is None:
        return None
    plan.lows, plan.highs = lows, highs
    for sid in kept:
        i = at[sid]
        if i in tests or old[sid].above != (ids[i - 1] if i else None):
            p, s = tests.get(i, (None, None))
            plan.neighbours.append((sid, ids[i - 1] if i else None, p, s))
    for sid in new:
        i = at[sid]
        iv, b = intervals[i], own[sid]
        p, s = tests.get(i, (None, None))
        plan.insert.append(EntryRank(
            submission_id=sid, benchmark_id=benchmark.pk, metric=metric, position=i + 1, shared_rank=shared[i],
            rank_low=iv.low, rank_high=iv.high, stat_low=b.low, stat_high=b.high,
            above=ids[i - 1] if i else None, p_above=p, significant_above=s))
    return plan


def _write(benchmark: Benchmark, plan: _Plan) -> None:
    rows = EntryRank.objects.filter(benchmark=benchmark, metric=plan.metric)
    if plan.delete:
        rows.filter(submission_id__in=plan.delete).delete()
    # A shift up never lands on a run below that is still to move if those move first, nor a shift down on a run
    # above (the order of the kept entries is the same before and after): the downward runs bottom-up, then the
    # upward ones top-down.
    for first, last, shift in sorted((r for r in plan.positions if r[2] > 0), key=lambda r: -r[0]):
        rows.filter(position__gte=first, position__lte=last).update(position=F("position") + shift)
    for first, last, shift in sorted((r for r in plan.positions if r[2] < 0), key=lambda r: r[0]):
        rows.filter(position__gte=first, position__lte=last).update(position=F("position") + shift)
    for first, last, shift in plan.shared:
        rows.filter(position__gte=first, position__lte=last).update(shared_rank=F("shared_rank") + shift)
    for lo, hi, shift in plan.lows:
        rows.filter(stat_high__gte=lo, stat_high__lte=hi).update(rank_low=F("rank_low") + shift)
    for lo, hi, shift in plan.highs:
        rows.filter(stat_low__gte=lo, stat_low__lte=hi).update(rank_high=F("rank_high") + shift)
    for sid, above, p, s in plan.neighbours:
        rows.filter(submission_id=sid).update(above=above, p_above=p, significant_above=s)
    EntryRank.objects.bulk_create(plan.insert, batch_size=2000)


def ranks_update(benchmark: Benchmark, changed: set[int]) -> bool:
    """Bring the stored ranks of ``benchmark`` up to its entries, given the submissions whose entry was rebuilt,
    added or dropped since the last build (``changed``). False, having written nothing: it cannot be done
    exactly from the stored rows, and the caller builds the whole board."""
    cache: dict[int, Vectors] = {}

    def vectors(ids: set[int]) -> dict[int, Vectors]:
        missing = ids - cache.keys()
        if missing:
            for sid, correct, invoked in BoardEntry.objects.filter(submission_id__in=missing).values_list(
                    "submission_id", "correct", "invoked"):
                cache[sid] = Vectors(correct=correct, invoked=invoked)
        return cache

    plans = []
    for metric in RANKED:
        plan = _plan(benchmark, metric, changed, vectors)
        if plan is None:
            return False
        plans.append(plan)
    for plan in plans:
        _write(benchmark, plan)
    return True
