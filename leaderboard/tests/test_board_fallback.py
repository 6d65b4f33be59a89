"""The board's address opens on another tab only when the overview truly has nothing: never while its build is
behind (the first publish's router pool built before the board showed the routers tab as current, without the row)."""

from __future__ import annotations

import pytest

from leaderboard.tests import helpers
from routers.services import pool_refresh


@pytest.mark.django_db
def test_a_board_behind_its_results_opens_on_the_overview_saying_updating(tmp_path, client) -> None:
    benchmark = helpers.make_benchmark(tmp_path / "b")
    helpers.submit(benchmark, helpers.ALPHA, refresh=False)  # published; no refresh has run yet
    pool_refresh(benchmark_id=benchmark.pk)  # the router pool's refresh ran first: the routers tab has data

    html = client.get(f"/b/{benchmark.slug}/").content.decode()

    assert 'id="board-updating"' in html
    assert 'id="routers-table"' not in html

    helpers.refreshed(benchmark)  # the board's own refresh: now the overview holds the row, current
    html = client.get(f"/b/{benchmark.slug}/").content.decode()
    assert 'id="board-updating"' not in html
    assert helpers.ALPHA.name in html and 'id="routers-table"' not in html
