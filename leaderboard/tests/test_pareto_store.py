"""The Cost & Pareto tab's stored figures (leaderboard.pareto_store), updated by what changed, equal the ones
computed from scratch over every public row (leaderboard.pareto.pareto_view) after a random sequence of
publishes, unpublishes, re-scores, new results and deletions: each page's points with their frontier marks, the
frontier, the routing baselines, the notes, the figure and its key, in both units and every mode. Runs on the
test database (SQLite), and on PostgreSQL with DATABASE_URL set.
"""

from __future__ import annotations

import random

import pytest
from django.http import QueryDict

from evaluation.metrics.types import BOARD_MODES
from evaluation.models import Submission
from leaderboard import pareto_store, tabs
from leaderboard.models import ParetoState
from leaderboard.pareto import stored_page
from leaderboard.services import board_refresh
from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

MODES = ("text", "adaptive", "oracle")


def _spec(rng: random.Random, name: str) -> helpers.ModelSpec:
    """A model with a random share right per mode, and a price drawn from a few (equal costs happen), or none."""
    right = {m: tuple(u for u in helpers.UIDS if rng.random() < rng.uniform(0.1, 0.9)) for m in MODES}
    prices = None if rng.random() < 0.15 else (rng.choice([0.1, 0.5, 1.0, 2.0, 3.0]), 4.0)
    return helpers.ModelSpec(name, right, tools=tuple(u for u in helpers.UIDS if rng.random() < 0.5), prices=prices,
                             tokens=rng.choice([300, 1000, 2000]), weights=rng.choice(["open", "closed", ""]))


def _shown(context: tuple) -> dict:
    view, pager = context
    return {"unit": view.unit, "points": view.points, "frontier": view.frontier, "baselines": view.baselines,
            "figure": view.figure, "caption": view.caption, "unplotted": view.unplotted, "undecided": view.undecided,
            "empty_note": view.empty_note, "pager": pager}


def _compare(benchmark) -> None:  # noqa: ANN001
    """Every page of every mode and unit, read from the store and computed from every public row's results."""
    base = tabs.tab_url(benchmark, "cost")
    for mode in BOARD_MODES:
        for unit in pareto_store.UNITS:
            page = 1
            while True:
                params = QueryDict(f"mode={mode}&unit={unit}&page={page}")
                stored = stored_page(benchmark, mode, unit, params, base)
                assert stored is not None
                computed = tabs._cost_computed(benchmark, mode, unit, params, base)
                got, expected = _shown(stored), _shown(computed)
                for key, value in expected.items():
                    assert got[key] == value, (mode, unit, page, key)
                if not stored[1]["pages"] or stored[1]["pages"][-1].get("current"):
                    break
                page += 1


def test_the_stored_figures_equal_the_computed_ones_after_random_changes(tmp_path, monkeypatch) -> None:
    builds: list[int] = []
    whole = pareto_store.pareto_build
    monkeypatch.setattr(pareto_store, "pareto_build", lambda b: (builds.append(1), whole(b)))
    gaps: list[int] = []
    frontier_update = pareto_store._frontier_update

    def counted(benchmark, state, removed, added):  # noqa: ANN001, ANN202
        gaps.append(sum(p[0] in removed for p in state.frontier))
        return frontier_update(benchmark, state, removed, added)

    monkeypatch.setattr(pareto_store, "_frontier_update", counted)
    # two members kept per sample and list (not pareto_store.KEEP's 32), and two in each Strongest and Cheapest
    # list, so that on 60 rows a list both passes on to the next member when one leaves and runs out
    monkeypatch.setattr(pareto_store, "KEEP", 2)
    rebuilt: list[int] = []  # per refresh, how many modes and units read every member's vectors again
    oracle_rebuild = pareto_store._oracle_rebuild
    monkeypatch.setattr(pareto_store, "_oracle_rebuild", lambda b, s: (rebuilt.append(len(s)), oracle_rebuild(b, s)))

    left: list[int] = []  # per update of a mode and unit, how many of its Strongest and Cheapest left
    picks_update = pareto_store._picks_update

    def picks_counted(benchmark, state, removed, added):  # noqa: ANN001, ANN202
        left.append(sum(bool(state.picks.get(kind)) and state.picks[kind][0] in removed for kind in pareto_store.PICKS))
        return picks_update(benchmark, state, removed, added)

    monkeypatch.setattr(pareto_store, "_picks_update", picks_counted)
    read: list[str] = []  # the members read again for a Strongest or Cheapest list
    pick = pareto_store._pick
    monkeypatch.setattr(pareto_store, "_pick", lambda b, m, u, kind: (read.append(kind), pick(b, m, u, kind))[1])
    rng = random.Random(17)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    scored = [helpers.submit(benchmark, _spec(rng, f"Model {i}"), public=i % 4 != 3, refresh=False) for i in range(12)]
    # clones share a template's point (a tie, broken by name) until re-scored; 60 rows: the table has two pages
    subs = scored + helpers.clone(scored[0], 30) + helpers.clone(scored[1], 20, prefix="Twin")
    board_refresh(benchmark_id=benchmark.pk)
    _compare(benchmark)
    kinds = dict.fromkeys(helpers.CHANGES, 0)
    for step in range(60):
        on_frontier = {p[0] for p in ParetoState.objects.filter(benchmark=benchmark).values_list("frontier", flat=True)
                       for p in p}
        # half the unpublishes take a frontier point away
        kind = helpers.random_change(rng, subs, lambda name: _spec(rng, name), keep=40,
                                     unpublish=lambda s, front=on_frontier: s.pk in front or rng.random() < 0.5)
        kinds[kind] += 1
        if rng.random() < 0.6 or step == 59:  # else the next change comes before the worker ran (a burst)
            board_refresh(benchmark_id=benchmark.pk)
            _compare(benchmark)
    assert min(kinds.values()) >= 3, kinds
    assert builds == [1], builds  # built whole once (the first build), then updated by what changed
    assert sum(1 for g in gaps if g) >= 10, gaps  # frontier points left, and the gaps they opened were filled
    # a sample's list of cheapest members ran out sometimes: the Oracle read every member's vectors again, and only then
    assert sum(1 for n in rebuilt if n) >= 3 and sum(rebuilt) < len(gaps) / 2, (rebuilt, len(gaps))
    # the Strongest and Cheapest likewise: the next in their list took their place, and only a list that ran out
    # was read again
    assert len(read) >= 3 and len(read) < 0.6 * sum(left), (read, sum(left))
    assert Submission.objects.on_board().filter(benchmark=benchmark).count() > 20


def test_the_tab_reads_a_page_of_points_not_every_result(client, hand, monkeypatch) -> None:
    """An uncached page reads the stored points of its page: it neither reads the submissions' results nor
    computes the frontier or the baselines from every row (fails if the page computes them again)."""
    from django.core.cache import cache

    from leaderboard import pareto, selectors

    helpers.clone(hand.alpha, 70)
    calls: list[str] = []
    monkeypatch.setattr(selectors, "tab_sources", lambda *a, **k: calls.append("tab_sources") or [])
    monkeypatch.setattr(pareto, "pareto_view", lambda *a, **k: calls.append("pareto_view"))
    cache.clear()
    html = client.get("/b/hand/cost/?mode=adaptive&unit=usd&page=2").content.decode()
    assert calls == []
    assert 'id="pareto-chart-data"' in html and "Oracle" in html and "of 72" in html
