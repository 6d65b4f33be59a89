"""Router uploads obey the prediction files' limits (routers.services.router_limits_check): the audit had
30 of 30 router uploads accepted in a row."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile
from django.test import override_settings

from routers.models import RouterSubmission
from routers.services import RouterRejected, router_submission_create, router_submission_score
from routers.tests import helpers
from routers.tests.test_rescore import TEST

pytestmark = pytest.mark.django_db
BODY = "\n".join(f'{{"sample_id": "{u}", "model": "Mid"}}' for u in TEST).encode()


def _upload(client, slug: str):  # noqa: ANN001, ANN202
    return client.post(f"/api/v1/benchmarks/{slug}/submissions/",
                       {"kind": "router", "model_name": "R", "file": ContentFile(BODY, name="r.jsonl")})


@override_settings(SUBMISSIONS_PER_DAY=5, SUBMISSIONS_MAX_ACTIVE_PER_USER=100)
def test_the_daily_limit_refuses_the_sixth_router_of_a_day(benchmark, client) -> None:
    client.force_login(helpers.user())
    codes = [_upload(client, benchmark.slug).status_code for _ in range(6)]
    assert codes == [202] * 5 + [429]
    resp = _upload(client, benchmark.slug)
    assert resp.json()["code"] == "quota" and "5 routers" in resp.json()["detail"]
    assert RouterSubmission.objects.count() == 5
    RouterSubmission.objects.update(status="failed")  # failed ones do not count
    assert _upload(client, benchmark.slug).status_code == 202


@override_settings(SUBMISSIONS_PER_DAY=100, SUBMISSIONS_MAX_ACTIVE_PER_USER=2)
def test_the_active_limit_refuses_a_third_router_waiting_to_be_scored(benchmark) -> None:
    owner = helpers.user()

    def upload() -> RouterSubmission:
        return router_submission_create(benchmark=benchmark, owner=owner, file=ContentFile(BODY, name="r.jsonl"),
                                        name="R", enqueue=False)

    first, _ = upload(), upload()
    with pytest.raises(RouterRejected, match="2 routers waiting to be scored") as refused:
        upload()
    assert refused.value.code == "busy"
    router_submission_score(submission_id=first.pk)
    upload()  # one was scored: room again
    staff = helpers.user("staffer", is_staff=True)
    for _ in range(3):  # staff are exempt
        router_submission_create(benchmark=benchmark, owner=staff, file=ContentFile(BODY, name="r.jsonl"), name="S",
                                 enqueue=False)


def test_the_web_form_says_why_a_router_is_refused(benchmark, client) -> None:
    client.force_login(helpers.user())
    with override_settings(SUBMISSIONS_PER_DAY=1):
        for expected in (302, 200):
            resp = client.post(f"/b/{benchmark.slug}/routers/submit/",
                               {"name": "R", "file": ContentFile(BODY, name="r.jsonl")})
            assert resp.status_code == expected
    assert "the daily limit" in resp.content.decode()
