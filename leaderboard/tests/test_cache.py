"""The per-benchmark cache: served from cache, never stale after a submission changes, dropped on demand."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from evaluation.models import Submission
from leaderboard.cache import invalidate_benchmark
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db


def _queries(client, url: str, **headers: str) -> int:  # noqa: ANN001
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url, **headers).status_code == 200
    return len(ctx.captured_queries)


def test_a_cached_page_costs_one_query(client, hand) -> None:
    first = _queries(client, "/b/hand/")
    assert _queries(client, "/b/hand/") == 1 < first  # the benchmark with its fingerprint, nothing else
    assert _queries(client, "/b/hand/", HTTP_HX_REQUEST="true") == 1


def test_publishing_or_unpublishing_shows_at_once(client, hand) -> None:
    assert "Hidden" not in client.get("/b/hand/").content.decode()
    from evaluation import services

    services.submission_set_public(submission=hand.private, public=True)
    assert "Hidden" in client.get("/b/hand/").content.decode()
    services.submission_delete(submission=hand.private)
    assert "Hidden" not in client.get("/b/hand/").content.decode()


def test_a_rescore_replaces_the_row(client, hand) -> None:
    client.get("/b/hand/")
    results = hand.gamma.results
    results["modes"]["text"]["accuracy"]["overall"].update(count=7, value=7 / 8, percent=87.5)
    now = timezone.now()  # as the pipeline's final update does
    Submission.objects.filter(pk=hand.gamma.pk).update(results=results, scored_at=now, heartbeat_at=now)
    assert "87.5" in client.get("/b/hand/").content.decode()


def test_invalidate_benchmark_drops_the_cached_pages(client, hand) -> None:
    client.get("/b/hand/")
    # A change the fingerprint cannot see (a raw update of a field it does not read) ...
    Submission.objects.filter(pk=hand.beta.pk).update(model_name="Beta renamed")
    assert "Beta renamed" not in client.get("/b/hand/").content.decode()
    invalidate_benchmark(hand.benchmark.pk)  # ... shows once the pipeline says so
    assert "Beta renamed" in client.get("/b/hand/").content.decode()


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
