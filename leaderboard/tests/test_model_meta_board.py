"""Model details on the board: the size and weights filters (in the database, in the URL, cached per variant),
the leaderboard as of a date, the progress chart's figures, and the details on the model page and in the files."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from evaluation import services
from evaluation.models import Submission
from leaderboard import board, selectors
from leaderboard.models import ReportedResult
from leaderboard.progress import MonthRow, Point, progress_rows
from leaderboard.tests import helpers

KEY = re.compile(r'<tr class="[^"]*"[^>]* data-key="([sr]\d+)"')


def keys(client, url: str, **headers) -> set[str]:  # noqa: ANN001
    resp = client.get(url, headers=headers)
    assert resp.status_code == 200
    return set(KEY.findall(resp.content.decode()))


@pytest.fixture
def sized(hand):  # noqa: ANN001, ANN201
    """Alpha 7B open, Beta 72B closed, Gamma size and weights not stated; two clones at the range edges."""
    ten, seventy = helpers.clone(hand.alpha, 2, prefix="Edge")
    for sub, params in ((hand.alpha, 7), (hand.beta, 72), (ten, 10), (seventy, 70)):
        Submission.objects.filter(pk=sub.pk).update(parameters_billions=params)
    hand.ten, hand.seventy = ten, seventy
    return hand


def s(*subs) -> set[str]:  # noqa: ANN002
    return {f"s{x.pk}" for x in subs}


def test_size_and_weights_filters_keep_only_their_rows(client, sized) -> None:
    b = sized
    assert keys(client, "/b/hand/") == s(b.alpha, b.beta, b.gamma, b.ten, b.seventy)  # cached whole page
    assert keys(client, "/b/hand/?size=lt10") == s(b.alpha)
    assert keys(client, "/b/hand/?size=10-70") == s(b.ten, b.seventy)  # 10B and 70B are both in the middle
    assert keys(client, "/b/hand/?size=gt70") == s(b.beta)
    assert keys(client, "/b/hand/?size=unknown") == s(b.gamma)
    # with the weights filter: Alpha is open, so it leaves the closed view
    assert keys(client, "/b/hand/?size=lt10&weights=closed") == set()
    assert keys(client, "/b/hand/?weights=open") == s(b.alpha, b.seventy)  # the clones alternate closed, open
    # the htmx fragment is its own cache entry per variant too
    assert keys(client, "/b/hand/?size=gt70", HX_Request="true") == s(b.beta)
    assert keys(client, "/b/hand/", HX_Request="true") == s(b.alpha, b.beta, b.gamma, b.ten, b.seventy)


def test_the_filter_form_and_the_sort_links_carry_the_size(client, sized) -> None:
    page = client.get("/b/hand/?size=gt70").content.decode()
    assert '<option value="gt70" selected>over 70B</option>' in page
    assert 'href="/b/hand/?sort=text&amp;size=gt70"' in page  # sorting keeps the filter


@pytest.mark.parametrize("size", ["", *board.SIZES])
def test_the_database_filter_equals_the_python_one(sized, size) -> None:
    ReportedResult.objects.create(benchmark=sized.benchmark, model_name="Paper model", citation="x",
                                  figures={"accuracy": {"adaptive": {"overall": [50.0, 51.0]}}})
    query = board.Query(size=size)
    expected = [r.key for r in board.sort_rows(board.filter_rows(selectors.board_rows(sized.benchmark), query),
                                               query.sort, query.desc)]
    assert [r.key for r in selectors.overview(sized.benchmark, query).rows] == expected
    # reported rows state no size: they are "unknown" and nothing else
    assert any(k.startswith("r") for k in expected) == (size in ("", "unknown"))


def test_an_edited_size_moves_the_row_at_once(client, sized) -> None:
    assert keys(client, "/b/hand/?size=unknown") == s(sized.gamma)
    services.submission_metadata_update(submission=Submission.objects.get(pk=sized.gamma.pk), parameters_billions=3.0)
    assert keys(client, "/b/hand/?size=unknown") == set()
    assert keys(client, "/b/hand/?size=lt10") == s(sized.alpha, sized.gamma)


# ------------------------------------------------------------------------------------ as of a date


@pytest.fixture
def dated(hand):  # noqa: ANN001, ANN201
    """Alpha first scored 10 May, Beta at the last second of 30 June (re-scored in August), Gamma at 1 July 00:00."""
    when = {hand.alpha: datetime(2026, 5, 10, 12, 0, tzinfo=UTC),
            hand.beta: datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC),
            hand.gamma: datetime(2026, 7, 1, 0, 0, tzinfo=UTC)}
    for sub, first in when.items():
        Submission.objects.filter(pk=sub.pk).update(first_finished_at=first)
    Submission.objects.filter(pk=hand.beta.pk).update(finished_at=datetime(2026, 8, 2, tzinfo=UTC))
    hand.reported = ReportedResult.objects.create(benchmark=hand.benchmark, model_name="Paper model", citation="x")
    # As leaderboard.reported's import does: a reported row is a change to the public results, and the board's
    # refresh (the worker's) builds it into the page the readers read.
    services.benchmark_results_bump(benchmark_id=hand.benchmark.pk)
    helpers.refreshed(hand.benchmark)
    return hand


def test_the_board_as_of_a_date_has_the_rows_finished_by_its_end(client, dated) -> None:
    b = dated
    assert keys(client, "/b/hand/") == s(b.alpha, b.beta, b.gamma) | {f"r{b.reported.pk}"}
    page = client.get("/b/hand/?as_of=2026-06-30").content.decode()
    assert set(KEY.findall(page)) == s(b.alpha, b.beta)  # Beta finished in the last second of the day
    assert "<strong>As of 2026-06-30</strong>" in page
    assert 'href="/b/hand/" id="current-board"' in page
    assert keys(client, "/b/hand/?as_of=2026-06-29") == s(b.alpha)
    assert keys(client, "/b/hand/?as_of=2026-07-01") == s(b.alpha, b.beta, b.gamma)  # Gamma at 00:00 that day
    empty = client.get("/b/hand/?as_of=2026-05-09").content.decode()
    assert not KEY.findall(empty) and "No public results match these filters as of 2026-05-09" in empty


def test_the_as_of_board_keeps_its_filters_and_a_bad_date_says_so(client, dated) -> None:
    page = client.get("/b/hand/?as_of=2026-06-30&weights=closed").content.decode()
    assert set(KEY.findall(page)) == s(dated.beta)
    assert 'href="/b/hand/?weights=closed" id="current-board"' in page  # today's board, same filter
    assert 'href="/b/hand/?sort=text&amp;weights=closed&amp;as_of=2026-06-30"' in page  # sorting stays as of
    bad = client.get("/b/hand/?as_of=2026-02-30").content.decode()
    assert '"2026-02-30" is not a date (YYYY-MM-DD), so this is the current board.' in bad
    assert len(KEY.findall(bad)) == 4


def test_an_unpublished_row_is_not_on_past_boards_either(client, dated) -> None:
    services.submission_set_public(submission=dated.alpha, public=False)
    assert keys(client, "/b/hand/?as_of=2026-06-30") == s(dated.beta)


# ------------------------------------------------------------------------------------ progress over time


def test_progress_rows_by_hand() -> None:
    points = [
        Point(datetime(2026, 1, 5, tzinfo=UTC), "open", 40.0, "A"),
        Point(datetime(2026, 1, 20, tzinfo=UTC), "closed", 50.0, "B"),
        Point(datetime(2026, 3, 2, tzinfo=UTC), "open", 45.0, "C"),
        Point(datetime(2026, 3, 15, tzinfo=UTC), "closed", 48.0, "D"),
        Point(datetime(2026, 3, 20, tzinfo=UTC), "", 60.0, "E"),
        # 01:00 on 1 April in UTC+2 is still 31 March in UTC; a tie with C's month best keeps C
        Point(datetime(2026, 4, 1, 1, 0, tzinfo=timezone(timedelta(hours=2))), "open", 45.0, "F"),
    ]
    assert progress_rows(points) == [
        MonthRow("2026-01", "all", 2, 50.0, "B", 50.0, "B"),
        MonthRow("2026-03", "all", 4, 60.0, "E", 60.0, "E"),
        MonthRow("2026-01", "open", 1, 40.0, "A", 40.0, "A"),
        MonthRow("2026-03", "open", 2, 45.0, "C", 45.0, "C"),
        MonthRow("2026-01", "closed", 1, 50.0, "B", 50.0, "B"),
        MonthRow("2026-03", "closed", 1, 48.0, "D", 50.0, "B"),
    ]
    # one kind of weights only: a single line
    assert {r.group for r in progress_rows([p for p in points if p.weights != "closed"])} == {"all"}


def test_the_progress_tab_charts_the_hand_board(client, dated) -> None:
    # headline accuracies over the eight non-aux samples: Alpha adaptive 6/8, Beta adaptive 3/8, Gamma text 4/8
    page = client.get("/b/hand/progress/").content.decode()
    chart = json.loads(re.search(r'<script id="progress-chart-data" type="application/json">(.*?)</script>',
                                 page, re.S).group(1))
    lines = {t["name"]: (t["x"], t["y"]) for t in chart["data"]}
    assert lines == {
        "All models": (["2026-05-01", "2026-06-01", "2026-07-01"], [75.0, 75.0, 75.0]),
        "Open weights": (["2026-05-01"], [75.0]),
        "Closed weights": (["2026-06-01"], [37.5]),
    }
    months = re.findall(r'<tr data-group="all" data-month="([\d-]+)">.*?<td class="num best">([\d.]+)</td>', page, re.S)
    assert months == [("2026-05", "75.0"), ("2026-06", "37.5"), ("2026-07", "50.0")]
    assert "Paper model" not in page  # reported rows carry no date


def test_the_progress_tab_reads_the_months_its_refresh_stored(client, dated, monkeypatch) -> None:
    """The board's refresh stores each month's count and best (progress_store); the page reads them, equal to the
    rows counted from every point, after a change refreshed by what changed too; while the build is behind the
    change, the page counts the points (the month's best that left the board is gone at once)."""
    from leaderboard import progress_store, services as board_services

    b = dated
    counted_again: list = []

    def summary_update(benchmark, last, months):  # noqa: ANN001, ANN202 - the refresh's own, its months noted
        counted_again.append(months)
        return progress_store.summary_update(benchmark, last, months)

    monkeypatch.setattr(board_services, "summary_update", summary_update)
    counted = progress_rows(progress_store.points(b.benchmark))
    assert progress_store.stored_rows(b.benchmark) == counted and len(counted) == 5
    services.submission_set_public(submission=b.alpha, public=False)  # May's best and the record holder
    b.benchmark.refresh_from_db()
    assert progress_store.stored_rows(b.benchmark) is None  # behind the change
    page = client.get("/b/hand/progress/").content.decode()
    assert 'data-month="2026-05"' not in page and "Alpha" not in page
    helpers.refreshed(b.benchmark)  # the months Alpha was in counted again, the others kept
    b.benchmark.refresh_from_db()
    stored = progress_store.stored_rows(b.benchmark)
    assert stored == progress_rows(progress_store.points(b.benchmark)) and stored
    assert counted_again == [{"2026-05"}]  # Alpha's month alone
    assert [r.month for r in stored if r.group == "all"] == ["2026-06", "2026-07"]
    assert stored[-1].record_model == b.gamma.model_name  # Gamma's 50 % beats Beta's 37.5 % now


# ------------------------------------------------------------------------------------ details shown


def test_details_show_on_the_model_page_and_in_the_files(client, sized) -> None:
    Submission.objects.filter(pk=sized.alpha.pk).update(
        license="Apache-2.0", release_date=date(2025, 2, 1), model_url="https://example.org/code",
        paper_url="https://arxiv.org/abs/2502.00001", parameters_billions=1.5)
    page = client.get(f"/b/hand/m/{sized.alpha.pk}/").content.decode()
    assert '<dd id="model-parameters">1.5B</dd>' in page and '<dd id="model-license">Apache-2.0</dd>' in page
    assert '<dd id="model-release">2025-02-01</dd>' in page and 'href="https://arxiv.org/abs/2502.00001"' in page
    assert 'id="edit-details"' not in page  # anonymous
    client.force_login(helpers.owner())
    assert f'href="/submissions/{sized.alpha.pk}/edit/" id="edit-details"' in client.get(
        f"/b/hand/m/{sized.alpha.pk}/").content.decode()
    client.logout()
    rows = {r["submission_id"]: r for r in client.get("/api/v1/benchmarks/hand/leaderboard/").json()["rows"]}
    alpha = rows[sized.alpha.pk]
    assert (alpha["parameters_billions"], alpha["license"], alpha["release_date"]) == (1.5, "Apache-2.0", "2025-02-01")
    assert (alpha["model_url"], alpha["paper_url"]) == ("https://example.org/code", "https://arxiv.org/abs/2502.00001")
    assert rows[sized.gamma.pk]["parameters_billions"] is None
    csv_text = client.get("/b/hand/leaderboard.csv").content.decode()
    # the details' columns, in this order (later columns are appended after them: provenance, digests)
    assert ",parameters_billions,license,release_date,model_url,paper_url," in csv_text.splitlines()[0] + ","
    assert "1.5,Apache-2.0,2025-02-01,https://example.org/code,https://arxiv.org/abs/2502.00001" in csv_text


def test_the_months_recount_in_sql_equals_the_count_of_the_points(hand) -> None:
    """``month_summary`` (the refresh's recount of a month, by SQL) equals ``summary_of`` over the month's points,
    on boards drawn with ties in score and in first-scored time, board orders that differ from the submissions' ids,
    every kind of weights and entries without a headline accuracy. The draws are written to the submissions and
    entries directly, so the entries' copies of the first-scored time and weights are brought up as a refresh that
    compares the whole board does (``entry_copies_sync``); ``points`` reads the submissions themselves."""
    import random

    from leaderboard import progress, progress_store
    from leaderboard.models import BoardEntry
    from leaderboard.services import entry_copies_sync

    subs = [hand.alpha, hand.beta, hand.gamma, *helpers.clone(hand.alpha, 5, prefix="Tie")]
    entries = {e.submission_id: e for e in BoardEntry.objects.filter(submission__in=subs)}
    rng = random.Random(37)
    months = ["2026-05", "2026-06"]
    ties_seen = 0
    for _ in range(12):
        for sub in subs:
            Submission.objects.filter(pk=sub.pk).update(
                weights=rng.choice(["open", "closed", ""]),
                first_finished_at=datetime(2026, rng.choice([5, 6]), 1 + rng.choice([0, 0, 29]), tzinfo=UTC))
            mode = rng.choice(["text", "adaptive", "oracle", "oracle", ""])
            accs = {"text_acc": rng.choice([50.0, 62.5]), "adaptive_acc": rng.choice([50.0, 75.0, None]),
                    "oracle_acc": rng.choice([62.5, 75.0])}
            BoardEntry.objects.filter(pk=entries[sub.pk].pk).update(  # as entry_fields writes them
                headline_mode=mode, finished_at=datetime(2026, 8, 1 + rng.randrange(3), tzinfo=UTC), **accs,
                headline_acc=accs.get(f"{mode}_acc"))
        assert entry_copies_sync(hand.benchmark) >= 1
        found = progress_store.points(hand.benchmark, months)
        expected = progress_store.summary_of(found)
        best = {(progress.month_of(p.when), p.score) for p in found if p.score == expected[progress.month_of(p.when)]["all"][1]}
        tied = [p for p in found if (progress.month_of(p.when), p.score) in best]
        ties_seen += len(tied) - len({(p.when, p.score) for p in tied})  # the month's best held twice at one time
        assert {m: progress_store.month_summary(hand.benchmark, m) for m in months} == {
            m: expected.get(m, {}) for m in months}
    assert ties_seen >= 5  # the draws tied for a month's best in score and time, so the board's order decided


def test_the_entries_keep_the_first_scored_time_and_weights_the_months_are_counted_by(dated, monkeypatch) -> None:
    """A refresh counts a changed month by the entries' own copies of their submission's first-scored time and
    weights (``BoardEntry.first_at``, ``weights``), not through the submissions: after a details edit, a re-score
    (the first score's time stays, the finish moves to today) and a new submission, each refreshed by what changed,
    the stored months equal the months counted from the submissions, and each entry's copies its submission's."""
    from django.db import connection
    from django.db.models.functions import Coalesce
    from django.test.utils import CaptureQueriesContext

    from evaluation import pipeline
    from evaluation.derived import derived_read
    from leaderboard import progress_store
    from leaderboard.models import BoardEntry

    b = dated

    def checked() -> None:
        b.benchmark.refresh_from_db()
        stored = derived_read(b.benchmark, "board", part="progress")
        assert stored.version == b.benchmark.results_version
        assert stored.payload == progress_store.summary_of(progress_store.points(b.benchmark))
        kept = BoardEntry.objects.filter(benchmark=b.benchmark).values_list(
            "first_at", "first_month", "weights", Coalesce("submission__first_finished_at", "submission__finished_at"),
            "submission__weights")
        assert kept and all((first, month, weights) == (when, when.year * 100 + when.month, of)
                            for first, month, weights, when, of in kept), list(kept)

    checked()
    counted_in: list[str] = []
    summary = progress_store.month_summary

    def month_summary(benchmark, month):  # noqa: ANN001, ANN202 - the refresh's own, its months noted
        counted_in.append(month)
        with CaptureQueriesContext(connection) as queries:
            out = summary(benchmark, month)
        assert not [q["sql"] for q in queries if "evaluation_submission" in q["sql"]]  # the entries' copies alone
        return out

    monkeypatch.setattr(progress_store, "month_summary", month_summary)
    services.submission_metadata_update(submission=b.gamma, weights="closed")  # July's only entry, now closed
    helpers.refreshed(b.benchmark)
    checked()
    assert counted_in == ["2026-07"]
    services.submission_rescore(submission=b.beta, enqueue=False)  # June's, finished again today
    helpers.refreshed(b.benchmark)
    checked()
    pipeline.submission_process_sync(submission=b.beta)
    helpers.refreshed(b.benchmark)
    checked()
    assert counted_in[1:] == ["2026-06", "2026-06"]  # still June's: its first score's month
    helpers.submit(b.benchmark, helpers.ModelSpec("Delta", {"text": helpers.UIDS}, weights="open"))
    checked()
    assert len(counted_in) == 4  # this month's
