"""Honest ranks in headless Chromium: the overview's ranks, tie groups and rank intervals, the note
on how to read them, and the model page's ranks, against the library on the hand-made board of
test_ranks.py. Here the board is built by the ``board_refresh`` task, sent when each submission finished."""

from __future__ import annotations

import os

import pytest

from leaderboard.tests import helpers
from leaderboard.tests.test_ranks import SPECS, _library

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(live_server, transactional_db, chromium, tmp_path):  # noqa: ANN201

    benchmark = helpers.make_benchmark(tmp_path / "bench")
    subs = {name: helpers.submit(benchmark, helpers.ModelSpec(name, {"adaptive": tuple(right), "text": ("s1",)}))
            for name, right in SPECS.items()}
    pg = chromium.new_page()
    pg.base = live_server.url  # type: ignore[attr-defined]
    pg.subs = subs  # type: ignore[attr-defined]
    yield pg


def test_ranks_tie_groups_and_intervals_are_shown_as_the_library_computes_them(page) -> None:
    from evaluation.models import DerivedState

    assert DerivedState.objects.filter(kind="board").count() == 1  # built by the task sent on each finish
    page.goto(f"{page.base}/b/hand/")
    order = page.locator("#overview-table tbody th.model > a").all_inner_texts()
    shared, intervals, _ = _library(order)
    cells = page.locator("#overview-table tbody td.rank")
    assert cells.all_inner_texts() == [f"{r}\n{lo}–{hi}" for r, (lo, hi) in zip(shared, intervals)]
    assert shared == [1, 1, 3, 3]
    notes = page.locator("#overview-table tbody .note").all_inner_texts()
    assert "differs significantly" in notes[1] and "p = 0.031" in notes[1]  # Low against Next: 2/64
    # The note on how to read them opens.
    assert page.locator("#how-to-read p").first.is_hidden()
    page.click("#how-to-read summary")
    assert page.locator("#how-to-read p").first.is_visible()
    assert "bootstrap" in page.inner_text("#how-to-read")
    # The model page gives the same.
    page.goto(f"{page.base}/b/hand/m/{page.subs['Low'].pk}/")
    row = page.locator('#model-ranks tr[data-metric="adaptive"] td')
    i = order.index("Low")
    assert row.nth(0).inner_text() == str(shared[i])
    assert row.nth(1).inner_text() == f"{intervals[i][0]}–{intervals[i][1]}"
