"""A router submission scored by a REAL Celery worker process (evaluation's worker fixture: the test
database, the configured broker, a queue of its own)."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from evaluation.metrics.routing import split_samples
from evaluation.tests.test_worker_integration import start_worker, wait_for  # noqa: F401 - a fixture
from routers.models import RouterSubmission
from routers.services import router_submission_create
from routers.tests import helpers

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
TEST = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")


def test_a_router_goes_from_queued_to_done_on_a_worker(start_worker, tmp_path) -> None:  # noqa: F811
    benchmark = helpers.make_pool(tmp_path)
    worker = start_worker()
    body = "\n".join(f'{{"sample_id": "{u}", "model": "Small"}}' for u in TEST).encode()
    sub = router_submission_create(benchmark=benchmark, owner=helpers.user(), file=ContentFile(body, name="r.jsonl"),
                                   name="All Small")
    wait_for(lambda: RouterSubmission.objects.values_list("status", flat=True).get(pk=sub.pk) == "done", worker,
             "the router scored")
    sub.refresh_from_db()
    assert sub.results["share"]["Small"] == 1 and sub.pool["version"] == 1
    assert sub.results["accuracy"]["value"] == pytest.approx(sum(u in helpers.MODELS["Small"][1] for u in TEST) / 4)


def test_the_reference_router_is_trained_on_the_worker_while_pages_say_computing(start_worker, tmp_path,  # noqa: F811
                                                                                 client) -> None:
    from unittest import mock

    from sklearn.feature_extraction.text import TfidfVectorizer

    from routers.models import RouterReference
    from routers.selectors import REFERENCE_NAME

    helpers.make_pool(tmp_path)
    worker = start_worker()
    # This process (the web side) must never train it; the worker is another process.
    with mock.patch.object(TfidfVectorizer, "fit_transform", side_effect=AssertionError("trained in a read")):
        body = client.get(f"/b/{helpers.SLUG}/routers.json").json()
        assert body["reference_router"] == "computing" and REFERENCE_NAME not in {r["name"] for r in body["rows"]}
        # Trained on the worker, which then rebuilds the pool's stored rows with it: the page shows it then.
        wait_for(lambda: client.get(f"/b/{helpers.SLUG}/routers.json").json()["reference_router"] == "done", worker,
                 "the reference router trained and on the board")
        assert RouterReference.objects.filter(status="done").count() == 1
        body = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    knn = {r["name"]: r for r in body["rows"]}[REFERENCE_NAME]
    assert body["reference_router"] == "done" and knn["accuracy"] == 1 and knn["pool_version"] == 1
    assert "Reference router: computing" not in client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
