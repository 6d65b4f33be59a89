"""The per-benchmark cache: served from cache, never stale after a submission changes, dropped on demand."""

from __future__ import annotations

import re
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation import pipeline, services
from evaluation.models import Submission
from evaluation.services import benchmark_results_bump
from leaderboard.tests import helpers

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # its file starts first (conftest.py)


def _queries(client, url: str, **headers: str) -> int:  # noqa: ANN001
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url, **headers).status_code == 200
    return len(ctx.captured_queries)


def test_a_cached_page_costs_one_query(client, hand) -> None:
    first = _queries(client, "/b/hand/")
    assert _queries(client, "/b/hand/") == 1 < first  # the benchmark with its results_version and builds
    assert _queries(client, "/b/hand/", HTTP_HX_REQUEST="true") == 1


@pytest.mark.parametrize("tab", ["", "domains/", "cost/"])
def test_an_unknown_parameter_is_no_new_page_to_build(client, hand, tab) -> None:
    first = _queries(client, f"/b/hand/{tab}?x={uuid.uuid4().hex}")
    assert _queries(client, f"/b/hand/{tab}?x={uuid.uuid4().hex}&y=1") == 1 < first  # the cached page
    assert _queries(client, f"/b/hand/{tab}?x={uuid.uuid4().hex}", HTTP_HX_REQUEST="true") == 1  # the fragment
    assert _queries(client, f"/b/hand/{tab}") == 1
    known = "sort=text" if not tab else "mode=text" if tab == "cost/" else None
    if known:  # a parameter the tab reads is another page
        assert _queries(client, f"/b/hand/{tab}?{known}&x=1") > 1


def _row_keys(client) -> set[str]:  # noqa: ANN001
    import re

    return set(re.findall(r'<tr [^>]*data-key="(s\d+)"', client.get("/b/hand/").content.decode()))


def test_a_cached_request_makes_as_many_queries_with_1000_submissions_as_with_10(client, hand) -> None:
    def cached_queries() -> tuple[int, int]:
        client.get("/b/hand/")  # builds (and caches) the page
        return _queries(client, "/b/hand/"), _queries(client, "/b/hand/", HTTP_HX_REQUEST="true")

    helpers.clone(hand.alpha, 10 - 3)
    assert Submission.objects.filter(benchmark=hand.benchmark, is_public=True, status="done").count() == 10
    at_10 = cached_queries()
    helpers.clone(hand.alpha, 1000 - 10, prefix="More")
    at_1000 = cached_queries()
    assert len(_row_keys(client)) == 50  # the first page of the 1,000, from the cache
    assert at_1000 == at_10 == (1, 1)


# Each of these fails if its service stops moving the benchmark's results_version (the cache's key).

def test_a_finished_submission_shows_at_once(client, hand) -> None:
    before = _row_keys(client)
    delta = helpers.submit(hand.benchmark, helpers.ModelSpec("Delta", {"text": helpers.UIDS}))
    assert _row_keys(client) == before | {f"s{delta.pk}"}


def test_publishing_says_updating_at_once_and_shows_the_row_once_the_refresh_ran(client, hand) -> None:
    assert f"s{hand.private.pk}" not in _row_keys(client)
    assert 'id="board-updating"' not in client.get("/b/hand/").content.decode()
    services.submission_set_public(submission=hand.private, public=True)
    html = client.get("/b/hand/").content.decode()  # no worker has run: the last build, marked
    assert 'id="board-updating"' in html and f'data-key="s{hand.private.pk}"' not in html
    helpers.refreshed(hand.benchmark)  # what the worker does on the publish's commit
    html = client.get("/b/hand/").content.decode()
    assert 'id="board-updating"' not in html and f'data-key="s{hand.private.pk}"' in html


def test_unpublishing_hides_at_once(client, hand) -> None:
    assert f"s{hand.beta.pk}" in _row_keys(client)
    services.submission_set_public(submission=hand.beta, public=False)
    assert f"s{hand.beta.pk}" not in _row_keys(client)


def test_the_first_read_after_an_unpublish_takes_the_row_out_of_the_builds_cached_page(client, hand) -> None:
    """Just after an unpublish, before any refresh, the overview comes from the page its build left in the
    cache (no query reads the board's entries or ranks: nothing is sorted or tested again), without the row,
    the rows below it in place, and still so when the bare page is read again. Fails if the overview's page
    is cached by the results version (the board is read again) or its rows are not checked at read time."""
    helpers.clone(hand.alpha, 60, prefix="Row")  # two pages of 50
    helpers.refreshed(hand.benchmark)
    before = re.findall(r'<tr [^>]*data-key="(s\d+)"', client.get("/b/hand/").content.decode())
    assert len(before) == 50
    gone = Submission.objects.get(pk=int(before[1][1:]))
    services.submission_set_public(submission=gone, public=False)  # no worker: the build is behind
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        with CaptureQueriesContext(connection) as ctx:
            html = client.get("/b/hand/", **headers).content.decode()
        sql = [q["sql"] for q in ctx.captured_queries]
        assert not [q for q in sql if "leaderboard_boardentry" in q or "leaderboard_entryrank" in q], sql
        assert len(sql) <= 4, sql  # the benchmark, the page's rows on the board, the build's time, the upload link
        assert 'id="board-updating"' in html
        assert re.findall(r'<tr [^>]*data-key="(s\d+)"', html) == before[:1] + before[2:]
        assert gone.model_name not in html
    assert _queries(client, "/b/hand/") == 1  # then cached under the new version


def test_a_change_off_the_page_is_read_from_the_cached_page_without_rendering_it(client, hand) -> None:
    """An unpublish of a row on page 2: page 1's first read after it checks its rows (one query) and serves
    the HTML its build rendered, with the "Updating" notice. Fails if the overview's HTML is cached by the
    results version alone (it is rendered again: the build's time and the upload link are read)."""
    helpers.clone(hand.alpha, 60, prefix="Row")
    helpers.refreshed(hand.benchmark)
    services.submission_set_public(submission=hand.private, public=True)  # behind: the notice shows
    first = client.get("/b/hand/").content.decode()
    assert 'id="board-updating"' in first
    second_page = re.findall(r'<tr [^>]*data-key="(s\d+)"', client.get("/b/hand/?page=2").content.decode())
    services.submission_set_public(submission=Submission.objects.get(pk=int(second_page[-1][1:])), public=False)
    with CaptureQueriesContext(connection) as ctx:
        html = client.get("/b/hand/").content.decode()
    assert len(ctx.captured_queries) == 2, [q["sql"] for q in ctx.captured_queries]  # the benchmark, the rows
    assert re.sub(r'"X-CSRFToken": "[^"]+"', "", html) == re.sub(r'"X-CSRFToken": "[^"]+"', "", first)


def test_deleting_hides_at_once(client, hand) -> None:
    assert f"s{hand.gamma.pk}" in _row_keys(client)
    services.submission_delete(submission=hand.gamma)
    assert f"s{hand.gamma.pk}" not in _row_keys(client)


def test_a_rescore_takes_the_row_off_until_it_is_scored_again(client, hand) -> None:
    assert f"s{hand.gamma.pk}" in _row_keys(client)
    assert services.submission_rescore(submission=hand.gamma, enqueue=False)
    assert f"s{hand.gamma.pk}" not in _row_keys(client)
    pipeline.submission_process_sync(submission=hand.gamma)
    helpers.refreshed(hand.benchmark)
    assert f"s{hand.gamma.pk}" in _row_keys(client)


def test_a_bump_drops_the_cached_pages(client, hand) -> None:
    client.get("/b/hand/")
    # A change no service bumps the version for (a raw update, an edit in the admin) ...
    Submission.objects.filter(pk=hand.beta.pk).update(model_name="Beta renamed")
    assert "Beta renamed" not in client.get("/b/hand/").content.decode()
    benchmark_results_bump(benchmark_id=hand.benchmark.pk)  # ... shows once it is told
    assert "Beta renamed" in client.get("/b/hand/").content.decode()


def test_each_rename_while_the_build_is_behind_shows_at_once(client, hand) -> None:
    """While the board's build is behind (no refresh runs here), each change's first read takes the build's page
    with its rows read again: the second rename shows as the first did, the "Updating" notice both times. Fails if
    the page's HTML is keyed by the build and the notice alone, without the rows as read now (``Page.now``)."""
    client.get("/b/hand/")
    for name in ("Beta renamed once", "Beta renamed twice"):
        Submission.objects.filter(pk=hand.beta.pk).update(model_name=name)
        benchmark_results_bump(benchmark_id=hand.benchmark.pk)
        html = client.get("/b/hand/").content.decode()
        assert name in html and 'id="board-updating"' in html


def test_the_page_around_the_cached_fragment_is_per_visitor(client, hand, django_user_model) -> None:
    client.get("/b/hand/")
    django_user_model.objects.create_user("ada", password="pw-ada-1")
    client.login(username="ada", password="pw-ada-1")
    assert "Sign out ada" in client.get("/b/hand/").content.decode()


def test_clone_helper_gives_public_rows(hand) -> None:
    assert len(helpers.clone(hand.alpha, 2)) == 2


def test_anonymous_visitors_get_the_cached_page_with_their_own_working_csrf_token(hand) -> None:
    import re

    from django.test import Client
    from django.urls import reverse

    from leaderboard.views import CSRF_SLOT

    pages, tokens = [], []
    for _ in range(2):
        visitor = Client(enforce_csrf_checks=True)
        html = visitor.get("/b/hand/").content.decode()
        token = re.search(r'"X-CSRFToken": "([^"]+)"', html).group(1)
        assert CSRF_SLOT not in html and "Sign in" in html
        # the token on the cached page is this visitor's: a POST with it passes the CSRF check
        response = visitor.post(reverse("login"), {"username": "x", "password": "y"}, HTTP_X_CSRFTOKEN=token)
        assert response.status_code != 403
        pages.append(html.replace(token, ""))
        tokens.append(token)
    assert tokens[0] != tokens[1] and pages[0] == pages[1]
    assert Client(enforce_csrf_checks=True).post(reverse("login"), {"username": "x", "password": "y"},
                                                 HTTP_X_CSRFTOKEN=tokens[0]).status_code == 403  # not anyone's


def test_an_edit_in_the_admin_shows_at_once(client, hand, rf, admin_user) -> None:
    """The admin's save moves the results version like a service: a rename shows, and a row published there
    appears once the refresh has run."""
    from django.contrib import admin

    client.get("/b/hand/")
    model_admin = admin.site._registry[Submission]
    request = rf.post("/admin/")
    request.user = admin_user
    hand.beta.model_name = "Beta renamed in the admin"
    model_admin.save_model(request, hand.beta, None, True)
    assert "Beta renamed in the admin" in client.get("/b/hand/").content.decode()
