"""The site's navigation offers "Trace review" to the people who use it: a benchmark's annotators,
reviewers and admins, and superusers; not to visitors, researchers or staff without a role
(trace_review.access.uses_trace_review, templates/base.html; docs/trace_review.md)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Role
from annotation.tests.workbench_helpers import make_benchmark, make_user

LINK = 'id="nav-trace-review"'


@pytest.fixture
def benchmark(db, tmp_path):
    return make_benchmark(tmp_path, n=1)


def _home(client, user=None) -> str:
    if user is not None:
        client.force_login(user)
    return client.get("/").content.decode()


@pytest.mark.parametrize("role", [Role.ANNOTATOR, Role.REVIEWER, Role.ADMIN])
def test_people_with_a_role_on_a_benchmark_see_the_link(client, benchmark, role: str) -> None:
    page = _home(client, make_user(f"with-{role}", benchmark, role))
    assert LINK in page and f'href="{reverse("trace_review:queue")}"' in page


def test_a_superuser_sees_the_link(client, benchmark) -> None:
    root = get_user_model().objects.create_superuser("root", password="pw-root-1")
    assert LINK in _home(client, root)


@pytest.mark.parametrize("who", ["anonymous", "researcher", "staff"])
def test_people_without_a_role_do_not(client, benchmark, who: str) -> None:
    users = {"anonymous": None, "researcher": make_user("researcher"),
             "staff": get_user_model().objects.create_user("staffer", password="pw-staff-1", is_staff=True)}
    page = _home(client, users[who])
    assert LINK not in page
    if who != "anonymous":  # signed in: the rest of the menu is there, so the page itself is not the reason
        assert 'href="/annotate/"' in page and "Sign out" in page
