"""The reference router (kNN over TF-IDF) is trained on the worker, never in a web request: pages read its
stored picks, and say "reference router: computing" until they exist for the current pool."""

from __future__ import annotations

from unittest import mock

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from evaluation.metrics.routing import split_samples
from evaluation.models import Submission
from routers import services
from routers.models import RouterReference
from routers.selectors import REFERENCE_NAME, router_board
from routers.tests import helpers

pytestmark = pytest.mark.django_db
TEST = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")


def never_train():  # noqa: ANN201
    """Any training of the reference router (our knn_probs, or scikit-learn's fit) fails the test."""
    boom = AssertionError("the reference router was trained in a page read")
    return mock.patch.object(TfidfVectorizer, "fit_transform", side_effect=boom)


def rows(board) -> dict:  # noqa: ANN001
    return {r.name: r for r in board.rows}


def test_a_page_read_never_trains_nor_queues_the_reference_router(benchmark, client,
                                                                  django_capture_on_commit_callbacks):
    with never_train(), django_capture_on_commit_callbacks(execute=False) as sent:
        page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
        body = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert "Reference router: computing" in page and REFERENCE_NAME not in page
    assert body["reference_router"] == "computing" and REFERENCE_NAME not in {r["name"] for r in body["rows"]}
    assert {r["name"] for r in body["rows"]} >= {"Oracle", "Random", "Big"}  # the rest of the board is there
    # The pool's refresh queued it (make_pool ran it, as the worker does); the reads sent nothing.
    assert sent == [] and RouterReference.objects.get().status == "queued"


def test_the_task_trains_it_once_and_pages_read_its_picks(benchmark, client, django_capture_on_commit_callbacks):
    helpers.trained(benchmark)
    ref = RouterReference.objects.get()
    assert ref.status == "done" and sorted(ref.picks) == TEST and ref.pool_version.number == 1
    # Learned on train: chart questions (odd) are Mid's, apple questions (even) Big's.
    # (stored by pool member, "s<submission id>": a rename keeps them)
    key = {name: f"s{pk}" for name, pk in ref.pool_version.members.items()}
    assert ref.picks == {u: key["Mid"] if helpers.UIDS.index(u) % 2 else key["Big"] for u in TEST}
    with never_train():
        knn = rows(router_board(benchmark))[REFERENCE_NAME].figures
        body = client.get(f"/b/{helpers.SLUG}/routers.json").json()
        again = services.router_reference_compute(reference_id=ref.pk)  # delivered twice: left alone
    assert knn["accuracy"]["value"] == 1 and body["reference_router"] == "done"
    assert knn["share"]["Mid"] == pytest.approx(sum(helpers.UIDS.index(u) % 2 for u in TEST) / 4)
    assert again.picks == ref.picks and "Reference router: computing" not in client.get(
        f"/b/{helpers.SLUG}/routers/").content.decode()


def test_a_pool_change_shows_computing_not_the_old_figure(benchmark, django_capture_on_commit_callbacks):
    helpers.trained(benchmark)
    helpers.add_model(benchmark, "Tiny", 0.0001, set(helpers.UIDS))  # right everywhere, and cheapest
    with never_train(), django_capture_on_commit_callbacks(execute=False) as sent:
        helpers.refreshed(benchmark)  # the worker's refresh: queues the new pool's training, trains nothing
        board = router_board(benchmark)
    assert board.pool_version == 2 and board.reference == "computing" and REFERENCE_NAME not in rows(board)
    assert len(helpers.sends(sent)) == 1
    for callback in helpers.sends(sent):
        callback()
    board = router_board(benchmark)
    assert board.reference == "done" and rows(board)[REFERENCE_NAME].figures["share"]["Tiny"] == 1
    assert RouterReference.objects.filter(status="done").count() == 2


def test_one_queued_for_a_pool_that_moved_on_is_not_trained_and_comes_back_with_its_pool(
        benchmark, django_capture_on_commit_callbacks):
    first = RouterReference.objects.get()  # queued by make_pool's refresh
    newcomer = helpers.add_model(benchmark, "Newcomer", 0.003, set())
    helpers.refreshed(benchmark)  # queues one for pool v2
    with never_train():
        assert services.router_reference_compute(reference_id=first.pk).status == "failed"
    first.refresh_from_db()
    assert first.picks is None and first.failure_reason.startswith("superseded")
    Submission.objects.filter(pk=newcomer.pk).update(is_public=False)  # back to pool v1
    with django_capture_on_commit_callbacks(execute=True) as sent:
        helpers.refreshed(benchmark)
    assert len(helpers.sends(sent)) == 1  # queued again by the refresh
    first.refresh_from_db()
    assert first.status == "done" and first.picks
    assert router_board(benchmark).reference == "done"
