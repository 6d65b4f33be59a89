"""The overview's default view (unfiltered, a ranked column in descending order: ``selectors._overview_built``)
reads the board's build by index, so an uncached page costs the same on a board of 100 or 100,000 entries:
the count and cost bounds the refresh stored (``BoardCounts``), the page's rows by their stored position.
``test_overview_paging.py`` holds its rows, order, reported rows and notes to the Python reference."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db


def test_the_default_overview_page_reads_no_aggregate_over_the_entries(client, hand) -> None:
    """Fails if the page counts the board or bounds its costs at read time (an aggregate over every entry)."""
    helpers.clone(hand.alpha, 60)
    cache.clear()
    with CaptureQueriesContext(connection) as ctx:
        html = client.get("/b/hand/").content.decode()
    assert "Clone 0059" in html or "Clone 0000" in html
    entries = [q["sql"] for q in ctx.captured_queries if '"leaderboard_boardentry"' in q["sql"]]
    assert entries, "the page reads its entries"
    assert not [sql for sql in entries if "COUNT(" in sql or "MIN(" in sql or "MAX(" in sql], entries
    # each read names its rows or stops after a page
    assert all(" IN (" in sql or "LIMIT" in sql for sql in entries), entries


def test_a_row_unpublished_since_the_build_leaves_the_default_page_at_once(client, hand) -> None:
    """The page is the build's; what must hold at once is applied when it is read (no refresh has run here:
    a test's transaction never commits, so the bump's refresh is not sent)."""
    from evaluation.services import submission_set_public

    clones = helpers.clone(hand.alpha, 5)
    submission_set_public(submission=clones[2], public=False)
    cache.clear()
    html = client.get("/b/hand/").content.decode()
    assert "Clone 0001" in html and "Clone 0002" not in html
