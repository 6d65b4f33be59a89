"""No N+1: the same number of queries with 10 and with 100 public submissions."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard import board, selectors
from leaderboard.models import BoardEntry
from leaderboard.pareto import pareto_view
from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.every_path]  # query counts: each engine batches its own way


@pytest.fixture
def base(db, tmp_path):  # noqa: ANN201
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    return helpers.submit(benchmark, helpers.ALPHA)


def _count(fn) -> int:  # noqa: ANN001
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


def _counts(template, extra: int) -> dict[str, int]:  # noqa: ANN001
    helpers.clone(template, extra)
    b = template.benchmark
    first_sync = _count(lambda: selectors.board_rows(b))  # builds every missing entry
    return {
        "first sync": first_sync,
        "rows": _count(lambda: selectors.board_rows(b)),
        "overview": _count(lambda: selectors.overview(b, board.Query(sort="adaptive"))),
        "tabs": _count(lambda: (lambda s: (selectors.domain_table(b, s), selectors.mode_selection(s),
                                           selectors.process_table(s), pareto_view(s, "adaptive", "usd")))(
            selectors.tab_sources(b))),
        "leaders": _count(lambda: selectors.leaders(b)),
    }


def test_query_counts_do_not_grow_with_the_number_of_submissions(base) -> None:
    with_10 = _counts(base, 9)
    with_100 = _counts(base, 90)
    # Building entries is one read of the submissions and one of their rows per 200 submissions; only
    # SQLite's 999-parameter limit splits the bulk insert into batches of 999 // (columns) rows, ~29
    # (none per row): the 90 new entries take that many more batches.
    columns = len([f for f in BoardEntry._meta.concrete_fields if not f.primary_key])
    assert with_100.pop("first sync") - with_10.pop("first sync") <= -(-90 // (999 // columns))
    assert with_100 == with_10
    # the page's rows, their stored ranks and the ranks' shifts recorded since the build (rank_read: one small
    # query, in place of a change rewriting every row below it), the reported rows, the counts
    assert with_10["overview"] <= 7


def test_pages_make_as_many_queries_with_100_submissions_as_with_10(client, base) -> None:
    def page_queries() -> list[int]:
        out = []
        for url in ("/b/hand/", "/b/hand/domains/", "/b/hand/cost/", "/b/hand/leaderboard.csv",
                    "/api/v1/benchmarks/hand/leaderboard/", "/"):
            from django.core.cache import cache

            cache.clear()  # uncached: the selectors run every time
            with CaptureQueriesContext(connection) as ctx:
                assert client.get(url).status_code == 200
            out.append(len(ctx.captured_queries))
        return out

    helpers.clone(base, 9)
    client.get("/b/hand/")  # first sync
    at_10 = page_queries()
    helpers.clone(base, 90, prefix="More")
    client.get("/b/hand/")
    assert page_queries() == at_10
