"""Router submissions: `submit --router`, line-by-line validation, and the figures (docs/routers.md)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.metrics.routing import split_samples
from routers.models import RouterSubmission
from routers.tests import helpers

pytestmark = pytest.mark.django_db
SPLIT = split_samples(helpers.UIDS)
TEST = sorted(u for u, s in SPLIT.items() if s == "test")
TRAIN = sorted(u for u, s in SPLIT.items() if s == "train")


@pytest.fixture
def benchmark(tmp_path):
    b = helpers.make_pool(tmp_path)
    helpers.user("rita")
    return b


def write(tmp_path, lines: list) -> str:
    path = tmp_path / "router.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return str(path)


def submit(path: str, *extra: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("submit", helpers.SLUG, path, "--router", "--model", "My router", "--user", "rita", *extra,
                 stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def choose(uid: str) -> str:
    return "Big" if helpers.UIDS.index(uid) % 2 == 0 else "Mid"


def test_sync_prints_the_figures(benchmark, tmp_path):
    out, _ = submit(write(tmp_path, [{"sample_id": u, "model": choose(u)} for u in TEST]), "--sync")
    figures = json.loads(out[out.index("{"):])
    assert list(figures)[:6] == ["accuracy", "cost_per_sample_usd", "cost_per_10k_usd", "rank_score", "oracle_gap",
                                 "share"]
    right = [u in helpers.MODELS[choose(u)][1] for u in TEST]
    spent = [helpers.MODELS[choose(u)][0] for u in TEST]
    assert figures["accuracy"]["value"] == pytest.approx(sum(right) / len(TEST))
    assert figures["accuracy"]["low"] <= figures["accuracy"]["value"] <= figures["accuracy"]["high"]
    assert figures["cost_per_sample_usd"]["value"] == pytest.approx(sum(spent) / len(TEST))
    assert figures["cost_per_10k_usd"] == pytest.approx(10_000 * sum(spent) / len(TEST))
    share_big = sum(choose(u) == "Big" for u in TEST) / len(TEST)
    assert figures["share"] == {"Big": pytest.approx(share_big), "Mid": pytest.approx(1 - share_big), "Small": 0}
    # Oracle on the test split: the cheapest right model per sample, the cheapest overall when none is right.
    oracle = []
    for u in TEST:
        ok = [(c, n) for n, (c, r) in helpers.MODELS.items() if u in r]
        oracle.append((1, min(ok)[0]) if ok else (0, min(c for c, _ in helpers.MODELS.values())))
    assert figures["oracle_gap"]["accuracy"] == pytest.approx(sum(o[0] for o in oracle) / 4 - sum(right) / 4)
    assert figures["oracle_gap"]["cost_usd"] == pytest.approx(sum(spent) / 4 - sum(o[1] for o in oracle) / 4)
    assert 0 <= figures["rank_score"] <= 1
    sub = RouterSubmission.objects.get()
    assert sub.status == "done" and sub.pool["models"].keys() == {"Big", "Mid", "Small"}


def test_probabilities_through_the_command(benchmark, tmp_path):
    lines = [{"sample_id": u, "probs": {"Big": 1, "Small": 1}} for u in TEST]
    out, _ = submit(write(tmp_path, lines), "--sync")
    figures = json.loads(out[out.index("{"):])
    expected = sum((u in helpers.MODELS["Big"][1]) + (u in helpers.MODELS["Small"][1]) for u in TEST) / 2 / 4
    assert figures["accuracy"]["value"] == pytest.approx(expected)
    assert figures["cost_per_sample_usd"]["value"] == pytest.approx((0.010 + 0.0005) / 2)
    assert figures["share"] == {"Big": 0.5, "Mid": 0, "Small": 0.5}


def test_a_probability_of_zero_is_allowed(benchmark, tmp_path):
    # docs/routers.md refuses only negative weights and all zero: a 0 says "never this model".
    lines = [{"sample_id": u, "probs": {"Big": 0, "Mid": 0.0, "Small": 1}} for u in TEST]
    out, _ = submit(write(tmp_path, lines), "--sync")
    figures = json.loads(out[out.index("{"):])
    assert figures["share"] == {"Big": 0, "Mid": 0, "Small": 1}
    assert RouterSubmission.objects.get().status == "done"


def test_every_problem_names_its_line(benchmark, tmp_path):
    lines = [
        {"sample_id": TEST[0], "model": "Nope"},
        {"sample_id": TRAIN[0], "model": "Big"},
        {"sample_id": TEST[0], "model": "Big"},
        "{not json",
        {"sample_id": "zzz", "model": "Big"},
        {"sample_id": TEST[1], "probs": {"Big": -1}},
        {"sample_id": TEST[2], "probs": {"Hidden": 1}},
        {"model": "Big"},
    ]
    with pytest.raises(CommandError, match="failed"):
        submit(write(tmp_path, lines), "--sync")
    errors = RouterSubmission.objects.get().errors
    by_line = {e["line"]: (e["field"], e["message"]) for e in errors if e["line"]}
    assert by_line[1][0] == "model" and "unknown model 'Nope'" in by_line[1][1] and "Big, Mid, Small" in by_line[1][1]
    assert by_line[2] == ("sample_id", f"'{TRAIN[0]}' is in the train or dev split, not test: route the test "
                                       "split's samples only")
    assert by_line[3] == ("sample_id", f"'{TEST[0]}' is routed twice (first on line 1)")
    assert by_line[4][0] == "" and "not valid JSON" in by_line[4][1]
    assert "'zzz' is not a sample of this benchmark" in by_line[5][1]
    assert by_line[6][0] == "probs" and "must be a number >= 0" in by_line[6][1]
    assert "unknown model 'Hidden'" in by_line[7][1]  # a private submission is not in the pool
    assert by_line[8][0] == "sample_id" and "missing" in by_line[8][1]
    missing = [e["message"] for e in errors if e["line"] is None]
    assert missing == [f"test sample '{TEST[3]}' has no line (the file has 8 lines)"]


def test_stderr_lists_the_lines(benchmark, tmp_path):
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("submit", helpers.SLUG, write(tmp_path, [{"sample_id": TEST[0], "model": "Nope"}]), "--router",
                     "--model", "r", "--user", "rita", "--sync", stdout=io.StringIO(), stderr=err)
    assert "line 1, field 'model': unknown model 'Nope'" in err.getvalue()
    assert f"file, field 'sample_id': test sample '{TEST[1]}' has no line" in err.getvalue()


def test_without_sync_it_goes_through_the_queue(benchmark, tmp_path, django_capture_on_commit_callbacks):
    # Test settings run Celery tasks eagerly: the task sent on commit scores it.
    with django_capture_on_commit_callbacks(execute=True) as sent:
        out, _ = submit(write(tmp_path, [{"sample_id": u, "model": "Small"} for u in TEST]), "--public")
    assert len(sent) == 1  # the router's scoring (the pool's refresh queued the reference router before)
    sub = RouterSubmission.objects.get()
    assert out.strip() == f"router submission {sub.pk}"
    assert sub.status == "done" and sub.is_public
    assert sub.results["share"]["Small"] == 1


def test_submit_without_router_is_still_evaluations(benchmark, tmp_path):
    with pytest.raises(CommandError) as info:
        call_command("submit", helpers.SLUG, str(tmp_path / "absent.jsonl"), "--model", "m", "--user", "rita")
    assert "no file at" in str(info.value)
    assert not RouterSubmission.objects.exists()


def test_sync_with_no_worker_leaves_the_router_board_and_its_export_built(tmp_path, client):
    """Staff load a router with `submit --router --public --sync` on a server with no worker: the models were
    published (the results version moved) but no refresh has run. The command runs the derived refreshes in the
    process, as evaluation's `submit --sync` does, so the Routers tab and routers.json hold the row on the pool
    it was scored on, with the pool's models and baselines, and nothing says "updating"."""
    from evaluation.services import benchmark_results_bump

    benchmark = helpers.make_benchmark(tmp_path)
    for name, (cost, right) in helpers.MODELS.items():
        helpers.add_model(benchmark, name, cost, right)
    benchmark_results_bump(benchmark_id=benchmark.pk)  # its on-commit sends never leave a test's transaction
    helpers.user("rita")
    out, _ = submit(write(tmp_path, [{"sample_id": u, "model": choose(u)} for u in TEST]), "--public", "--sync")
    sub = RouterSubmission.objects.get()
    assert out.startswith(f"router submission {sub.pk}") and sub.status == "done"
    data = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert data["models"] == ["Big", "Mid", "Small"] and data["pool_version"] == 1
    rows = {r["name"]: r for r in data["rows"]}
    assert rows["My router"]["router_id"] == sub.pk and rows["My router"]["pool_current"]
    assert rows["My router"]["accuracy"] == pytest.approx(sub.results["accuracy"]["value"])
    # the pool's models and baselines, built with it
    assert {"Big", "Mid", "Small", "Oracle", "Random", "Strongest on train (Big)"} <= set(rows)
    csv_rows = list(csv.DictReader(io.StringIO(client.get(f"/b/{helpers.SLUG}/routers.csv").content.decode())))
    assert [r["pool_current"] for r in csv_rows if r["name"] == "My router"] == ["True"]
    page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    assert "My router" in page and 'id="board-updating"' not in page and "scored on pool v" not in page


def test_score_router_sync_with_no_worker_leaves_the_router_board_built(tmp_path, client):
    """`score_router ID --sync` as `submit --router --sync`: the refreshes run in the process."""
    from evaluation.services import benchmark_results_bump

    benchmark = helpers.make_benchmark(tmp_path)
    for name, (cost, right) in helpers.MODELS.items():
        helpers.add_model(benchmark, name, cost, right)
    benchmark_results_bump(benchmark_id=benchmark.pk)
    helpers.user("rita")
    submit(write(tmp_path, [{"sample_id": u, "model": "Small"} for u in TEST]), "--public")  # queued, never sent
    sub = RouterSubmission.objects.get()
    call_command("score_router", str(sub.pk), "--sync", stdout=io.StringIO())
    data = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert data["models"] == ["Big", "Mid", "Small"]
    assert [r["pool_current"] for r in data["rows"] if r["router_id"] == sub.pk] == [True]


def test_sync_public_leaves_the_row_on_the_board_and_its_exports_with_no_worker(tmp_path, client):
    """`submit --router --sync --public` (interfaces.md) runs the derived refreshes in the process, as evaluation's
    `submit --sync` does (evaluation/tests/test_scoring_profiles.py). Here the models are in but nothing built the
    pool's board (their refresh waits for a worker, and none runs: a test's transaction never commits, so nothing
    sent on commit is taken); when the command returns, routers.json, routers.csv and the Routers tab hold the row,
    on the current pool, beside the baselines."""
    benchmark = helpers.make_benchmark(tmp_path)
    for name, (cost, right) in helpers.MODELS.items():
        helpers.add_model(benchmark, name, cost, right)
    helpers.user("rita")
    assert client.get(f"/b/{helpers.SLUG}/routers.json").json()["rows"] == []  # nothing built yet
    out, _ = submit(write(tmp_path, [{"sample_id": u, "model": choose(u)} for u in TEST]), "--sync", "--public")
    printed = json.loads(out[out.index("{"):])
    sub = RouterSubmission.objects.get()
    board = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    rows = {r["name"]: r for r in board["rows"]}
    assert "My router" in rows, board
    row = rows["My router"]
    # on the pool the board was built from (without the refresh: pool_current false, "scored on another pool")
    assert row["router_id"] == sub.pk and row["pool_current"] is True, row
    assert row["accuracy"] == printed["accuracy"]["value"] and row["pool_version"] == printed["pool_version"]
    assert {"Big", "Mid", "Small", "Oracle"} <= set(rows)  # the baselines of the same build
    assert board["pool_version"] == printed["pool_version"]
    table = list(csv.DictReader(io.StringIO(client.get(f"/b/{helpers.SLUG}/routers.csv").content.decode())))
    mine = [r for r in table if r["router_id"] == str(sub.pk)]
    assert len(mine) == 1 and mine[0]["name"] == "My router" and mine[0]["pool_current"] in ("True", "true", "1")
    tab = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    assert "My router" in tab
