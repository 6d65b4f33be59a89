"""The Cost & Pareto tab's figures, stored by the board's refresh so that a page reads them (leaderboard.pareto).

Per submission and accuracy mode, a ``ParetoPoint`` row: the point in dollars and in tokens (from the results'
overall accuracy, mean cost and mean tokens, as ``pareto.pareto_view`` reads them) and what the routing
baselines need of its per-sample vectors (their length, share right and mean costs). Per mode and unit, a
``ParetoState`` row: the counts the page's pager and notes need, the frontier, the baselines, and the state
they are updated from (the Strongest and Cheapest members, the members' vector lengths, and per sample the
cheapest right members and the cheapest members, ``KEEP`` of each, from which the Oracle's figures are summed).

After a change (``pareto_refresh`` with the submissions rebuilt or gone), only what changed is computed:

- the rows of the changed submissions are written again (their results' few figures, their vectors);
- the frontier: a new point only moves it near itself (``pareto_frontier`` over the stored frontier and the
  new points); a frontier point that left opens a gap between its remaining neighbours, and only the stored
  points in that gap (cost between theirs, accuracy above the cheaper one's: an indexed read) can enter it;
- the Strongest and Cheapest: per mode and unit the ``KEEP`` first members in each one's order are kept (with
  whether that is every member); a member that left is taken out, a new one enters where it comes before the
  list's last (or the list is whole), the first is the pick, and the members are read again only where a list
  that is not whole runs out;
- the Oracle: per sample the ``KEEP`` cheapest right members and cheapest members are kept (``Oracle``); a new
  member enters the lists it is cheap enough for, a member that left is taken out of the lists it is in, and
  only where such a list runs out (more than ``KEEP`` of its members gone since it was whole) are the members'
  vectors read again.

The whole build (the board's first, ``board_rebuild``) computes the same from every entry; so does a refresh
that finds no stored state. ``leaderboard/tests/test_pareto_store.py`` compares the stored figures after
random changes with the ones computed from scratch (``pareto.pareto_view`` over every public row).
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Collection, Iterable, Iterator
from functools import reduce
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from django.db import transaction
from django.db.models import Q
from django.db.models.fields.json import KT

from annotation.models import Benchmark
from evaluation.metrics import NEEDS_JUDGE, Point, pareto_frontier
from evaluation.metrics.types import BOARD_MODES as MODES
from evaluation.models import Submission
from leaderboard.board import UNDECIDED_BIT
from leaderboard.models import BoardEntry, ParetoPoint, ParetoState

UNITS = ("usd", "tokens")
VECTORS = {"usd": "costs", "tokens": "token_counts"}  # a BoardEntry's per-sample costs in each unit
CHUNK = 2000  # submissions read (results parts and vectors) per round of the whole build
ONE = ord("1")


@dataclass(slots=True)
class Row:
    """A ParetoPoint's fields as the refresh handles them."""

    submission_id: int
    mode: str
    name: str
    weights: str
    finished_at: Any
    accuracy: float | None
    usd: float | None
    tokens: float | None
    reason: str = ""
    base_n: int | None = None
    base_acc: float | None = None
    base_usd: float | None = None
    base_tokens: float | None = None

    def x(self, unit: str) -> float | None:
        return self.usd if unit == "usd" else self.tokens

    def plotted(self, unit: str) -> bool:
        return self.accuracy is not None and self.x(unit) is not None

    def member(self, unit: str) -> bool:
        """A member of the routing baselines in ``unit``: plotted, with vectors and no undecided row."""
        return self.plotted(unit) and self.base_n is not None and self.base_cost(unit) is not None

    def base_cost(self, unit: str) -> float | None:
        return self.base_usd if unit == "usd" else self.base_tokens


ROW_FIELDS = ("submission_id", "mode", "name", "weights", "finished_at", "accuracy", "usd", "tokens", "reason",
              "base_n", "base_acc", "base_usd", "base_tokens")


def _float(value: Any) -> float | None:
    """A number the database extracted from the results, as its JSON text or a number; JSON's null (SQLite
    gives its text) or anything not a number is None, as ``figures.path`` reads it."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _parts(mode: str) -> dict[str, KT]:
    base = f"results__modes__{mode}__"
    return {f"{mode}_acc": KT(f"{base}accuracy__overall__value"), f"{mode}_reason": KT(f"{base}accuracy__overall__reason"),
            f"{mode}_usd": KT(f"{base}cost__mean_cost_usd__value"), f"{mode}_tokens": KT(f"{base}process__mean_tokens__value")}


def _point_rows(benchmark: Benchmark, ids: Collection[int] | None
                ) -> Iterator[tuple[list[Row], dict[tuple[int, str], Any]]]:
    """The rows of the board's entries still on it (of ``ids`` only, when given), CHUNK submissions at a time:
    the points from their results' few figures (extracted by the database), the baselines' figures from their
    vectors."""
    found = Submission.objects.on_board().filter(benchmark=benchmark, board_entry__isnull=False)
    if ids is not None:
        found = found.filter(pk__in=list(ids))
    all_ids = list(found.order_by("pk").values_list("pk", flat=True))
    parts: dict[str, KT] = {}
    for mode in MODES:
        parts.update(_parts(mode))
    for start in range(0, len(all_ids), CHUNK):
        chunk = all_ids[start:start + CHUNK]
        vectors = _vectors(chunk)
        rows: list[Row] = []
        for v in Submission.objects.filter(pk__in=chunk).order_by("pk").values(
                "pk", "model_name", "weights", "finished_at", **parts):
            for mode in MODES:
                acc, reason = _float(v[f"{mode}_acc"]), v[f"{mode}_reason"]
                reason = reason if acc is None and reason and NEEDS_JUDGE in reason else ""
                if acc is None and not reason:
                    continue  # neither a point nor a row left to a judge: the tab lists it nowhere
                row = Row(v["pk"], mode, f"{v['model_name']} (s{v['pk']})", v["weights"] or "", v["finished_at"],
                          acc, _float(v[f"{mode}_usd"]), _float(v[f"{mode}_tokens"]), reason)
                bits, costs = vectors.get((v["pk"], mode), (None, {}))
                if bits is not None and UNDECIDED_BIT not in bits:
                    row.base_n, row.base_acc = len(bits), (bits.count("1") / len(bits) if bits else 0.0)
                    # the mean as routing_baselines takes it: the floats summed in sample order
                    n = len(bits)
                    if costs.get("usd") is not None:
                        row.base_usd = sum(costs["usd"]) / n if n else 0.0
                    if costs.get("tokens") is not None:
                        row.base_tokens = sum(costs["tokens"]) / n if n else 0.0
                rows.append(row)
        yield rows, vectors


def _vectors(ids: list[int], modes: tuple[str, ...] = MODES
             ) -> dict[tuple[int, str], tuple[str | None, dict[str, list[float] | None]]]:
    """{(submission, mode): (correct bits, {unit: per-sample costs as floats})} of the entries of ``ids``: the
    modes' vectors alone, extracted by the database (as pareto._baselines reads them)."""
    out: dict[tuple[int, str], tuple[str | None, dict[str, list[float] | None]]] = {}
    columns: dict[str, KT] = {}
    for mode in modes:
        columns[f"{mode}_bits"] = KT(f"correct__{mode}")
        for unit, vector in VECTORS.items():
            columns[f"{mode}_{unit}"] = KT(f"{vector}__{mode}")
    for v in BoardEntry.objects.filter(submission_id__in=ids).order_by().values("submission_id", **columns):
        for mode in modes:
            # numbers as orjson reads them: tokens stay ints, whose sum is the sum of their floats (exact below 2**53)
            costs = {unit: (orjson.loads(v[f"{mode}_{unit}"]) if v[f"{mode}_{unit}"] is not None else None)
                     for unit in VECTORS}
            out[(v["submission_id"], mode)] = (v[f"{mode}_bits"], costs)
    return out


# ------------------------------------------------------------------------------------------- the Oracle


# Per sample, how many of the cheapest right members and of the cheapest members the Oracle keeps: when one leaves,
# the next takes its place, and the members' vectors are read again only where a sample's list runs out (more than
# KEEP of its cheapest gone at once: with 8, the bench's burst of 20 unpublishes, its 20 cheapest members on every
# sample, read 100,000 entries' vectors again). Stored as 8 bytes x (4 KEEP + 2) per sample: 157 kB per mode and
# unit at 151 samples.
KEEP = 32


class Oracle:
    """Per sample, the cheapest right member (cost and submission; none where no member is right) and the cheapest
    member: the Oracle router picks the first where there is one, else the second (metrics.routing_baselines),
    so its figures are these minima's count and sum.

    Kept per sample as the ``KEEP`` cheapest right members and the ``KEEP`` cheapest members, in (cost,
    submission) order, each list with a flag "every such member is in it": so a member that leaves only shortens
    the lists it is in, and a new member enters a list if it is cheaper than the list's last (or the list is
    whole). A list that is not whole and runs out cannot be continued: ``remove`` says so, and the caller reads
    every member again (``_oracle_rebuild``)."""

    def __init__(self, n: int, data: bytes | None = None) -> None:
        self.n = n
        if data is not None and len(data) == self.size(n):
            words = np.frombuffer(data, dtype=np.float64).copy()
            k = KEEP * n
            self.rcost, self.acost = words[:k].reshape(KEEP, n), words[2 * k:3 * k].reshape(KEEP, n)
            self.rsid, self.asid = words[k:2 * k].view(np.int64).reshape(KEEP, n), words[3 * k:4 * k].view(
                np.int64).reshape(KEEP, n)
            self.rwhole, self.awhole = words[4 * k:4 * k + n] != 0, words[4 * k + n:] != 0
        else:
            self.rcost, self.acost = np.full((KEEP, n), np.inf), np.full((KEEP, n), np.inf)
            self.rsid, self.asid = np.full((KEEP, n), -1, dtype=np.int64), np.full((KEEP, n), -1, dtype=np.int64)
            self.rwhole, self.awhole = np.ones(n, dtype=bool), np.ones(n, dtype=bool)

    @staticmethod
    def size(n: int) -> int:
        """The stored form's length in bytes."""
        return 8 * (4 * KEEP * n + 2 * n)

    def to_bytes(self) -> bytes:
        return b"".join(a.tobytes() for a in (self.rcost, self.rsid.view(np.float64), self.acost,
                                               self.asid.view(np.float64), self.rwhole.astype(np.float64),
                                               self.awhole.astype(np.float64)))

    def _lists(self) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
        return (self.rcost, self.rsid, self.rwhole), (self.acost, self.asid, self.awhole)

    @staticmethod
    def _keep(cost: np.ndarray, sid: np.ndarray, whole: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of (cost, sid) sorted per sample by (cost, submission), empty slots (sid -1) last, cut to
        KEEP; a sample with more than KEEP entries is no longer whole."""
        cost = np.where(sid < 0, np.inf, cost)
        order = np.lexsort((np.where(sid < 0, np.iinfo(np.int64).max, sid), cost), axis=0)
        cost, sid = np.take_along_axis(cost, order, axis=0), np.take_along_axis(sid, order, axis=0)
        whole &= (sid >= 0).sum(axis=0) <= KEEP
        return cost[:KEEP].copy(), sid[:KEEP].copy()

    @staticmethod
    def _fewest(cost: np.ndarray, sid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of many new entries, per sample only those that can be among its KEEP cheapest (every entry at the
        KEEP-th cheapest cost too, so that ties are decided by submission in ``_keep``): a partition, where sorting
        a whole chunk of the build would cost 30 ms per list."""
        m = cost.shape[0]
        if m <= KEEP:
            return cost, sid
        t = np.partition(cost, KEEP - 1, axis=0)[KEEP - 1]
        c = int(((cost <= t) & (sid >= 0)).sum(axis=0).max())
        if c >= m:
            return cost, sid
        idx = np.argpartition(cost, max(c, 1) - 1, axis=0)[:max(c, 1)]
        return np.take_along_axis(cost, idx, axis=0), np.take_along_axis(sid, idx, axis=0)

    def add(self, sids: list[int], bits: list[str], costs: list[list[float]]) -> None:
        """Members with their vectors (each of length n), in bulk."""
        if not sids:
            return
        cost = np.array(costs, dtype=np.float64).reshape(len(sids), self.n)
        right = np.frombuffer("".join(bits).encode("ascii"), dtype=np.uint8).reshape(len(sids), self.n) == ONE
        ids = np.broadcast_to(np.array(sids, dtype=np.int64)[:, None], cost.shape)
        for (mins, owners, whole), mask in zip(self._lists(), (right, None), strict=True):
            new_sid = np.where(mask, ids, -1) if mask is not None else ids.copy()
            # where the list is not whole, only an entry before its last can be placed (the rest are unknown)
            count = (owners >= 0).sum(axis=0)
            last = np.maximum(count - 1, 0)
            last_cost, last_sid = mins[last, np.arange(self.n)], owners[last, np.arange(self.n)]
            before = (cost < last_cost) | ((cost == last_cost) & (new_sid < last_sid))
            new_sid = np.where(whole | before, new_sid, -1)
            new_cost, new_sid = self._fewest(np.where(new_sid >= 0, cost, np.inf), new_sid)
            mins[:], owners[:] = self._keep(np.vstack([mins, new_cost]), np.vstack([owners, new_sid]), whole)

    def remove(self, sids: Collection[int]) -> bool | None:
        """Members that left taken out of the lists: True if any was in one, False if none was, None if a list that
        was not whole ran out (the minimum is then unknown: read every member again)."""
        if not sids:
            return False
        gone = np.array(sorted(sids), dtype=np.int64)
        changed = False
        for mins, owners, whole in self._lists():
            out = np.isin(owners, gone)
            if out.any():
                changed = True
                owners[out] = -1
                mins[:], owners[:] = self._keep(mins, owners, whole)
                if ((owners[0] < 0) & ~whole).any():
                    return None
        return changed

    def owners(self) -> set[int]:
        return set(np.unique(np.concatenate([self.rsid.ravel(), self.asid.ravel()])).tolist()) - {-1}

    def point(self) -> Point:
        """The Oracle's accuracy and mean cost, summed in sample order as routing_baselines sums them."""
        right = self.rsid[0] >= 0
        amin = np.where(self.asid[0] >= 0, self.acost[0], np.nan)
        spent = sum(np.where(right, self.rcost[0], amin).tolist())
        n = self.n
        return Point("Oracle", int(right.sum()) / n if n else 0.0, spent / n if n else 0.0, n)


# ------------------------------------------------------------------------------------------- one mode and unit


def _strongest_key(r: tuple) -> tuple:
    return (-r[2], r[1])  # (sid, name, share right, mean cost): the most accurate, ties to the first name


def _cheapest_key(r: tuple) -> tuple:
    return (r[3], r[1])  # the least costly, ties to the first name


# The routing baselines that are a member (State.picks[kind]), each with its order. Per mode and unit the state
# keeps the KEEP first members in each order (picks["lists"]) and whether that is every member (picks["whole"]),
# so that when the pick leaves the next takes its place without reading the members (_picks_update).
PICKS = {"strongest": _strongest_key, "cheapest": _cheapest_key}


@dataclass
class State:
    """One ParetoState as the refresh updates it."""

    mode: str
    unit: str
    counts: dict[str, Any]
    frontier: list[list[Any]]
    picks: dict[str, Any]
    oracle: Oracle | None

    @classmethod
    def empty(cls, mode: str, unit: str) -> State:
        return cls(mode, unit, {"plotted": 0, "positive": 0, "unplotted": 0, "undecided": 0, "groups": {}}, [],
                   {"members": 0, "lengths": {}, "strongest": None, "cheapest": None,
                    "lists": {kind: [] for kind in PICKS}, "whole": dict.fromkeys(PICKS, True)}, None)

    def count(self, row: Row, sign: int) -> None:
        c = self.counts
        if row.accuracy is None:
            c["undecided"] += sign
        elif row.x(self.unit) is None:
            c["unplotted"] += sign
        else:
            c["plotted"] += sign
            if (row.x(self.unit) or 0) > 0:
                c["positive"] += sign
                c["groups"][row.weights] = c["groups"].get(row.weights, 0) + sign
                if not c["groups"][row.weights]:
                    del c["groups"][row.weights]
        if row.member(self.unit):
            self.picks["members"] += sign
            key = str(row.base_n)
            lengths = self.picks["lengths"]
            lengths[key] = lengths.get(key, 0) + sign
            if not lengths[key]:
                del lengths[key]

    def length(self) -> int | None:
        """The members' common vector length; None when they differ (the baselines are then not drawn)."""
        lengths = self.picks["lengths"]
        return int(next(iter(lengths))) if len(lengths) == 1 else None

    def baselines(self) -> list[dict[str, Any]]:
        """As pareto._baselines computes them: over at least two plotted submissions, of which at least two
        members with vectors of one length."""
        n = self.length()
        if self.counts["plotted"] < 2 or self.picks["members"] < 2 or n is None or self.oracle is None:
            return []
        oracle = self.oracle.point()
        out = [{"kind": "Oracle", "submission_id": None, "accuracy": oracle.accuracy, "cost": oracle.cost, "n": n}]
        for kind in ("Strongest", "Cheapest"):
            sid, _name, acc, cost = self.picks[kind.lower()]
            out.append({"kind": kind, "submission_id": sid, "accuracy": acc, "cost": cost, "n": n})
        return out

    def save(self, benchmark: Benchmark, oracle_changed: bool = True) -> ParetoState:
        fields = {"counts": self.counts, "frontier": self.frontier, "baselines": self.baselines(), "picks": self.picks}
        if oracle_changed:
            fields["oracle"] = self.oracle.to_bytes() if self.oracle is not None else None
        state, _ = ParetoState.objects.update_or_create(benchmark=benchmark, mode=self.mode, unit=self.unit,
                                                        defaults=fields)
        return state


def _members(benchmark: Benchmark, mode: str, unit: str) -> Any:
    return ParetoPoint.objects.filter(benchmark=benchmark, mode=mode, accuracy__isnull=False, base_n__isnull=False,
                                      **{f"{unit}__isnull": False, f"base_{unit}__isnull": False})


def _pick(benchmark: Benchmark, mode: str, unit: str, kind: str) -> list[list[Any]]:
    """The ``KEEP`` first members in the Strongest's or the Cheapest's order, read from the stored rows: the
    ``KEEP``-th best value (the database's order, ``LIMIT``), then every member at that value or better, ordered
    in Python (ties by name: a database's collation may not compare names as Python does). When many members
    share the boundary value (the bench's copies share their costs) all of them are read: a list runs out rarely
    (``_picks_update``), and a state stored before the lists were kept reads them once."""
    members = _members(benchmark, mode, unit)
    field = "base_acc" if kind == "strongest" else f"base_{unit}"
    bound = list(members.filter(**{f"{field}__isnull": False}).order_by(
        f"-{field}" if kind == "strongest" else field).values_list(field, flat=True)[KEEP - 1:KEEP])
    if bound:
        members = members.filter(**{f"{field}__gte" if kind == "strongest" else f"{field}__lte": bound[0]})
    found = members.values_list("submission_id", "name", "base_acc", f"base_{unit}")
    return [list(p) for p in sorted(map(tuple, found), key=PICKS[kind])[:KEEP]]


def _frontier_points(rows: Iterable[Any]) -> list[Point]:
    return [Point(name, acc, cost) for _sid, name, acc, cost in rows]


def _frontier(points: list[list[Any]]) -> list[list[Any]]:
    """The library's frontier over [sid, name, accuracy, cost] points, the same shape back."""
    by_name = {p[1]: p for p in points}
    return [list(by_name[p.name]) for p in pareto_frontier(_frontier_points(points))]


def _frontier_update(benchmark: Benchmark, state: State, removed: set[int], added: list[list[Any]]) -> None:
    """The frontier after ``removed`` left and ``added`` came (the table already holds the change). Points off
    the frontier that stay cannot enter it unless the frontier point above them left: each run of frontier
    points that left leaves a gap between the remaining neighbours L (cheaper) and R (dearer), and only stored
    points with a cost between L's and R's and an accuracy above L's can fill it."""
    old = state.frontier
    kept = [p for p in old if p[0] not in removed]
    candidates = kept + added
    if len(kept) < len(old):
        x = state.unit
        points = ParetoPoint.objects.filter(benchmark=benchmark, mode=state.mode, accuracy__isnull=False,
                                            **{f"{x}__isnull": False})
        gaps: list[Q] = []
        left: list[Any] | None = None
        in_gap = False
        for p in [*old, None]:
            if p is not None and p[0] in removed:
                in_gap = True
                continue
            if in_gap:  # a gap between ``left`` and ``p`` (None: an end of the frontier)
                gap = Q()
                if left is not None:
                    gap &= Q(**{f"{x}__gte": left[3], "accuracy__gt": left[2]})
                if p is not None:
                    gap &= Q(**{f"{x}__lte": p[3], "accuracy__lte": p[2]})
                gaps.append(gap)
                in_gap = False
            left = p
        # (an empty Q is dropped from an OR: a gap with no neighbour at either end is every point)
        cond = Q() if any(not g for g in gaps) else reduce(operator.or_, gaps)
        candidates += [list(r) for r in points.filter(cond).values_list("submission_id", "name", "accuracy", x)]
    unique = {p[0]: p for p in candidates}
    state.frontier = _frontier(list(unique.values()))


def _picks_keep(state: State, kind: str, kept: list[tuple], whole: bool) -> None:
    """Store ``kept`` (sorted) as the kind's list, cut to ``KEEP``; it is whole when it holds every member."""
    whole = len(kept) <= KEEP and (whole or len(kept) == state.picks["members"])
    state.picks.setdefault("lists", {})[kind] = [list(p) for p in kept[:KEEP]]
    state.picks.setdefault("whole", {})[kind] = whole
    state.picks[kind] = list(kept[0]) if kept else None


def _picks_update(benchmark: Benchmark, state: State, removed: set[int], added: list[Row]) -> None:
    """The Strongest and Cheapest after ``removed`` left and ``added`` came (the counts already moved): each kind's
    list of its ``KEEP`` first members (in its order) loses the members that left and gains the new ones that come
    before its last (any, while it is whole); its first is the pick. Only a list that is not whole and runs out
    (every member it held left) is read again (``_pick``), as is a state stored before the lists were kept."""
    unit = state.unit
    new = [(r.submission_id, r.name, r.base_acc, r.base_cost(unit)) for r in added if r.member(unit)]
    lists, wholes = state.picks.get("lists") or {}, state.picks.get("whole") or {}
    for kind, key in PICKS.items():
        if kind in lists:
            kept = [tuple(p) for p in lists[kind] if p[0] not in removed]
            whole = bool(wholes.get(kind))
            if kept or whole:
                last = key(kept[-1]) if kept else None
                kept = sorted(kept + [p for p in new if whole or last is None or key(p) < last], key=key)
                _picks_keep(state, kind, kept, whole)
                continue
        _picks_keep(state, kind, [tuple(p) for p in _pick(benchmark, state.mode, unit, kind)], False)


def _oracle_rebuild(benchmark: Benchmark, states: list[State]) -> None:
    """The per-sample minima of ``states`` from every member's vectors (a member that was a sample's minimum
    left), each entry's vectors read once for all of them."""
    members: dict[int, set[int]] = {}  # submission -> the states (by position) it is a member of
    for i, state in enumerate(states):
        n = state.length()
        state.oracle = Oracle(n) if n is not None else None
        if state.oracle is not None:
            for sid in _members(benchmark, state.mode, state.unit).values_list("submission_id", flat=True):
                members.setdefault(sid, set()).add(i)
    modes = tuple(sorted({s.mode for s in states}))
    sids = sorted(members)
    for start in range(0, len(sids), CHUNK):
        chunk = sids[start:start + CHUNK]
        vectors = _vectors(chunk, modes)
        for i, state in enumerate(states):
            if state.oracle is not None:
                _oracle_add(state, vectors, [sid for sid in chunk if i in members[sid]])


def _oracle_add(state: State, vectors: dict, sids: Iterable[int]) -> None:
    assert state.oracle is not None
    got = [(sid, *vectors[(sid, state.mode)]) for sid in sids if (sid, state.mode) in vectors]
    got = [(sid, bits, costs[state.unit]) for sid, bits, costs in got if bits is not None and len(bits) == state.oracle.n]
    state.oracle.add([g[0] for g in got], [g[1] for g in got], [g[2] for g in got])


# ------------------------------------------------------------------------------------------- the refresh


def _load(benchmark: Benchmark) -> dict[tuple[str, str], State] | None:
    states = {}
    for s in ParetoState.objects.filter(benchmark=benchmark):
        picks = s.picks or {}
        n = int(next(iter(picks["lengths"]))) if len(picks.get("lengths") or {}) == 1 else None
        oracle = Oracle(n, bytes(s.oracle)) if n is not None and s.oracle is not None else None
        if oracle is not None and s.oracle is not None and len(bytes(s.oracle)) != Oracle.size(n):
            oracle = None
        states[(s.mode, s.unit)] = State(s.mode, s.unit, s.counts, s.frontier, picks, oracle)
    return states if len(states) == len(MODES) * len(UNITS) else None


def pareto_build(benchmark: Benchmark) -> None:
    """Every public entry's rows and every mode and unit's state, from scratch (one pass over the entries)."""
    ParetoPoint.objects.filter(benchmark=benchmark).delete()
    states = {(m, u): State.empty(m, u) for m in MODES for u in UNITS}
    points: dict[tuple[str, str], list[list[Any]]] = {k: [] for k in states}
    members: dict[tuple[str, str], list[tuple]] = {k: [] for k in states}
    picks: dict[tuple[str, str, str], list[tuple]] = {(*k, kind): [] for k in states for kind in PICKS}
    for rows, vectors in _point_rows(benchmark, None):
        ParetoPoint.objects.bulk_create([ParetoPoint(benchmark=benchmark, **_fields(r)) for r in rows],
                                        batch_size=1000)
        for r in rows:
            for unit in UNITS:
                state = states[(r.mode, unit)]
                state.count(r, 1)
                if r.plotted(unit):
                    points[(r.mode, unit)].append([r.submission_id, r.name, r.accuracy, r.x(unit)])
                if r.member(unit):
                    members[(r.mode, unit)].append((r.submission_id, r.name, r.base_acc, r.base_cost(unit)))
                    if state.oracle is None:  # the first member's length: the members' if they share one
                        state.oracle = Oracle(r.base_n or 0)
        for (mode, unit), state in states.items():
            if state.oracle is not None:
                _oracle_add(state, vectors, [r.submission_id for r in rows if r.mode == mode and r.member(unit)])
            for kind, order in PICKS.items():  # each order's KEEP first so far, and this chunk's members
                picks[(mode, unit, kind)] = heapq.nsmallest(KEEP, picks[(mode, unit, kind)] + members[(mode, unit)],
                                                            key=order)
            members[(mode, unit)] = []
    for key, state in states.items():
        for kind in PICKS:
            _picks_keep(state, kind, picks[(*key, kind)], False)
        state.frontier = _frontier(points[key])
        if state.oracle is not None and state.length() != state.oracle.n:
            state.oracle = None  # the members' vectors differ in length: no baselines
        state.save(benchmark)


def _fields(r: Row) -> dict[str, Any]:
    return {f: getattr(r, f) for f in ROW_FIELDS}


def pareto_refresh(benchmark: Benchmark, changed: Collection[int] | None) -> None:
    """Bring the stored figures to the board's new build: ``changed`` are the submissions whose entries were
    rebuilt, added or dropped by it (None: build everything, as the board's first build and ``board_rebuild``).
    Runs inside the board's refresh, in its transaction."""
    states = _load(benchmark) if changed is not None else None
    if states is None:
        pareto_build(benchmark)
        return
    if not changed:
        return
    with transaction.atomic():
        old = [Row(**v) for v in ParetoPoint.objects.filter(benchmark=benchmark, submission_id__in=list(changed))
               .values(*ROW_FIELDS)]
        ParetoPoint.objects.filter(benchmark=benchmark, submission_id__in=list(changed)).delete()
        new: list[Row] = []
        vectors: dict[tuple[int, str], Any] = {}
        for rows, found in _point_rows(benchmark, changed):
            new += rows
            vectors.update(found)
        ParetoPoint.objects.bulk_create([ParetoPoint(benchmark=benchmark, **_fields(r)) for r in new], batch_size=1000)
        removed = {r.submission_id for r in old}
        # the state names submissions the table no longer holds (a row deleted outside the refresh): build whole
        named = {p[0] for s in states.values() for p in s.frontier} | {
            s.picks[k][0] for s in states.values() for k in PICKS if s.picks.get(k)} | {
            p[0] for s in states.values() for kept in (s.picks.get("lists") or {}).values() for p in kept}
        named |= {sid for s in states.values() if s.oracle is not None for sid in s.oracle.owners()}
        named -= removed
        if named and ParetoPoint.objects.filter(benchmark=benchmark, submission_id__in=named).values(
                "submission_id").distinct().count() < len(named):
            pareto_build(benchmark)
            return
        rebuild: list[State] = []
        for (mode, unit), state in states.items():
            gone = [r for r in old if r.mode == mode]
            came = [r for r in new if r.mode == mode]
            if not gone and not came:
                continue
            before = state.length()
            for r in gone:
                state.count(r, -1)
            for r in came:
                state.count(r, 1)
            left = {r.submission_id for r in gone}
            _frontier_update(benchmark, state, left, [[r.submission_id, r.name, r.accuracy, r.x(unit)]
                                                      for r in came if r.plotted(unit)])
            _picks_update(benchmark, state, left, came)
            n = state.length()
            oracle_changed = True
            if n is None:
                state.oracle = None
            elif state.oracle is None or n != before or state.oracle.n != n or (
                    dropped := state.oracle.remove(left)) is None:
                rebuild.append(state)  # a sample's list ran out (or the members' length changed)
                continue
            else:
                joined = [r.submission_id for r in came if r.member(unit)]
                _oracle_add(state, vectors, joined)
                oracle_changed = bool(joined) or dropped
            state.save(benchmark, oracle_changed)
        _oracle_rebuild(benchmark, rebuild)
        for state in rebuild:
            state.save(benchmark)
