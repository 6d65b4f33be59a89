"""The router board: baselines on the same split as the routers, candidate models, pool version."""

from __future__ import annotations

import pytest

from evaluation.metrics.routing import split_samples
from routers.models import RouterSubmission
from routers.selectors import router_board
from routers.services import router_submission_create, router_submission_score
from routers.tests import helpers

pytestmark = pytest.mark.django_db
SPLIT = split_samples(helpers.UIDS)
TEST = sorted(u for u, s in SPLIT.items() if s == "test")
TRAIN = [u for u, s in SPLIT.items() if s == "train"]




def acc(model: str, uids: list[str]) -> float:
    return sum(u in helpers.MODELS[model][1] for u in uids) / len(uids)


def rows_by_name(board) -> dict:  # noqa: ANN001
    return {r.name: r for r in board.rows}


def test_baselines_and_models_on_the_test_split(benchmark, django_capture_on_commit_callbacks):
    helpers.trained(benchmark)  # the reference router, trained by its task
    board = router_board(benchmark)
    assert board.mode == "text" and board.n_test == 4 and board.splits == {"train": 14, "dev": 2, "test": 4}
    rows = rows_by_name(board)
    strongest = max(helpers.MODELS, key=lambda m: acc(m, TRAIN))  # Big 9/14, Mid 8/14, Small 2/14
    cheapest = min(helpers.MODELS, key=lambda m: helpers.MODELS[m][0])
    assert (strongest, cheapest) == ("Big", "Small")
    assert rows["Strongest on train (Big)"].figures["accuracy"]["value"] == pytest.approx(acc("Big", TEST))
    assert rows["Cheapest on train (Small)"].figures["cost_per_sample_usd"]["value"] == pytest.approx(0.0005)
    assert rows["Random"].figures["accuracy"]["value"] == pytest.approx(sum(acc(m, TEST) for m in helpers.MODELS) / 3)
    # Every test sample has a right model (Big on even, Mid on odd), so Oracle is always right.
    assert rows["Oracle"].figures["accuracy"]["value"] == 1
    for m in helpers.MODELS:
        assert rows[m].kind == "model" and rows[m].figures["accuracy"]["value"] == pytest.approx(acc(m, TEST))
    # The reference router learned on train that chart questions are Mid's and apple questions Big's.
    knn = rows["kNN over TF-IDF (reference)"].figures
    assert knn["accuracy"]["value"] == 1
    assert knn["share"]["Mid"] == pytest.approx(sum(helpers.UIDS.index(u) % 2 for u in TEST) / 4)
    assert {r.kind for r in board.rows} == {"baseline", "model"}


def test_routers_join_the_board_and_say_when_the_pool_moved(benchmark, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(f'{{"sample_id": "{u}", "model": "Mid"}}' for u in TEST))
    with path.open("rb") as fh:
        from django.core.files import File
        sub = router_submission_create(benchmark=benchmark, owner=helpers.user(), file=File(fh, name="r.jsonl"),
                                       name="All Mid", is_public=True, enqueue=False)
    router_submission_score(submission_id=sub.pk)
    row = rows_by_name(router_board(benchmark))["All Mid"]
    assert row.kind == "router" and row.pool_current
    assert row.figures["accuracy"]["value"] == pytest.approx(acc("Mid", TEST))
    helpers.add_model(benchmark, "Newcomer", 0.003, set())
    helpers.refreshed(benchmark)
    board = router_board(benchmark)
    assert "Newcomer" in board.models and not rows_by_name(board)["All Mid"].pool_current
    private = RouterSubmission.objects.create(benchmark=benchmark, owner=sub.owner, name="Secret", file="x",
                                              status="done", results=sub.results)
    assert "Secret" not in rows_by_name(router_board(benchmark)) and private.pk


def test_a_pool_model_unpublished_leaves_every_router_figure_at_once(benchmark, client):
    """What must hold at once: a model unpublished since the pool's build never shows, in the tab or its files,
    before the pool's refresh has run; the rest of the pool's figures wait for that rebuild."""
    from evaluation.models import Submission
    from evaluation.services import submission_set_public

    helpers.trained(benchmark)
    assert "Mid" in client.get(f"/b/{helpers.SLUG}/routers.json").content.decode()
    submission_set_public(submission=Submission.objects.get(model_name="Mid"), public=False)  # no refresh runs
    page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    assert 'id="pool-departed"' in page and "Mid" not in page
    assert "Mid" not in client.get(f"/b/{helpers.SLUG}/routers.json").content.decode()
    assert "Mid" not in client.get(f"/b/{helpers.SLUG}/routers.csv").content.decode()
    helpers.refreshed(benchmark)  # the worker's refresh: a pool of the models still on the board
    body = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert body["models"] == ["Big", "Small"] and "Mid" not in {r["name"] for r in body["rows"]}
    assert 'id="pool-departed"' not in client.get(f"/b/{helpers.SLUG}/routers/").content.decode()


def test_the_pool_build_lists_only_the_picked_models_in_a_rows_shares(benchmark) -> None:
    """A candidate model's row listed every model of the pool with a share of 0, per domain too: the
    pool's build grew with the square of the pool (115 MB at 1,000 models)."""
    from evaluation.derived import derived_read

    rows = derived_read(benchmark, "routers").payload["rows"]
    models = {r["name"]: r["figures"] for r in rows if r["kind"] == "model"}
    assert set(models) == {"Big", "Mid", "Small"}
    for name, figures in models.items():
        assert figures["share"] == {name: 1.0}
        assert all(set(shares) == {name} for shares in figures["share_by_domain"].values())
    oracle = next(r["figures"] for r in rows if r["name"] == "Oracle")
    assert oracle["share"] and all(v > 0 for v in oracle["share"].values())


def test_the_tabs_offered_ask_what_the_router_board_shows(benchmark, tmp_path) -> None:
    """``router_board_shows`` (the tabs offered) answers as ``router_board`` has a row, through each state that
    decides it: no pool built, a pool built, a public router, a pool model unpublished since the build (every row but
    the paper's withheld), then a paper's reported row. Fails where it reads the routers of a departed pool, or
    ignores the stored rows or the reported ones."""
    from evaluation.models import Submission
    from evaluation.services import submission_set_public
    from routers.models import RouterReported
    from routers.selectors import router_board_shows

    def shows(b) -> bool:  # noqa: ANN001
        board = router_board(b)
        want = bool(board.rows or board.reported)
        assert router_board_shows(b) == want
        return want

    assert shows(helpers.make_benchmark(tmp_path / "empty", slug="no-pool")) is False
    assert shows(benchmark) is True  # the pool's baselines and candidate models
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(f'{{"sample_id": "{u}", "model": "Mid"}}' for u in TEST))
    with path.open("rb") as fh:
        from django.core.files import File
        sub = router_submission_create(benchmark=benchmark, owner=helpers.user(), file=File(fh, name="r.jsonl"),
                                       name="All Mid", is_public=True, enqueue=False)
    router_submission_score(submission_id=sub.pk)
    assert shows(benchmark) is True
    submission_set_public(submission=Submission.objects.get(model_name="Mid"), public=False)  # no refresh runs
    assert shows(benchmark) is False  # departed: the routers and the pool's rows wait for the rebuild
    RouterReported.objects.create(benchmark=benchmark, name="Paper's router", source="paper", citation="A paper")
    assert shows(benchmark) is True
