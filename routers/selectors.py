"""Reads of the router track: the router board (routers, baselines and candidate models on the test split).

Every row is scored by the same function on the same test split: the submitted routers (public, done),
the baselines (Oracle; Strongest and Cheapest chosen on train; Random; the TF-IDF nearest-neighbour
reference router trained on train) and each candidate model routed to alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache

from annotation.models import Benchmark
from evaluation.metrics import routing
from evaluation.metrics.cost import Point, pareto_frontier
from routers.models import RouterReference, RouterReported, RouterStatus, RouterSubmission
from routers.pool import PoolData, pool_load
from routers.services import cost_bounds_of, routers_rescore_stale

KINDS = {"router": "Router", "baseline": "Baseline", "model": "Candidate model"}
REFERENCE_NAME = "kNN over TF-IDF (reference)"
# What the board says of the reference router: "done" (its row is on the board), "computing" (queued or
# being trained on the worker: no row, never an older pool's figures), "failed", or "" (no pool to route).
REFERENCE_STATES = {RouterStatus.QUEUED: "computing", RouterStatus.SCORING: "computing",
                    RouterStatus.DONE: "done", RouterStatus.FAILED: "failed"}
CACHE_SECONDS = 15 * 60


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
    rows: list[BoardRow] = field(default_factory=list)
    reported: list[RouterReported] = field(default_factory=list)  # a paper's rows, on the paper's own pool


def _pool_key(benchmark: Benchmark, data: PoolData) -> str:
    sig = json.dumps([data.track.mode, sorted(data.submissions.items()), sorted(data.split.items())])
    return f"routers:fixed:{benchmark.pk}:{hashlib.sha256(sig.encode()).hexdigest()[:24]}"


def _fixed_rows(benchmark: Benchmark, data: PoolData) -> list[dict[str, Any]]:
    """Baselines and candidate models: they depend on the pool and the split only, so they are cached by both."""
    def build() -> list[dict[str, Any]]:
        train, test = data.rows("train"), data.rows("test")
        bounds = cost_bounds_of(benchmark, data, test)
        domains = [data.samples[i].domain for i in test]
        out = []
        for kind, (label, figures) in routing.baselines(data.pool, train, test, bounds=bounds).items():
            out.append({"kind": "baseline", "name": label, "figures": figures.as_dict(), "baseline": kind})
        for m in data.pool.models:
            f = routing.score(data.pool, test, routing.single_model_probs(data.pool, m, len(test)), bounds=bounds,
                              domains=domains)
            out.append({"kind": "model", "name": m, "figures": f.as_dict()})
        return out

    if not data.pool.models or not data.rows("test"):
        return []
    return list(cache.get_or_set(_pool_key(benchmark, data), build, CACHE_SECONDS))


def _reference_row(benchmark: Benchmark, data: PoolData, ref: RouterReference) -> dict[str, Any]:
    """The reference router's row from its stored picks (trained on the worker): scoring them is all a read does."""
    test = data.rows("test")
    bounds = cost_bounds_of(benchmark, data, test)

    def build() -> dict[str, Any]:
        probs = routing.probs_matrix(data.pool, [{ref.picks[data.samples[i].uid]: 1.0} for i in test])
        figures = routing.score(data.pool, test, probs, bounds=bounds, domains=[data.samples[i].domain for i in test])
        return {"kind": "baseline", "name": REFERENCE_NAME, "figures": figures.as_dict(), "baseline": "knn"}

    key = hashlib.sha256(json.dumps([ref.pk, ref.inputs, bounds]).encode()).hexdigest()[:24]
    return cache.get_or_set(f"routers:reference:{key}", build, CACHE_SECONDS)


def router_board(benchmark: Benchmark) -> RouterBoard:
    data = pool_load(benchmark)
    test = data.rows("test")
    board = RouterBoard(mode=data.track.mode, models=list(data.pool.models), n_test=len(test),
                        splits={s: len(data.rows(s)) for s in routing.SPLITS},
                        bounds=cost_bounds_of(benchmark, data, test) if data.pool.models else None)
    board.pool_version = data.version.number
    board.origin = data.version.origin
    # Routers scored on another pool are sent to be scored again (derived figures, rebuilt on read like
    # the leaderboard's entries); until then they show their old figures, marked.
    routers_rescore_stale(benchmark=benchmark, version=data.version)
    shown = (RouterStatus.DONE, RouterStatus.QUEUED, RouterStatus.SCORING)
    for sub in (RouterSubmission.objects.filter(benchmark=benchmark, is_public=True, status__in=shown,
                                                results__isnull=False)
                .select_related("owner", "pool_version").order_by("created_at", "id")):
        board.rows.append(BoardRow("router", sub.name, sub.results, router_id=sub.pk, owner=sub.owner.username,
                                   pool_current=sub.pool_version_id == data.version.pk and sub.status == RouterStatus.DONE,
                                   pool_version=sub.pool_version.number if sub.pool_version else None,
                                   rescoring=sub.status != RouterStatus.DONE))
    fixed = _fixed_rows(benchmark, data)
    ref = data.reference
    board.reference = REFERENCE_STATES[ref.status] if ref else ""
    if ref is not None and ref.status == RouterStatus.DONE:
        fixed.append(_reference_row(benchmark, data, ref))  # rows are sorted below
    for row in fixed:
        board.rows.append(BoardRow(row["kind"], row["name"], row["figures"], pool_version=data.version.number))
    points = [Point(str(i), r.figures["accuracy"]["value"], r.figures["cost_per_sample_usd"]["value"])
              for i, r in enumerate(board.rows) if r.name != "Oracle"]
    for p in pareto_frontier(points):
        board.rows[int(p.name)].on_frontier = True
    board.rows.sort(key=lambda r: (-(r.figures["rank_score"] or 0), r.name))
    board.reported = list(RouterReported.objects.filter(benchmark=benchmark))
    return board


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
