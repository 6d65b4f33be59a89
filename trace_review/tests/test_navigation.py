"""The site's navigation offers "Annotate" and "Trace review" to the people who have something there
(templates/base.html; docs/layout.md, "The menu"):

- "Annotate" (annotation.workbench.access.uses_workbench): anyone with a role on a benchmark, superusers;
- "Trace review" (trace_review.access.uses_trace_review): a benchmark's admins (they make batches),
  superusers, and annotators and reviewers with a batch open to them (a batch naming people is open to
  those only); not to visitors, researchers, staff without a role, or a reviewer no batch is open to.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Role
from annotation.tests.workbench_helpers import make_benchmark, make_user
from trace_review.models import TraceReviewBatch

LINK = 'id="nav-trace-review"'
ANNOTATE = 'id="nav-annotate"'


@pytest.fixture
def benchmark(db, tmp_path):
    return make_benchmark(tmp_path, n=1)


def _home(client, user=None) -> str:
    if user is not None:
        client.force_login(user)
    return client.get("/").content.decode()


@pytest.mark.parametrize("role", [Role.ANNOTATOR, Role.REVIEWER])
def test_people_with_a_batch_open_to_them_see_the_link(client, benchmark, role: str) -> None:
    person = make_user(f"with-{role}", benchmark, role)
    assert LINK not in _home(client, person)  # no batch yet: /review/ would list nothing
    TraceReviewBatch.objects.create(benchmark=benchmark, name="Open", size=1)
    page = _home(client, person)
    assert LINK in page and f'href="{reverse("trace_review:queue")}"' in page
    assert ANNOTATE in page and 'href="/annotate/"' in page


def test_a_batch_naming_others_does_not_offer_the_link(client, benchmark) -> None:
    reviewer = make_user("reviewer", benchmark, Role.REVIEWER)
    named = TraceReviewBatch.objects.create(benchmark=benchmark, name="Named", size=1)
    named.reviewers.add(make_user("annotator1", benchmark, Role.ANNOTATOR))
    assert LINK not in _home(client, reviewer)
    named.reviewers.add(reviewer)
    assert LINK in _home(client, reviewer)


def test_admins_and_superusers_see_the_links(client, benchmark) -> None:
    assert LINK in _home(client, make_user("badmin", benchmark, Role.ADMIN))  # they make the batches
    client.logout()
    root = get_user_model().objects.create_superuser("root", password="pw-root-1")
    page = _home(client, root)
    assert LINK in page and ANNOTATE in page


@pytest.mark.parametrize("who", ["anonymous", "researcher", "staff"])
def test_people_without_a_role_see_neither(client, benchmark, who: str) -> None:
    TraceReviewBatch.objects.create(benchmark=benchmark, name="Open", size=1)
    users = {"anonymous": None, "researcher": make_user("researcher"),
             "staff": get_user_model().objects.create_user("staffer", password="pw-staff-1", is_staff=True)}
    page = _home(client, users[who])
    assert LINK not in page and ANNOTATE not in page
    if who != "anonymous":  # signed in: the rest of the menu is there, so the page itself is not the reason
        assert 'href="/submissions/"' in page and "Sign out" in page
        # The pages still answer, and say why they are empty.
        assert "no role on any benchmark" in client.get("/annotate/").content.decode()
        assert "No review batch is open to you" in client.get("/review/").content.decode()
