"""The wide tabs (leaderboard/paging.py, ``tabs.page_rows``) show 50 rows a page, like the overview: a
page's size does not grow with the board, every row is on some page, and ``page`` is a parameter the
cache key knows (one key per page number, however it is spelled)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # its file starts first (conftest.py)

# (tab, the table whose rows are paged, rows per public submission: one per mode shown)
WIDE = [("domains", "domain-table", 3), ("mode-selection", "mode-selection-table", 1),
        ("process", "process-table", 1), ("toolchains", "toolchain-table", 2), ("cost", "pareto-table", 1),
        ("tools", "tools-table", 1)]


def _table_rows(html: str, table_id: str) -> list[str]:
    body = html[html.index(f'id="{table_id}"'):]
    body = body[:body.index("</table>")]
    return re.findall(r'<tr (?:class="[^"]*" )?data-(?:key|submission)="([^"]+)"(?: data-mode="(\w+)")?', body) or \
        re.findall(r"<tr[ >]", body.split("<tbody>")[1])


def test_a_wide_tab_shows_50_rows_a_page_and_every_row_on_some_page(client, hand) -> None:
    """Every wide tab, on one board (one board's build for the six tabs: the suite's time)."""
    before = {tab: len(_table_rows(client.get(f"/b/hand/{tab}/").content.decode(), table_id))
              for tab, table_id, _ in WIDE}
    helpers.clone(hand.alpha, 60)
    for tab, table_id, per in WIDE:
        total = before[tab] + 60 * per
        first = client.get(f"/b/hand/{tab}/").content.decode()
        rows = _table_rows(first, table_id)
        assert len(rows) == 50, tab
        assert 'class="pager"' in first and f"of {total}" in first, tab
        seen = list(rows)
        for n in range(2, -(-total // 50) + 1):
            page = client.get(f"/b/hand/{tab}/?page={n}").content.decode()
            assert f'<span aria-current="page">{n}</span>' in page, (tab, n)
            seen += _table_rows(page, table_id)
        assert len(seen) == total and len(set(seen)) == total, tab  # every row once
        assert _table_rows(client.get(f"/b/hand/{tab}/?page=999").content.decode(), table_id)[-1] == seen[-1], tab


def test_the_page_of_a_wide_tab_is_the_same_size_with_more_entries(client, hand) -> None:
    helpers.clone(hand.alpha, 60)
    at_60 = len(client.get("/b/hand/domains/").content)
    helpers.clone(hand.alpha, 90, prefix="More")
    at_150 = len(client.get("/b/hand/domains/").content)
    assert abs(at_150 - at_60) < 500  # the page links and counts, not 90 models x 3 modes of rows


def test_the_routers_tab_is_paged_and_keeps_its_sort_in_the_page_links(client, hand) -> None:
    from leaderboard.paging import page_rows

    rows, pager = page_rows(list(range(120)), {"sort": "cost", "desc": "0", "page": "3"}, "/b/hand/routers/")
    assert rows == list(range(100, 120))
    assert [p.get("number") for p in pager["pages"]] == [1, 2, 3]
    assert pager["pages"][0]["url"] == "/b/hand/routers/?sort=cost&desc=0"
    assert pager["pages"][1]["url"] == "/b/hand/routers/?sort=cost&desc=0&page=2"
    assert 'id="routers-table"' in client.get("/b/hand/routers/?page=2").content.decode()


def _queries(client, url: str) -> int:  # noqa: ANN001
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_page_is_a_known_parameter_with_one_key_per_page(client, hand) -> None:
    helpers.clone(hand.alpha, 60)
    for tab in ("domains", "process", "routers"):
        built = _queries(client, f"/b/hand/{tab}/")
        cached = _queries(client, f"/b/hand/{tab}/")  # 1; the routers tab adds its routers' stamp
        assert cached < built, tab
        for same in ("?page=1", "?page=x", "?page=-4", "?page=1&x=9"):
            assert _queries(client, f"/b/hand/{tab}/{same}") == cached, (tab, same)  # page 1, from the cache
        assert _queries(client, f"/b/hand/{tab}/?page=2") > cached, tab  # another page
        assert _queries(client, f"/b/hand/{tab}/?page=02") == cached, tab


@pytest.mark.parametrize("tab", ["domains", "mode-selection", "process", "toolchains", "cost", "tools"])
def test_the_parts_of_the_results_a_tab_reads_give_the_table_of_the_whole_results(hand, tab, monkeypatch) -> None:
    """A wide tab reads only its parts of each submission's results (``wide_tabs.TAB_PARTS``, extracted by the
    database); its table is the one the whole results give, so no figure goes missing from the page."""
    from django.http import QueryDict

    from leaderboard import selectors, tabs

    helpers.clone(hand.alpha, 3)
    params = QueryDict("mode=text&unit=tokens") if tab == "cost" else QueryDict()
    parts_context = tabs.tab_context(hand.benchmark, tab, params)
    whole = selectors.tab_sources
    monkeypatch.setattr(selectors, "tab_sources", lambda b, *a, **k: whole(b))  # the whole results
    whole_context = tabs.tab_context(hand.benchmark, tab, params)
    def shown(context: dict) -> object:  # what the page shows, the rows' sources by key
        if "pareto" in context:
            view = context["pareto"]
            return view.points, view.frontier, view.baselines, view.figure, view.unplotted
        rows = [(r.source.key, *[v for k, v in vars(r).items() if k != "source"]) if hasattr(r, "__dict__") else r
                for r in context["rows"]]
        return rows, [(src.key, figs) for src, figs in context.get("aux", [])]

    assert shown(parts_context) == shown(whole_context)
    assert shown(parts_context)[0]


def test_an_uncached_page_of_a_wide_tab_reads_its_own_rows_with_the_whole_boards_marks(client, hand,
                                                                                      monkeypatch) -> None:
    """An uncached page reads the results of its own rows' submissions only (leaderboard.wide_tabs: the order
    and the ▲/△ marks come with the board's build), so it costs the same on a board 100 times larger; its
    rows and marks are the whole table's. Fails if a page computes the whole table again. Every wide tab but
    the Cost & Pareto tab (test_pareto_store.py), on one board."""
    from django.core.cache import cache
    from django.http import QueryDict

    from leaderboard import selectors, tabs, wide_tabs

    helpers.clone(hand.alpha, 120)
    original = selectors.tab_sources
    read: list[int] = []

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        found = original(*args, **kwargs)
        read.append(sum(1 for s in found if not s.reported))
        return found

    for tab in ("domains", "mode-selection", "process", "toolchains", "tools"):
        monkeypatch.setattr(selectors, "tab_sources", original)
        sources = selectors.tab_sources(hand.benchmark, wide_tabs.TAB_PARTS[tab], domain_table=True)
        whole = wide_tabs._table(hand.benchmark, tab, sources)  # the whole board's table, over every source
        monkeypatch.setattr(selectors, "tab_sources", counting)
        for page in (1, 2):
            read.clear()
            cache.clear()
            assert client.get(f"/b/hand/{tab}/?page={page}").status_code == 200
            assert read and max(read) <= 50, (tab, read)  # the page's submissions, not the board's 123
            read.clear()
            rows = tabs.tab_context(hand.benchmark, tab, QueryDict(f"page={page}"))["rows"]
            expected = whole[(page - 1) * 50:page * 50]
            assert [wide_tabs._row_id(r) for r in rows] == [wide_tabs._row_id(r) for r in expected], (tab, page)
            places = [[c.place for c in getattr(r, "cells", ())] for r in rows]
            assert places == [[c.place for c in getattr(r, "cells", ())] for r in expected], (tab, page)
