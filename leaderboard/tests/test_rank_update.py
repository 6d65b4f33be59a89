"""leaderboard.rank_update: the ranks updated by what changed equal, field by field, the ranks built whole
(services.ranks_build), after each of 30 random changes, then of 12 bursts, on a board of 40 entries over 400
samples: entries re-scored (new vectors and figures, ties among them), taken off the board and put back, several
at a time.

Over 400 samples the entries' own intervals are narrow enough to lie apart, so the rank intervals' both ends
move (the 200-change sequence test runs the whole refresh on a board of a few samples, where they rarely do).
Runs on SQLite, and on PostgreSQL with DATABASE_URL set.
"""

from __future__ import annotations

import random

import pytest

from evaluation.models import DerivedState, Submission
from leaderboard import rank_read, rank_update
from leaderboard.models import BoardEntry, EntryRank, RankShift
from leaderboard.services import board_refresh, ranks_build
from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # its file starts first (conftest.py)

N = 400
FIELDS = ("position", "shared_rank", "rank_low", "rank_high", "above", "p_above", "significant_above", "stat_low",
          "stat_high")


def _figures(rng: random.Random) -> dict:
    """A random entry's vectors and overview figures (the figures drawn from a few values: ties)."""
    skill = {m: rng.uniform(0.2, 0.9) for m in ("text", "adaptive", "oracle")}
    correct = {m: "".join("1" if rng.random() < p else "0" for _ in range(N)) for m, p in skill.items()}
    invoked = "".join(rng.choice("01") for _ in range(N))
    return {"correct": correct, "invoked": invoked, **{f"{m}_acc": round(p * 20) * 5.0 for m, p in skill.items()},
            "mcc": rng.choice((None, 0.1, 0.2, 0.3, rng.uniform(-0.5, 0.5)))}


def _stored(benchmark) -> dict:  # noqa: ANN001
    """The stored rows' figures now: as stored, moved by the shifts recorded since (rank_read)."""
    return {(sid, m): [getattr(now, f) for f in FIELDS] for (m, sid), now in rank_read.board_ranks_now(benchmark).items()}


def _built(benchmark) -> dict:  # noqa: ANN001
    DerivedState.objects.filter(benchmark=benchmark, kind="board").delete()  # no stored test kept: all run afresh
    out = {}
    shared = 0
    for r in sorted(ranks_build(benchmark), key=lambda r: (r.metric, r.position)):
        shared = r.position if r.starts_group else shared
        out[(r.submission_id, r.metric)] = [shared if f == "shared_rank" else getattr(r, f) for f in FIELDS]
    return out


def _write_whole(benchmark) -> None:  # noqa: ANN001
    RankShift.objects.filter(benchmark=benchmark).delete()
    EntryRank.objects.filter(benchmark=benchmark).delete()
    EntryRank.objects.bulk_create(ranks_build(benchmark))


@pytest.mark.parametrize(("steps", "sizes", "seed", "compact_after"),
                         [(30, (1, 1, 1, 2, 3), 7, 10**6), (12, (5, 8, 12), 11, 30)], ids=["one-to-three", "bursts"])
def test_ranks_updated_by_what_changed_equal_ranks_built_whole(tmp_path, monkeypatch, steps, sizes, seed,
                                                                compact_after) -> None:  # noqa: ANN001
    """One to three entries changed at a time, the shifts never folded into the rows (the full build written back
    twice early on); then bursts of 5 to 12 (a worker behind: several places of the order changed at
    once, next to each other or apart, entries moving up and down past each other), the shifts folded in after 30
    per ordering by the refresh itself (``ranks_compact``, as when no sweeper runs)."""
    monkeypatch.setattr(rank_update, "FOLD_IN_REFRESH_AFTER", compact_after)
    rng = random.Random(seed)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    spec = helpers.ModelSpec("Template", dict.fromkeys(("text", "adaptive", "oracle"), helpers.UIDS[:4]))
    template = helpers.submit(benchmark, spec, refresh=False)
    subs = [template, *helpers.clone(template, 39)]
    board_refresh(benchmark_id=benchmark.pk)
    figures = {s.pk: _figures(rng) for s in subs}
    for sid, f in figures.items():
        BoardEntry.objects.filter(submission_id=sid).update(**f)
    _write_whole(benchmark)
    off: set[int] = set()
    updated = compacted = 0
    for step in range(steps):
        changed = set(rng.sample(sorted(figures), rng.choice(sizes)))
        for sid in changed:
            kind = rng.choice(("rescore", "rescore", "toggle"))
            if kind == "toggle" and sid in off:  # back on the board
                off.discard(sid)
                Submission.objects.filter(pk=sid).update(is_public=True)
                entry = BoardEntry.objects.filter(benchmark=benchmark).first()  # any, its figures replaced
                entry.pk, entry.submission_id = None, sid
                entry.save()
                BoardEntry.objects.filter(submission_id=sid).update(**figures[sid])
            elif kind == "toggle" and len(off) < 10:  # taken off the board
                off.add(sid)
                Submission.objects.filter(pk=sid).update(is_public=False)
                BoardEntry.objects.filter(submission_id=sid).delete()
            elif sid not in off:  # re-scored: new vectors and figures
                figures[sid] = _figures(rng)
                BoardEntry.objects.filter(submission_id=sid).update(**figures[sid])
        shifts = RankShift.objects.filter(benchmark=benchmark).count()
        updated += rank_update.ranks_update(benchmark, changed)
        compacted += RankShift.objects.filter(benchmark=benchmark).count() < shifts
        stored = _stored(benchmark)
        built = _built(benchmark)
        assert stored.keys() == built.keys(), step
        for key, want in built.items():
            assert stored[key] == want, (step, key, dict(zip(FIELDS, stored[key])), dict(zip(FIELDS, want)))
        if step in (3, 10) and compact_after > 1000:  # the full build written back, as the refresh does when it
            _write_whole(benchmark)                        # cannot update (then 19 steps of shifts on its rows)
    assert updated >= steps - 5  # an update, not a fallback to the full build
    assert compacted >= (2 if compact_after < 100 else 0)
    lows = {v[2] for v in _stored(benchmark).values()}
    assert len(lows) > 5  # rank intervals' lower ends differ: the counts were exercised


def test_an_ordering_without_figures_leaves_the_others_updated(tmp_path) -> None:
    """A board without MCC (no entry has the figure) has no MCC ranks: still an update, not the full build."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    spec = helpers.ModelSpec("Template", dict.fromkeys(("text", "adaptive", "oracle"), helpers.UIDS[:4]))
    subs = [t := helpers.submit(benchmark, spec, refresh=False), *helpers.clone(t, 5)]
    BoardEntry.objects.filter(benchmark=benchmark).update(mcc=None)
    board_refresh(benchmark_id=benchmark.pk, full=True)
    BoardEntry.objects.filter(submission_id=subs[2].pk).update(text_acc=100.0, adaptive_acc=0.0)  # re-scored
    assert rank_update.ranks_update(benchmark, {subs[2].pk})
    assert not EntryRank.objects.filter(benchmark=benchmark, metric="mcc").exists()
    assert _stored(benchmark) == _built(benchmark)


def test_the_staff_command_rebuilds_the_ranks_whole(tmp_path) -> None:
    from django.core.management import call_command

    benchmark = helpers.make_benchmark(tmp_path / "bench")
    spec = helpers.ModelSpec("Template", dict.fromkeys(("text", "adaptive", "oracle"), helpers.UIDS[:4]))
    template = helpers.submit(benchmark, spec, refresh=False)
    helpers.clone(template, 3)
    board_refresh(benchmark_id=benchmark.pk)
    before = _stored(benchmark)
    EntryRank.objects.filter(benchmark=benchmark, metric="text").update(rank_low=99, position=7)  # a damaged board
    call_command("board_rebuild", benchmark.slug)
    assert _stored(benchmark) == before


def test_pages_positions_and_tie_groups_read_with_shifts_equal_the_whole_build(tmp_path, monkeypatch) -> None:
    """What pages read while shifts are recorded (none folded in): every page of each order by position
    (``rank_read.page_ids``, the overview's stored path, and the overview's page itself with its rows' ranks), each
    entry's position, the ranks of scattered rows (a
    filtered view: their groups' starts read apart) and the model page's tie-group sizes equal the whole build's.
    Then a submission deleted outright: the update declines."""
    from leaderboard import board, model_page, selectors

    monkeypatch.setattr(rank_update, "FOLD_IN_REFRESH_AFTER", 10**6)
    rng = random.Random(5)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    spec = helpers.ModelSpec("Template", dict.fromkeys(("text", "adaptive", "oracle"), helpers.UIDS[:4]))
    template = helpers.submit(benchmark, spec, refresh=False)
    subs = [template, *helpers.clone(template, 29)]
    board_refresh(benchmark_id=benchmark.pk)
    for s in subs:
        BoardEntry.objects.filter(submission_id=s.pk).update(**_figures(rng))
    _write_whole(benchmark)
    for _ in range(8):
        changed = set(rng.sample([s.pk for s in subs], 2))
        for sid in changed:
            BoardEntry.objects.filter(submission_id=sid).update(**_figures(rng))
        assert rank_update.ranks_update(benchmark, changed)
    assert RankShift.objects.filter(benchmark=benchmark, metric="text").count() == 32  # each moved: out and in
    built = _built(benchmark)
    for metric in rank_update.RANKED:
        order = [sid for sid, _ in sorted(((sid, v) for (sid, m), v in built.items() if m == metric),
                                          key=lambda x: x[1][0])]
        for offset in range(0, len(order) + 7, 7):
            assert rank_read.page_ids(benchmark, metric, offset, 7) == order[offset:offset + 7], (metric, offset)
        for i, sid in enumerate(order):
            assert rank_read.position_now(benchmark, metric, sid) == i + 1
        if metric != "mcc":  # the overview's default page of the column (the stored path), its rows' ranks now
            page = selectors.overview(benchmark, board.Query.parse({"sort": metric}))
            assert [r.submission_id for r in page.rows] == order, metric
            for r in page.rows:
                want = dict(zip(FIELDS, built[(r.submission_id, metric)]))
                assert (r.shared_rank, r.rank_low, r.rank_high) == (
                    want["shared_rank"], want["rank_low"], want["rank_high"]), (metric, r.submission_id)
        scattered = rng.sample(order, len(order) // 3)
        got = selectors.standings(benchmark, metric, scattered)[metric]
        for sid in scattered:
            want = dict(zip(FIELDS, built[(sid, metric)]))
            assert (got[sid].shared_rank, got[sid].rank_low, got[sid].rank_high) == (
                want["shared_rank"], want["rank_low"], want["rank_high"]), (metric, sid)
    for s in rng.sample(subs, 6):
        for row in model_page.standing_rows(benchmark, s):
            shared = built[(s.pk, row.metric)][1]
            assert row.rank == shared
            assert row.of == sum(1 for (_, m) in built if m == row.metric)
            assert row.tied == sum(1 for (_, m), v in built.items() if m == row.metric and v[1] == shared)

    # A submission deleted outright (the admin's delete, not the service's soft one) takes its rank rows with it and
    # records no shift: the rows below it would read a place too low, so the update declines (the refresh then
    # builds the whole board).
    second = rank_read.page_ids(benchmark, "text", 1, 1)[0]
    Submission.objects.filter(pk=second).delete()
    assert not EntryRank.objects.filter(submission_id=second).exists()  # gone with it
    assert not rank_update.ranks_update(benchmark, {second})


def _shifted_board(tmp_path, monkeypatch, changes: int):  # noqa: ANN001, ANN202
    """A board of 20 entries with ``changes`` single re-scores recorded as shifts, none folded by the refresh."""
    monkeypatch.setattr(rank_update, "FOLD_IN_REFRESH_AFTER", 10**6)
    rng = random.Random(3)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    spec = helpers.ModelSpec("Template", dict.fromkeys(("text", "adaptive", "oracle"), helpers.UIDS[:4]))
    template = helpers.submit(benchmark, spec, refresh=False)
    subs = [template, *helpers.clone(template, 19)]
    board_refresh(benchmark_id=benchmark.pk)
    for s in subs:
        BoardEntry.objects.filter(submission_id=s.pk).update(**_figures(rng))
    _write_whole(benchmark)
    for _ in range(changes):
        sid = rng.choice(subs).pk
        BoardEntry.objects.filter(submission_id=sid).update(**_figures(rng))
        assert rank_update.ranks_update(benchmark, {sid})
    return benchmark


def test_the_sweeper_folds_the_shifts_the_refresh_left(tmp_path, monkeypatch) -> None:
    """Past ``COMPACT_AFTER`` shifts of an ordering the refresh leaves them (a fold can write most of the board); the
    sweeper's task, on its schedule, folds them: none left, the ranks as the whole build, also for a read that took
    the shifts before the fold and the rows after it; each change after the fold moves the folded rows. A board with
    fewer is left alone. Fails if the task is not scheduled on the sweeper's queue, folds nothing, writes its rows at
    ``seq`` 0 (the straddling read moves them twice), or the next change counts its ``seq`` from 1 again."""
    from django.conf import settings

    from config.celery import app
    from leaderboard import tasks

    monkeypatch.setattr(rank_update, "COMPACT_AFTER", 8)
    benchmark = _shifted_board(tmp_path, monkeypatch, 6)  # each re-score: a shift out and in, per ordering
    assert RankShift.objects.filter(benchmark=benchmark, metric="text").count() == 12
    scheduled = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "leaderboard.tasks.ranks_fold"]
    assert scheduled and scheduled[0]["options"]["queue"] == settings.SUBMISSIONS_SWEEP_QUEUE
    assert "leaderboard.tasks.ranks_fold" in app.tasks  # registered by the name the schedule sends
    before = rank_read.shifts_of(benchmark)  # a page that read the shifts just before the fold, its rows just after
    tasks.ranks_fold()
    assert not RankShift.objects.filter(benchmark=benchmark).exists()
    built = _built(benchmark)
    assert _stored(benchmark) == built
    straddling = rank_read.ranks_now(benchmark, EntryRank.objects.filter(benchmark=benchmark).values(
        *rank_read.ROW_FIELDS), before)
    assert {(sid, m): [getattr(now, f) for f in FIELDS] for (m, sid), now in straddling.items()} == built
    # the changes after a fold are recorded above the folded rows' seq: each moves them
    monkeypatch.setattr(rank_update, "COMPACT_AFTER", 64)
    rng = random.Random(9)
    for sid in rng.sample(sorted({r.submission_id for r in EntryRank.objects.filter(benchmark=benchmark)}), 3):
        BoardEntry.objects.filter(submission_id=sid).update(**_figures(rng))
        assert rank_update.ranks_update(benchmark, {sid})
        assert _stored(benchmark) == _built(benchmark)
    shifts = RankShift.objects.filter(benchmark=benchmark).count()
    assert rank_update.ranks_fold_due() == {} and RankShift.objects.filter(benchmark=benchmark).count() == shifts


@pytest.mark.django_db(transaction=True)
def test_the_sweepers_fold_waits_for_a_refresh_in_progress(tmp_path, monkeypatch) -> None:
    """A refresh holds its board build's lock while it records a change (``derived_refresh``); the sweeper's fold
    started meanwhile waits for it, then folds. Fails on PostgreSQL without the fold's lock (a fold that deleted the
    shifts a refresh was recording would lose them); SQLite's writers take turns anyway."""
    import threading
    import time

    from django.db import connection, transaction

    from evaluation.models import DerivedState

    monkeypatch.setattr(rank_update, "COMPACT_AFTER", 8)
    benchmark = _shifted_board(tmp_path, monkeypatch, 6)
    locked, release = threading.Event(), threading.Event()
    done: list[dict] = []

    def refresh() -> None:
        try:
            with transaction.atomic():
                list(DerivedState.objects.select_for_update().filter(benchmark_id=benchmark.pk, kind="board"))
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    def sweeper() -> None:
        try:
            done.append(rank_update.ranks_fold_due())
        finally:
            connection.close()

    holder = threading.Thread(target=refresh)
    holder.start()
    assert locked.wait(30)
    folding = threading.Thread(target=sweeper)
    folding.start()
    time.sleep(1.5)
    waited = folding.is_alive() and RankShift.objects.filter(benchmark=benchmark).exists()
    release.set()
    holder.join(30)
    folding.join(60)
    assert waited, "the fold ran while the refresh held the board's lock"
    assert done == [{benchmark.pk: done[0][benchmark.pk]}] and not RankShift.objects.filter(benchmark=benchmark).exists()
