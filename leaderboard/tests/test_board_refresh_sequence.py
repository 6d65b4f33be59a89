"""The board's refresh (leaderboard.services.board_refresh) after a random sequence of 200 changes builds,
field by field, the board a full rebuild from nothing builds: the entries, their ranks, tie groups, rank
intervals and neighbour tests, the build's payload (what the navigation offers, the wide tabs' counts and marks)
and the wide tabs' index rows in each of their orders (leaderboard.wide_tabs.tables_update writes the changed
submissions' rows and moves the marks by them).

The refresh reuses what an earlier build left (entries whose submission did not move, the MCC neighbour
tests of unchanged pairs) and updates the ranks by what changed (leaderboard.rank_update: the changed entries'
own intervals and places, the shifts that move the others' positions and counts when read); whatever it keeps or
updates must be what a rebuild would compute. Runs on the test database (SQLite), and on PostgreSQL with
DATABASE_URL set (docs/testing.md).
"""

from __future__ import annotations

import random
from dataclasses import asdict

import pytest

from evaluation.derived import derived_read
from evaluation.models import DerivedState, Submission
from leaderboard import rank_read, rank_update, wide_tabs
from leaderboard.models import BoardCounts, BoardEntry, EntryRank, RankShift
from leaderboard.services import board_refresh
from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # ~15 s alone: its file starts first (conftest.py)

NON_AUX = [u for u in helpers.UIDS if not helpers.SAMPLES[u][4]]
MODES = ("text", "adaptive", "oracle")


def _spec(rng: random.Random, name: str) -> helpers.ModelSpec:
    """A model with a random share of right answers per mode and random tool calls."""
    right = {m: tuple(u for u in helpers.UIDS if rng.random() < rng.uniform(0.2, 0.9)) for m in MODES}
    return helpers.ModelSpec(name, right, tools=tuple(u for u in helpers.UIDS if rng.random() < 0.5),
                             prices=(rng.uniform(0.1, 3), 4.0))


def _board(benchmark) -> dict:  # noqa: ANN001
    """Everything the board's build wrote, by submission (ids and build times aside)."""
    entries = {e.pop("submission_id"): e for e in BoardEntry.objects.filter(benchmark=benchmark).values()}
    for e in entries.values():
        e.pop("id"), e.pop("built_at")
    # the ranks' figures now: the stored rows moved by the shifts recorded since (rank_read)
    ranks = {(sid, m): asdict(now) for (m, sid), now in rank_read.board_ranks_now(benchmark).items()}
    return {"entries": entries, "ranks": ranks, "payload": derived_read(benchmark, "board").payload,
            "counts": BoardCounts.objects.get(benchmark=benchmark).counts, "tab_index": helpers.tab_index(benchmark)}


def test_the_refreshed_board_equals_a_full_rebuild_after_200_random_changes(tmp_path, monkeypatch) -> None:
    from leaderboard import services

    updates: list[bool] = []

    def ranks_update(benchmark, changed):  # noqa: ANN001, ANN202 - the refresh's own, counted
        updates.append(rank_update.ranks_update(benchmark, changed))
        return updates[-1]

    monkeypatch.setattr(services, "ranks_update", ranks_update)
    tables: list[int] = []

    def tables_update(benchmark, changed, gone):  # noqa: ANN001, ANN202 - the refresh's own, counted
        tables.append(len(changed))
        return wide_tabs.tables_update(benchmark, changed, gone)

    monkeypatch.setattr(services, "tables_update", tables_update)
    counted: list[bool] = []
    after = services._Counted.after

    def counted_after(self):  # noqa: ANN001, ANN202 - the tabs offered brought up by what changed, counted
        got = after(self)
        counted.append(got is not None)
        return got

    monkeypatch.setattr(services._Counted, "after", counted_after)
    rng = random.Random(37)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    scored = [helpers.submit(benchmark, _spec(rng, f"Model {i}"), public=i % 5 != 4, refresh=False) for i in range(10)]
    # clones share a template's vectors until re-scored (ties, broken by finish time then id)
    subs = scored + helpers.clone(scored[0], 14) + helpers.clone(scored[1], 8, prefix="Twin")
    board_refresh(benchmark_id=benchmark.pk)
    kinds = dict.fromkeys(helpers.CHANGES, 0)
    for step in range(200):
        kinds[helpers.random_change(rng, subs, lambda name: _spec(rng, name))] += 1
        if rng.random() < 0.35 or step == 199:  # else the next change comes before the worker ran (a burst)
            board_refresh(benchmark_id=benchmark.pk)
    assert min(kinds.values()) >= 10, kinds  # every kind of change was made, often
    assert sum(updates) >= 0.9 * len(updates) >= 50, updates  # the ranks were updated by what changed, not rebuilt
    assert len(tables) == len(updates), tables  # and the wide tabs' index, every time after the first build
    # what changed found from the change log (not every submission compared), the tabs offered counted from it
    # (the first refresh after the clones' bulk write compares them all)
    assert sum(counted) >= 0.9 * len(updates), (counted, len(updates))
    refreshed = _board(benchmark)
    assert len(refreshed["entries"]) >= 10 and len(refreshed["ranks"]) >= 20  # a board, not an empty one

    EntryRank.objects.filter(benchmark=benchmark).delete()
    RankShift.objects.filter(benchmark=benchmark).delete()
    BoardEntry.objects.filter(benchmark=benchmark).delete()
    DerivedState.objects.filter(benchmark=benchmark, kind="board").delete()
    board_refresh(benchmark_id=benchmark.pk)
    rebuilt = _board(benchmark)
    assert refreshed["entries"].keys() == rebuilt["entries"].keys()
    for key, entry in rebuilt["entries"].items():
        assert refreshed["entries"][key] == entry, key
    assert refreshed["ranks"].keys() == rebuilt["ranks"].keys()
    for key, rank in rebuilt["ranks"].items():
        assert refreshed["ranks"][key] == rank, key
    helpers.assert_same_tab_index(refreshed["tab_index"], rebuilt["tab_index"])
    # the windows the marks move by may hold fewer values than a full build's (compared above)
    assert {k: v for k, v in refreshed["payload"].items() if k != "tab_windows"} == {
        k: v for k, v in rebuilt["payload"].items() if k != "tab_windows"}
    assert refreshed["counts"] == rebuilt["counts"]  # the tabs offered, the overview's counts and cost bounds
    assert Submission.objects.on_board().filter(benchmark=benchmark).count() == len(rebuilt["entries"])
