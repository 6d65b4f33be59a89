"""A page of each wide tab read from its stored index (leaderboard.wide_tabs.table_page: a range of the tab's order
in ``TabIndexRow``, the marks from the build's payload) shows what the whole table computed from scratch shows
(every public row's results read, the table ordered and marked over all of them, then paged): the same rows in
the same order, the same figures and ▲/△ marks, the same pager. On a board of a few hundred entries (clones,
so ties abound, and the authors' reported rows sitting in the Mode selection tab's order by MCC), after the
board's refresh has updated the index by a few changes; pages 1, 2, one past the middle (read backwards) and the
last, in every sort the Tools tab offers; and a submission that leaves the board before the refresh has run is
on no page at once. Runs on SQLite, and on PostgreSQL with DATABASE_URL set.
"""

from __future__ import annotations

import random

import pytest
from django.core.files.base import ContentFile

from annotation.models import Benchmark
from evaluation import pipeline
from evaluation.models import Submission
from evaluation.services import submission_delete, submission_rescore, submission_set_public
from leaderboard import selectors, wide_tabs
from leaderboard.models import ReportedResult
from leaderboard.services import board_refresh
from leaderboard.tests import helpers
from leaderboard.tests.test_board_refresh_sequence import _spec
from leaderboard.tools_tab import COLUMNS

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _board(tmp_path) -> Benchmark:  # noqa: ANN001
    rng = random.Random(11)
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    scored = [helpers.submit(benchmark, _spec(rng, f"Model {i}"), refresh=False) for i in range(6)]
    for i, sub in enumerate(scored):
        helpers.clone(sub, 45, prefix=f"Clone {i}")
    for i, mcc in enumerate([0.4, None, -0.2]):  # the authors' rows: in the order by MCC, last in the others
        ReportedResult.objects.create(
            benchmark=benchmark, model_name=f"Paper {i}", position=i, citation="cited", source="paper",
            figures={"accuracy": {m: {"overall": [50.0 + i, 60.0 + i]} for m in ("text", "adaptive")},
                     "mode_selection": {"mcc": mcc}, "process": {"kcov": 40.0 + 10 * i, "tokens": 300.0}})
    board_refresh(benchmark_id=benchmark.pk)
    # changes the refresh applies to the index by what changed: new results, an unpublish, a deletion
    for sub in scored[:2]:
        submission_rescore(submission=sub, enqueue=False)
        sub.refresh_from_db()
        sub.file.save("p.jsonl", ContentFile(helpers.jsonl(helpers.prediction_lines(_spec(rng, sub.model_name)))))
        pipeline.submission_process_sync(submission=sub)
    submission_set_public(submission=scored[3], public=False)
    submission_delete(submission=scored[4])
    benchmark.refresh_from_db()
    board_refresh(benchmark_id=benchmark.pk)
    return benchmark


WHOLE: dict[str, list] = {}  # each tab's whole table, computed once (the Tools tab's draws a bootstrap per row)


def _scratch(benchmark: Benchmark, tab: str, params: dict, monkeypatch) -> tuple:  # noqa: ANN001
    """The page as computed from the whole table (the path of a build without the index)."""
    table = wide_tabs._table

    def whole(benchmark, tab, sources, intervals=True):  # noqa: ANN001, ANN202
        if tab not in WHOLE:
            WHOLE[tab] = table(benchmark, tab, sources, intervals)
        return WHOLE[tab]

    with monkeypatch.context() as m:
        m.setattr(selectors, "board_table_index", lambda benchmark, tab: None)
        m.setattr(wide_tabs, "_table", whole)
        rows, pager, _ = wide_tabs.table_page(benchmark, tab, params, "/t/")
    return rows, pager


def test_each_page_of_each_wide_tab_shows_what_the_whole_table_computed_from_scratch_shows(tmp_path,
                                                                                           monkeypatch) -> None:
    benchmark = _board(tmp_path)
    WHOLE.clear()
    sorts = [{}] + [{"sort": key, "desc": desc} for _, key, _, _ in COLUMNS for desc in ("1", "0")]
    checked = 0
    for tab in wide_tabs.INDEXED:
        assert selectors.board_table_index(benchmark, tab) is not None, tab  # the index is read, not the fallback
        for params in sorts if tab in wide_tabs.SORTED else [{}]:
            whole, _ = _scratch(benchmark, tab, {**params, "page": "1"}, monkeypatch)
            last = int((_scratch(benchmark, tab, {**params, "page": "9999"}, monkeypatch)[1]["pages"] or
                        [{"number": 1}])[-1]["number"])
            for page in sorted({1, 2, last // 2 + 1, last}):
                query = {**params, "page": str(page)}
                rows, pager, _ = wide_tabs.table_page(benchmark, tab, query, "/t/")
                expected_rows, expected_pager = _scratch(benchmark, tab, query, monkeypatch)
                assert pager == expected_pager, (tab, query)
                assert [(r.source.key, getattr(r, "mode", "")) for r in rows] == [
                    (r.source.key, getattr(r, "mode", "")) for r in expected_rows], (tab, query)
                assert rows == expected_rows, (tab, query)  # every figure, interval and mark
                checked += 1
            assert last > 2 or tab in ("mode-selection", "tools"), (tab, last)  # pages read from both ends
    marked = [c.place for tab in ("domains", "process", "toolchains", "tools")
              for r in wide_tabs.table_page(benchmark, tab, {}, "/t/")[0] for c in r.cells]
    assert 1 in marked and 2 in marked  # the marks are shown, not only absent on both sides
    assert checked >= 5 * 4 + 20 * 2

    # A submission that leaves the board before the refresh has run leaves every page at once (the index is the
    # last build's; the page reads its rows' sources on the board now); the other rows stay where they were.
    before = {tab: wide_tabs.table_page(benchmark, tab, {}, "/t/")[0] for tab in wide_tabs.INDEXED}
    keys = {next(r.source.key for r in rows if not r.source.reported) for rows in before.values()}
    for key in keys:
        submission_set_public(submission=Submission.objects.get(pk=int(key[1:])), public=False)
    for tab, rows in before.items():
        now = wide_tabs.table_page(benchmark, tab, {}, "/t/")[0]
        assert [wide_tabs._row_id(r) for r in now] == [wide_tabs._row_id(r) for r in rows if r.source.key not in keys]
        assert len(now) < len(rows), tab
