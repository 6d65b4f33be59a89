"""The overview's database paging gives exactly the rows, order, ranks and notes of the Python reference.

``selectors.overview`` filters, sorts and slices board entries in SQL and places the reported rows by
counting; the reference is ``board.filter_rows`` / ``sort_rows`` / ``paginate`` over every row from
``selectors.board_rows``. The board here has ties, missing values, mixed-case names, every weights
label, demo and reported rows (some tying with entries), and more than two pages.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from django.core.management import call_command
from django.utils import timezone

from leaderboard import board, selectors
from evaluation.services import benchmark_results_bump
from leaderboard.models import BoardEntry, ReportedResult
from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # its file starts first (conftest.py)

FIGURES = ("text", "adaptive", "oracle")


@pytest.fixture(scope="module")
def built(django_db_setup, django_db_blocker, tmp_path_factory):  # noqa: ANN001, ANN201
    """Built once for the module's 14 sorts (each test only reads it), flushed after them, as test_load_demo's
    demo is: about 1.6 s of setup a sort otherwise."""
    with django_db_blocker.unblock():
        yield _build(tmp_path_factory.mktemp("paging") / "bench")
        call_command("flush", interactive=False, verbosity=0)  # the data outlived every test's rollback


@pytest.fixture
def mixed(built, db):  # noqa: ANN001, ANN201
    return built


def _build(folder):  # noqa: ANN001, ANN202
    benchmark = helpers.make_benchmark(folder)
    template = helpers.submit(benchmark, helpers.ALPHA)
    helpers.submit(benchmark, helpers.GAMMA)
    clones = helpers.clone(template, 110)
    rng = random.Random(3)
    names = ["alpha", "Alpha", "beta", "Beta", "gamma", "Ünïcode", "zeta"]
    from evaluation.models import Submission

    for i, sub in enumerate(clones):
        Submission.objects.filter(pk=sub.pk).update(
            model_name=f"{rng.choice(names)} {rng.randint(0, 9)}", organisation=rng.choice(["Org A", "org b", ""]),
            weights=rng.choice(["open", "closed", ""]), is_demo=bool(i % 3 == 0))
    # the entries are built (helpers.clone runs the refresh); now give them varied figures (heartbeat untouched)
    entries = list(BoardEntry.objects.filter(benchmark=benchmark))
    dates = [None, *sorted({e.finished_at for e in entries if e.finished_at})]
    for e in entries:
        if e.submission_id == template.pk:
            continue
        for mode in FIGURES:
            value = rng.choice([None, 25.0, 50.0, 62.5, rng.uniform(0, 100)])
            setattr(e, f"{mode}_acc", value)
            if value is not None:
                setattr(e, f"{mode}_lo", value - 5)
                setattr(e, f"{mode}_hi", value + 5)
        e.mcc = rng.choice([None, 0.0, 0.25, rng.uniform(-1, 1)])
        e.kcov = rng.choice([None, 50.0, rng.uniform(0, 100)])
        e.tool_eff = rng.choice([None, 80.0, rng.uniform(0, 100)])
        e.tokens = rng.choice([None, 500.0, rng.uniform(100, 900)])
        e.cost = rng.choice([None, 0.0, 0.001, rng.uniform(0.0001, 0.01)])
        e.headline_mode = rng.choice(["adaptive", "text"])
        e.finished_at = rng.choice(dates)
        e.correct = {m: "".join(rng.choice("10-") for _ in e.correct[m]) for m in e.correct}
        e.built_at = timezone.now()  # as a rebuilt entry has (ranks_build keeps the tests of unchanged ones)
    BoardEntry.objects.bulk_update(entries, ["text_acc", "text_lo", "text_hi", "adaptive_acc", "adaptive_lo",
                                             "adaptive_hi", "oracle_acc", "oracle_lo", "oracle_hi", "mcc", "kcov",
                                             "tool_eff", "tokens", "cost", "headline_mode", "finished_at", "correct",
                                             "built_at"])
    benchmark_results_bump(benchmark_id=benchmark.pk)  # the ranks and stored neighbour tests follow the edited entries ...
    helpers.refreshed(benchmark)  # ... once the board's refresh has run
    for i, (name, acc) in enumerate([("Paper A", 62.5), ("paper b", 50.0), ("Beta 3", 88.8), ("Paper D", None),
                                     ("Alpha 1", 25.0)]):
        figures = {"accuracy": {m: {"overall": [acc, acc]} for m in ("text", "adaptive")} if acc is not None else {},
                   "mode_selection": {"mcc": 0.25 if i % 2 else None},
                   "process": {"kcov": 50.0, "tool_eff": None if i == 2 else 80.0, "tokens": 500.0 if i else None}}
        ReportedResult.objects.create(benchmark=benchmark, model_name=name, organisation=["Org A", "paper org"][i % 2],
                                      weights=["open", "closed", ""][i % 3], position=i, figures=figures,
                                      citation="cited", source="paper")
    return benchmark


def _reference(benchmark, query: board.Query) -> board.Page:  # noqa: ANN001
    rows = board.filter_rows(selectors.board_rows(benchmark), query)
    page = board.paginate(board.sort_rows(rows, query.sort, query.desc), query.page)
    ids = [r.submission_id for r in page.rows if r.submission_id is not None]
    if query.sort not in board.TESTED:
        return page
    # Every neighbour test run here, on the vectors (the overview reads the stored ones where it can);
    # the whole-board ranks are the stored ones.
    rows = board.annotate_neighbours(page.rows, query.sort, selectors.board_vectors(ids))
    stored = selectors.standings(benchmark, query.sort).get(query.sort, {})
    rows = [replace(r, shared_rank=s.shared_rank, rank_low=s.rank_low, rank_high=s.rank_high)
            if (s := stored.get(r.submission_id)) else r for r in rows]
    return board.Page(rows, page.number, page.pages, page.total)


@pytest.mark.parametrize("sort", [c.key for c in board.COLUMNS])
def test_database_paging_matches_the_python_reference(mixed, sort) -> None:
    checked = 0
    for desc in (True, False):
        for filters in ({}, {"weights": "open"}, {"q": "ALPHA"}, {"demo": False}, {"reported": False},
                        {"weights": "closed", "q": "org"}):
            for page in (1, 2, 3, 9):
                query = board.Query(sort=sort, desc=desc, page=page, **filters)
                got, want = selectors.overview(mixed, query), _reference(mixed, query)
                assert (got.number, got.pages, got.total) == (want.number, want.pages, want.total), query
                assert got.rows == want.rows, query
                checked += len(got.rows)
    assert checked > 500
