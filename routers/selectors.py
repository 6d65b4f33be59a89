"""Reads of the router track: the router board (routers, baselines and candidate models on the test split).

Every row is scored by the same function on the same test split: the submitted routers (public, done),
the baselines (Oracle; Strongest and Cheapest chosen on train; Random; the TF-IDF nearest-neighbour
reference router trained on train) and each candidate model routed to alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from django.db.models import Count, Exists, Max, OuterRef, Q, TextField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotation.models import Benchmark
from evaluation.derived import derived_read
from evaluation.metrics import routing
from evaluation.metrics.cost import Point, pareto_frontier
from evaluation.models import DerivedState, Submission
from routers.models import RouterReported, RouterStatus, RouterSubmission
from routers.services import REFERENCE_NAME, REFERENCE_STATES  # noqa: F401 - the names pages and tests read

KINDS = {"router": "Router", "baseline": "Baseline", "model": "Candidate model"}

@dataclass
class BoardRow:
    kind: str  # router | baseline | model
    name: str
    figures: dict[str, Any]
    router_id: int | None = None
    owner: str = ""
    pool_current: bool = True  # a router scored on the pool as it is now
    pool_version: int | None = None  # the version it was scored on
    rescoring: bool = False  # queued or being scored again on the current pool
    on_frontier: bool = False

    def flat(self) -> dict[str, Any]:
        f = self.figures
        return {"kind": self.kind, "name": self.name, "router_id": self.router_id,
                "accuracy": f["accuracy"]["value"], "accuracy_low": f["accuracy"]["low"],
                "accuracy_high": f["accuracy"]["high"], "cost_per_sample_usd": f["cost_per_sample_usd"]["value"],
                "cost_per_10k_usd": f["cost_per_10k_usd"], "rank_score": f["rank_score"],
                "oracle_gap_accuracy": f["oracle_gap"]["accuracy"], "oracle_gap_cost_usd": f["oracle_gap"]["cost_usd"],
                "on_frontier": self.on_frontier, "pool_current": self.pool_current, "pool_version": self.pool_version}


@dataclass
class RouterBoard:
    mode: str
    models: list[str]
    n_test: int
    splits: dict[str, int]
    bounds: tuple[float, float] | None
    pool_version: int = 0
    reference: str = ""  # the reference router's state (REFERENCE_STATES)
    origin: str = ""  # "imported from <files>" for an imported pool; "" when built from the leaderboard
    updating: bool = False  # the pool's build is behind the benchmark's results (its refresh has not run yet)
    departed: list[str] = field(default_factory=list)  # pool models no longer on the board: figures withheld
    rows: list[BoardRow] = field(default_factory=list)
    reported: list[RouterReported] = field(default_factory=list)  # a paper's rows, on the paper's own pool


# The public routers the board shows: scored, or being scored again on the current pool (their old figures, marked).
SHOWN = (RouterStatus.DONE, RouterStatus.QUEUED, RouterStatus.SCORING)


def router_board(benchmark: Benchmark) -> RouterBoard:
    """The router board from the pool's last build (services.pool_build, the derived kind "routers") and the
    public routers as they are now: reads only. A router scored on another pool than the build's shows its
    old figures, marked, until its re-score (sent by the pool's refresh) replaces them."""
    build = derived_read(benchmark, "routers")
    stored = build.payload or {}
    bounds = stored.get("bounds")
    board = RouterBoard(mode=stored.get("mode", ""), models=stored.get("models", []), n_test=stored.get("n_test", 0),
                        splits=stored.get("splits", dict.fromkeys(routing.SPLITS, 0)),
                        bounds=(bounds[0], bounds[1]) if bounds else None, pool_version=stored.get("pool_version", 0),
                        reference=stored.get("reference", ""), origin=stored.get("origin", ""),
                        updating=build.updating)
    current = stored.get("pool_version_id")
    # What must hold at once: a model unpublished or deleted since the build never shows. Every figure of the
    # pool (baselines, candidate models, routers' picks) stands on its rows, so all wait for the rebuild.
    members = {name: sid for name, sid in (stored.get("members") or {}).items() if sid is not None}
    if members:
        on = set(Submission.objects.on_board().filter(pk__in=members.values()).values_list("pk", flat=True))
        board.departed = sorted(name for name, sid in members.items() if sid not in on)
    if board.departed:
        board.updating = True
        board.models = [m for m in board.models if m not in board.departed]
        board.reported = list(RouterReported.objects.filter(benchmark=benchmark))
        return board
    for sub in (RouterSubmission.objects.filter(benchmark=benchmark, is_public=True, status__in=SHOWN,
                                                results__isnull=False)
                .select_related("owner", "pool_version").order_by("created_at", "id")):
        board.rows.append(BoardRow("router", sub.name, sub.results, router_id=sub.pk, owner=sub.owner.username,
                                   pool_current=sub.pool_version_id == current and sub.status == RouterStatus.DONE,
                                   pool_version=sub.pool_version.number if sub.pool_version else None,
                                   rescoring=sub.status != RouterStatus.DONE))
    for row in stored.get("rows", []):
        board.rows.append(BoardRow(row["kind"], row["name"], row["figures"], pool_version=board.pool_version))
    points = [Point(str(i), r.figures["accuracy"]["value"], r.figures["cost_per_sample_usd"]["value"])
              for i, r in enumerate(board.rows) if r.name != "Oracle"]
    for p in pareto_frontier(points):
        board.rows[int(p.name)].on_frontier = True
    board.rows.sort(key=lambda r: (-(r.figures["rank_score"] or 0), r.name))
    board.reported = list(RouterReported.objects.filter(benchmark=benchmark))
    return board


def router_board_shows(benchmark: Benchmark) -> bool:
    """Whether ``router_board`` would show a row (its ``rows`` or ``reported``), as the tabs offered ask, without
    building it: one query for the paper's rows and the shown public routers, one for the pool build's members and
    rows alone (not its payload: 0.5 s to decode at 1,000 pool models), one for the members' standing where it has
    some. A member gone from the board withholds every row but the paper's, as there."""
    found = Benchmark.objects.filter(pk=benchmark.pk).values(
        reported=Exists(RouterReported.objects.filter(benchmark=OuterRef("pk"))),
        routers=Exists(RouterSubmission.objects.filter(benchmark=OuterRef("pk"), is_public=True, status__in=SHOWN,
                                                       results__isnull=False))).first() or {}
    if found.get("reported"):
        return True
    parts = DerivedState.objects.filter(benchmark_id=benchmark.pk, kind="routers").values_list(
        Cast(KT("payload__members"), TextField()), Cast(KT("payload__rows"), TextField())).first()
    members, rows = (orjson.loads(p) if p is not None else None for p in parts or (None, None))
    wanted = {sid for sid in (members or {}).values() if sid is not None}
    if wanted and Submission.objects.on_board().filter(pk__in=wanted).count() < len(wanted):
        return False  # departed: router_board withholds the pool's rows and the routers until the rebuild
    return bool(found.get("routers") or rows)


def routers_stamp(benchmark: Benchmark) -> tuple:
    """What the Routers tab's cache key carries of the routers themselves (one query): a router submitted,
    scored, re-queued or published changes it."""
    got = RouterSubmission.objects.filter(benchmark=benchmark).aggregate(
        n=Count("pk"), public=Count("pk", filter=Q(is_public=True)), last=Max("status_at"))
    return (got["n"], got["public"], got["last"].timestamp() if got["last"] else 0)


def router_visible(*, benchmark: Benchmark, pk: int, user: Any) -> RouterSubmission | None:
    """A public scored router, or any router of the signed-in owner (or staff); None otherwise."""
    sub = RouterSubmission.objects.filter(benchmark=benchmark, pk=pk).select_related("owner", "pool_version").first()
    if sub is None:
        return None
    if sub.is_public and sub.status == RouterStatus.DONE:
        return sub
    if user.is_authenticated and (user.pk == sub.owner_id or user.is_staff):
        return sub
    return None


def neighbour_tests(rows: list[BoardRow]) -> list[Any]:
    """For each row, the paired test against the row above it (None for the first, or without outcomes)."""
    out: list[Any] = [None]
    for above, row in zip(rows, rows[1:]):
        a, b = above.figures.get("per_sample"), row.figures.get("per_sample")
        out.append(routing.paired_test(a, b) if a and b and len(a) == len(b) else None)
    return out
