"""import_router_matrix, the matrices form: Y.npz, C.npy, the registry and cost_bounds.json (VL-RouterBench's
data/matrices/). An imported pool has no submissions behind it; routers on it are scored, exported and shown
as on a leaderboard-built pool. Small fixtures written here in the release's shapes."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command

from evaluation.metrics.routing import split_samples
from routers.models import RouterPoolCell, RouterPoolVersion, RouterSubmission
from routers.pool import pool_load, release_ids
from routers.selectors import router_board
from routers.services import router_submission_create, router_submission_score
from routers.tests import helpers

pytestmark = pytest.mark.django_db
SPLIT = split_samples(helpers.UIDS)
TEST = sorted(u for u, s in SPLIT.items() if s == "test")
TRAIN = sorted(u for u, s in SPLIT.items() if s == "train")
MODELS = ["Alpha", "Beta"]
# Rows in the registry's order: reversed, so a reader that assumed the benchmark's order would be caught.
ROWS = list(reversed(helpers.UIDS))
CMIN, CMAX = 0.0005, 0.02


def i_of(uid: str) -> int:
    return helpers.UIDS.index(uid)


def right(model: str, uid: str) -> int:  # Alpha is right on even samples, Beta on every third
    return int(i_of(uid) % 2 == 0) if model == "Alpha" else int(i_of(uid) % 3 == 0)


def cost(model: str, uid: str) -> float:  # Alpha $0.01 flat; Beta $0.001 on odd samples, $0.002 on even
    return 0.01 if model == "Alpha" else (0.001 if i_of(uid) % 2 else 0.002)


def write_release(folder: Path, *, y: np.ndarray | None = None, c: np.ndarray | None = None,
                  registry: object = "default", bounds: object = "default") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    y = np.array([[right(m, u) for m in MODELS] for u in ROWS], dtype=np.int8) if y is None else y
    c = np.array([[cost(m, u) for m in MODELS] for u in ROWS]) if c is None else c
    np.savez(folder / "Y.npz", Y=y)
    np.save(folder / "C.npy", c)
    if registry == "default":
        registry = {"models": [{"model_id": m} for m in MODELS], "sample_ids": ROWS}
    if registry is not None:
        (folder / "registry.json").write_text(json.dumps(registry))
    if bounds == "default":
        bounds = {"cmin": CMIN, "cmax": CMAX}
    if bounds is not None:
        (folder / "cost_bounds.json").write_text(json.dumps(bounds))
    return folder


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_router_matrix", helpers.SLUG, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def bench(tmp_path):  # noqa: ANN001, ANN201
    from django.core.cache import cache

    cache.clear()
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    # A public priced submission on the leaderboard: an imported pool does not take it in.
    helpers.add_model(benchmark, "Big", 0.01, set(helpers.UIDS))
    return benchmark


def submit(benchmark, lines: list[dict]) -> RouterSubmission:  # noqa: ANN001
    body = "\n".join(json.dumps(x) for x in lines).encode()
    owner = get_user_model().objects.get_or_create(username="rita")[0]
    sub = router_submission_create(benchmark=benchmark, owner=owner, file=ContentFile(body, name="r.jsonl"),
                                   name="r", is_public=True, enqueue=False)
    return router_submission_score(submission_id=sub.pk)


def rank(a: float, c: float) -> float:  # RouterArena's S with b = 0.1 and the release's bounds
    cn = min(1.0, max(0.0, math.log(CMAX / c) / math.log(CMAX / CMIN)))
    return 1.1 * a * cn / (0.1 * a + cn)


def test_the_imported_pool_is_the_files_and_round_trips_through_the_export(bench, tmp_path):
    out, _ = run("--matrices", str(write_release(tmp_path / "matrices")))
    assert "20 samples x 2 models (Alpha, Beta) imported from Y.npz, C.npy, registry.json, cost_bounds.json" in out
    data = pool_load(bench)
    assert data.pool.models == ("Alpha", "Beta") and data.submissions == {"Alpha": None, "Beta": None}
    assert data.version.origin == "imported from Y.npz, C.npy, registry.json, cost_bounds.json"
    assert RouterPoolCell.objects.count() == 40
    for split in ("train", "dev"):
        call_command("export_router_matrix", helpers.SLUG, str(tmp_path / f"{split}.csv"), "--split", split)
        rows = list(csv.DictReader((tmp_path / f"{split}.csv").open()))
        assert sorted(r["sample_id"] for r in rows) == sorted(u for u, s in SPLIT.items() if s == split)
        for r in rows:
            for m in MODELS:
                assert int(r[f"{m}:correct"]) == right(m, r["sample_id"])
                assert float(r[f"{m}:cost_usd"]) == pytest.approx(cost(m, r["sample_id"]))
        assert "Big:correct" not in rows[0]
    call_command("export_router_matrix", helpers.SLUG, str(tmp_path / "test.csv"), "--split", "test")
    test_rows = list(csv.DictReader((tmp_path / "test.csv").open()))
    assert [r["sample_id"] for r in test_rows] == TEST and list(test_rows[0]) == ["sample_id", "question", "image_url"]


def test_routers_on_an_imported_pool_are_scored_by_hand(bench, tmp_path, client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the reference router is queued by the import
        run("--matrices", str(write_release(tmp_path / "matrices")))
    picks = {u: "Alpha" if i_of(u) % 2 == 0 else "Beta" for u in TEST}
    sub = submit(bench, [{"sample_id": u, "model": m} for u, m in picks.items()])
    acc = sum(right(m, u) for u, m in picks.items()) / 4
    usd = sum(cost(m, u) for u, m in picks.items()) / 4
    oracle = [min(MODELS, key=lambda m: (-right(m, u), cost(m, u))) for u in TEST]
    f = sub.results
    assert sub.status == "done" and sub.pool["models"] == {"Alpha": None, "Beta": None}
    assert f["accuracy"]["value"] == pytest.approx(acc) and f["cost_per_sample_usd"]["value"] == pytest.approx(usd)
    assert f["rank_score"] == pytest.approx(rank(acc, usd))  # the release's cost_bounds.json, not the pool's
    assert f["oracle_gap"]["accuracy"] == pytest.approx(sum(right(m, u) for m, u in zip(oracle, TEST)) / 4 - acc)
    assert f["share"]["Beta"] == sum(m == "Beta" for m in picks.values()) / 4
    probs = submit(bench, [{"sample_id": u, "probs": {"Alpha": 1, "Beta": 3}} for u in TEST]).results
    assert probs["accuracy"]["value"] == pytest.approx(sum(.25 * right("Alpha", u) + .75 * right("Beta", u) for u in TEST) / 4)
    assert probs["cost_per_sample_usd"]["value"] == pytest.approx(sum(.25 * .01 + .75 * cost("Beta", u) for u in TEST) / 4)
    # The baselines and the tab, as on a leaderboard-built pool.
    board = router_board(bench)
    rows = {r.name: r for r in board.rows}
    strongest = max(MODELS, key=lambda m: (sum(right(m, u) for u in TRAIN), -sum(cost(m, u) for u in TRAIN)))
    assert f"Strongest on train ({strongest})" in rows and "Cheapest on train (Beta)" in rows
    assert rows["Alpha"].figures["accuracy"]["value"] == pytest.approx(sum(right("Alpha", u) for u in TEST) / 4)
    assert "kNN over TF-IDF (reference)" in rows and "Big" not in rows and board.bounds == (CMIN, CMAX)
    page = client.get(f"/b/{helpers.SLUG}/routers/").content.decode()
    assert "imported from Y.npz, C.npy, registry.json, cost_bounds.json" in page
    body = client.get(f"/b/{helpers.SLUG}/routers.json").json()
    assert body["pool_origin"] == "imported from Y.npz, C.npy, registry.json, cost_bounds.json"
    assert body["models"] == MODELS and body["cost_bounds"] == [CMIN, CMAX]


def test_the_same_files_again_are_the_same_version_and_new_ones_rescore_routers(
        bench, tmp_path, django_capture_on_commit_callbacks):
    folder = write_release(tmp_path / "matrices")
    run("--matrices", str(folder))
    sub = submit(bench, [{"sample_id": u, "model": "Beta"} for u in TEST])
    out, _ = run("--matrices", str(folder))
    assert "already imported as pool version 1" in out and RouterPoolVersion.objects.count() == 1
    c = np.array([[cost(m, u) * (10 if m == "Beta" else 1) for m in MODELS] for u in ROWS])
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run("--matrices", str(write_release(tmp_path / "v2", c=c)))
    assert "new pool version 2" in out
    sub.refresh_from_db()
    assert sub.status == "done" and sub.pool["version"] == 2
    assert sub.results["cost_per_sample_usd"]["value"] == pytest.approx(sum(10 * cost("Beta", u) for u in TEST) / 4)


def test_dropping_the_imported_pool_goes_back_to_the_leaderboards_and_rescores_routers(
        bench, tmp_path, django_capture_on_commit_callbacks):
    with pytest.raises(CommandError, match="not imported: nothing to drop"):
        run("--leaderboard")
    run("--matrices", str(write_release(tmp_path / "matrices")))
    sub = submit(bench, [{"sample_id": u, "model": "Beta"} for u in TEST])
    assert sub.pool["models"] == {"Alpha": None, "Beta": None}
    with pytest.raises(CommandError, match="takes no files"):
        run("--leaderboard", "--matrices", str(tmp_path / "matrices"))
    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run("--leaderboard")
    assert "built from the leaderboard's submissions again" in out and "1 models" in out
    data = pool_load(bench)
    assert list(data.submissions) == ["Big"] and data.version.origin == ""
    sub.refresh_from_db()
    # Re-scored on the leaderboard's pool, which has no Beta: the router's lines are named.
    assert sub.status == "failed"
    assert sub.errors[0] == {"line": 1, "field": "model", "message": "unknown model 'Beta': the pool's models are Big"}
    assert RouterPoolCell.objects.count() == 40  # the imported version stays, as history


def test_the_registry_may_be_arrays_inside_y_npz(bench, tmp_path):
    folder = write_release(tmp_path / "m", registry=None, bounds=None)
    y = np.load(folder / "Y.npz")["Y"]
    np.savez(folder / "Y.npz", Y=y, model_ids=np.array(MODELS), sample_ids=np.array(ROWS))
    out, _ = run("--matrices", str(folder))
    assert "imported from Y.npz, C.npy:" in out and pool_load(bench).pool.models == ("Alpha", "Beta")


def test_release_ids_match_vl_routerbench_dataset_slash_id(tmp_path):
    from annotation.services import benchmark_import
    from annotation.tests.benchmark_files import sample_line, write_benchmark

    benchmark_import(path=write_benchmark(tmp_path, [sample_line(u) for u in ("MMStar:3", "OCRBench:3", "q1")]),
                     slug="multi")
    from annotation.models import Benchmark, Sample

    ids = release_ids(Benchmark.objects.get(slug="multi"))
    pk = dict(Sample.objects.values_list("uid", "pk"))
    assert ids["MMStar/3"] == pk["MMStar:3"] and ids["OCRBench/3"] == pk["OCRBench:3"] and ids["q1"] == pk["q1"]
    assert "MMStar/4" not in ids


def bad_y() -> np.ndarray:
    y = np.array([[right(m, u) for m in MODELS] for u in ROWS], dtype=float)
    y[1, 0] = 0.5
    return y


def bad_c() -> np.ndarray:
    c = np.array([[cost(m, u) for m in MODELS] for u in ROWS])
    c[4, 1] = -1.0
    return c


CASES = {
    "no Y.npz": (lambda f: (f / "Y.npz").unlink(), "Y.npz: not found"),
    "no Y key": (lambda f: np.savez(f / "Y.npz", Q=np.zeros((20, 2))), "Y.npz: no array 'Y' (it holds: Q)"),
    "Y 1-D": (lambda f: np.savez(f / "Y.npz", Y=np.zeros(20)), "Y.npz: Y has 1 dimension(s) (20,)"),
    "C shape": (lambda f: np.save(f / "C.npy", np.zeros((20, 3))), "C.npy: shape (20, 3) differs from Y's (20, 2)"),
    "a column with no model": (lambda f: write_json(f, {"models": ["Alpha"], "sample_ids": ROWS}),
                               "registry.json models: 1 entries for Y's 2 columns: column 2 has no registry entry"),
    "a model with no column": (lambda f: write_json(f, {"models": [*MODELS, "Gamma"], "sample_ids": ROWS}),
                               "registry.json models: 3 entries for Y's 2 columns: [2] ('Gamma') has no column in Y"),
    "a row with no sample": (lambda f: write_json(f, {"models": MODELS, "sample_ids": ROWS[:-1]}),
                             "registry.json sample_ids: 19 entries for Y's 20 rows: row 20 has no registry entry"),
    "no sample list": (lambda f: write_json(f, {"models": MODELS}), "registry.json: no sample list"),
    "a model twice": (lambda f: write_json(f, {"models": ["Alpha", "Alpha"], "sample_ids": ROWS}),
                      "registry.json models[1]: model 'Alpha' is listed twice (first at [0])"),
    "an unknown sample": (lambda f: write_json(f, {"models": MODELS, "sample_ids": [*ROWS[:3], "MMStar/99", *ROWS[4:]]}),
                          "registry.json sample_ids[3]: sample id 'MMStar/99' is not a sample of routed"),
    "one sample twice": (lambda f: write_json(f, {"models": MODELS, "sample_ids": [*ROWS[:3], ROWS[0], *ROWS[4:]]}),
                         "registry.json sample_ids[3]: sample id 'q19' is listed twice (first at [0])"),
    "Y not 0/1": (lambda f: np.savez(f / "Y.npz", Y=bad_y()),
                  "Y.npz row 2 (sample 'q18'), column 1 (model 'Alpha'): 0.5 is not 0 or 1"),
    "a negative cost": (lambda f: np.save(f / "C.npy", bad_c()),
                        "C.npy row 5 (sample 'q15'), column 2 (model 'Beta'): -1.0 is not a cost ($ >= 0)"),
    "no C.npy": (lambda f: (f / "C.npy").unlink(), "C.npy: not found"),
    "ids as Python objects": (lambda f: np.savez(f / "Y.npz", Y=np.zeros((20, 2)), sample_ids=np.array(ROWS, dtype=object)),
                              "Y.npz: an array holds Python objects"),
    "registry not JSON": (lambda f: (f / "registry.json").write_text("models: Alpha"), "registry.json: not JSON"),
    "no model list": (lambda f: write_json(f, {"sample_ids": ROWS}), "registry.json: no model list"),
    "an empty model name": (lambda f: write_json(f, {"models": ["Alpha", ""], "sample_ids": ROWS}),
                            "registry.json models[1]: model '' is not a non-empty string"),
    "bad bounds": (lambda f: (f / "cost_bounds.json").write_text('{"cmin": 0.02, "cmax": 0.01}'),
                   "cost_bounds.json: cmin 0.02 and cmax 0.01 must satisfy 0 < cmin < cmax"),
}


def write_json(folder: Path, doc: object) -> None:
    (folder / "registry.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("case", list(CASES))
def test_every_problem_is_named_and_nothing_is_imported(bench, tmp_path, case):
    run("--matrices", str(write_release(tmp_path / "good")))  # an earlier import stays the pool
    before = (RouterPoolVersion.objects.count(), RouterPoolCell.objects.count(), pool_load(bench).version.pk)
    folder = write_release(tmp_path / "bad", c=np.array([[cost(m, u) * 2 for m in MODELS] for u in ROWS]))
    breaking, message = CASES[case]
    breaking(folder)
    with pytest.raises(CommandError, match="nothing imported"):
        run("--matrices", str(folder))
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_router_matrix", helpers.SLUG, "--matrices", str(folder), stderr=err)
    assert message in err.getvalue()
    assert (RouterPoolVersion.objects.count(), RouterPoolCell.objects.count(), pool_load(bench).version.pk) == before
