"""The guessability flag (written by the evaluation app's audit) as annotators and reviewers see it:
a badge in the annotator's queue and on the item, a filter on the review queue."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Sample
from annotation.tests.workbench_helpers import PASSWORD, bench, payload, people  # noqa: F401
from annotation.workbench.assignments import assignment_claim_next

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:  # noqa: ANN001
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def submit_all(bench, people) -> None:  # noqa: ANN001
    """ann1 annotates and submits every sample, so each is in the review queue."""
    client = client_for(people["ann1"])
    while (a := assignment_claim_next(user=people["ann1"], benchmark=bench)) is not None:
        resp = client.post(reverse("annotation:save", args=[a.pk]),
                           json.dumps({"version": 1, "data": payload(), "submit": True}), content_type="application/json")
        assert resp.status_code == 200, resp.content


def set_flags(bench, **flags: bool | None) -> None:  # noqa: ANN001
    for uid, flag in flags.items():
        Sample.objects.filter(benchmark=bench, uid=uid).update(guessable=flag)


def uids_listed(html: str) -> set[str]:
    return {uid for uid in ("s0", "s1", "s2") if f'data-uid="{uid}"' in html}


def test_reviewers_filter_the_queue_by_the_guessable_flag(bench, people) -> None:
    submit_all(bench, people)
    set_flags(bench, s0=True, s1=False, s2=None)
    rev = client_for(people["rev"])
    url = reverse("annotation:review_list", args=[bench.slug])
    assert uids_listed(rev.get(url).content.decode()) == {"s0", "s1", "s2"}
    page = rev.get(url, {"guessable": "yes"}).content.decode()
    assert uids_listed(page) == {"s0"} and '<option value="yes" selected>' in page
    assert uids_listed(rev.get(url, {"guessable": "no"}).content.decode()) == {"s1"}
    assert uids_listed(rev.get(url, {"guessable": "unaudited"}).content.decode()) == {"s2"}
    # an unknown value is no filter, never an error
    assert uids_listed(rev.get(url, {"guessable": "maybe"}).content.decode()) == {"s0", "s1", "s2"}
    set_flags(bench, s0=False)
    assert "No submitted sample matches this filter." in rev.get(url, {"guessable": "yes"}).content.decode()


def test_annotators_see_the_flag_in_their_queue_and_on_the_item(bench, people) -> None:
    a = assignment_claim_next(user=people["ann1"], benchmark=bench)
    client = client_for(people["ann1"])
    assert 'class="badge guessable"' not in client.get(reverse("annotation:queue")).content.decode()
    assert 'class="badge guessable"' not in client.get(a.get_absolute_url()).content.decode()
    set_flags(bench, **{a.sample.uid: True})
    assert 'class="badge guessable"' in client.get(reverse("annotation:queue")).content.decode()
    assert 'class="badge guessable"' in client.get(a.get_absolute_url()).content.decode()
