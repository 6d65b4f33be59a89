"""The pool, its fixed split and the matrices researchers download (docs/routers.md)."""

from __future__ import annotations

import csv
import io

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from annotation.models import Sample
from evaluation.metrics.routing import split_samples
from routers.pool import pool_load
from routers.tests import helpers

pytestmark = pytest.mark.django_db




def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_split_is_70_10_20_by_seed_42_whatever_the_order():
    uids = [f"u{i}" for i in range(100)]
    split = split_samples(uids)
    assert [sum(v == s for v in split.values()) for s in ("train", "dev", "test")] == [70, 10, 20]
    assert split_samples(list(reversed(uids))) == split
    assert split_samples(uids, seed=7) != split


def test_pool_holds_the_public_priced_scored_models_only(benchmark):
    data = pool_load(benchmark)
    assert data.pool.models == ("Big", "Mid", "Small")
    assert data.track.mode == "text" and data.track.seed == 42
    assert [len(data.rows(s)) for s in ("train", "dev", "test")] == [14, 2, 4]


def test_a_model_with_some_predictions_unpriced_stays_out_of_the_pool(benchmark):
    # Its unpriced rows would count as free, so it would look cheaper than it is.
    partly = helpers.add_model(benchmark, "Partly", 0.0001, set(helpers.UIDS))
    partly.prediction_results.filter(sample__uid=helpers.UIDS[0]).update(cost_usd=None)
    assert pool_load(benchmark).pool.models == ("Big", "Mid", "Small")


def test_a_model_with_a_row_left_to_an_llm_judge_stays_out_of_the_pool(benchmark):
    # Undecided is not wrong (docs/metrics.md section 13): in Q it would be a 0, so it waits for a judge.
    pending = helpers.add_model(benchmark, "Pending", 0.0001, set(helpers.UIDS))
    pending.prediction_results.filter(sample__uid=helpers.UIDS[0]).update(correct=False, decided_by="undecided")
    assert pool_load(benchmark).pool.models == ("Big", "Mid", "Small")
    pending.prediction_results.filter(sample__uid=helpers.UIDS[0]).update(correct=True, decided_by="judge:x")
    assert pool_load(benchmark).pool.models == ("Big", "Mid", "Pending", "Small")


def test_split_is_stored_and_never_moves(benchmark, tmp_path):
    first = pool_load(benchmark).split
    assert first == split_samples(helpers.UIDS)
    sample = Sample.objects.get(benchmark=benchmark, uid="q00")
    sample.question = "changed"
    sample.save(update_fields=["question"])
    assert pool_load(benchmark).split == first
    # A new sample is appended; the others keep their split.
    clone = Sample.objects.get(benchmark=benchmark, uid="q01")
    clone.pk, clone.uid = None, "q99"
    clone.save()
    again = pool_load(benchmark).split
    assert {u: again[u] for u in first} == first and "q99" in again


def test_train_matrix_has_each_models_correctness_and_cost(benchmark, tmp_path):
    out = tmp_path / "train.csv"
    call_command("export_router_matrix", benchmark.slug, str(out), "--split", "train")
    rows = read_csv(out.read_text())
    split = split_samples(helpers.UIDS)
    assert sorted(r["sample_id"] for r in rows) == sorted(u for u, s in split.items() if s == "train")
    assert list(rows[0]) == ["sample_id", "question", "image_url", "Big:correct", "Big:cost_usd",
                             "Mid:correct", "Mid:cost_usd", "Small:correct", "Small:cost_usd"]
    for r in rows:
        for name, (cost, right) in helpers.MODELS.items():
            assert r[f"{name}:correct"] == ("1" if r["sample_id"] in right else "0")
            assert float(r[f"{name}:cost_usd"]) == pytest.approx(cost)
        assert r["question"] == helpers.QUESTIONS[r["sample_id"]]


def test_test_matrix_never_carries_correctness_or_cost(benchmark, tmp_path, client):
    out = tmp_path / "test.csv"
    call_command("export_router_matrix", benchmark.slug, str(out), "--split", "test")
    rows = read_csv(out.read_text())
    assert len(rows) == 4 and list(rows[0]) == ["sample_id", "question", "image_url"]
    for fmt in ("csv", "parquet"):
        response = client.get(f"/b/{benchmark.slug}/routers/matrix/test.{fmt}")
        assert response.status_code == 200
        body = response.content
        if fmt == "parquet":
            assert pq.read_table(io.BytesIO(body)).column_names == ["sample_id", "question", "image_url"]
        assert b":correct" not in body and b":cost_usd" not in body
    # The image URL gives the image and nothing else.
    image = client.get(rows[0]["image_url"])
    assert image.status_code == 200 and b"".join(image.streaming_content)[:4] == b"\x89PNG"
    train = client.get(f"/b/{benchmark.slug}/routers/matrix/train.csv").content.decode()
    assert "Big:correct" in train and read_csv(train)[0]["image_url"].startswith("http://testserver/")


def test_parquet_export_matches_the_csv(benchmark, tmp_path):
    call_command("export_router_matrix", benchmark.slug, str(tmp_path / "d.parquet"), "--split", "dev")
    call_command("export_router_matrix", benchmark.slug, str(tmp_path / "d.csv"), "--split", "dev")
    table = pq.read_table(tmp_path / "d.parquet").to_pylist()
    rows = read_csv((tmp_path / "d.csv").read_text())
    assert [r["sample_id"] for r in table] == [r["sample_id"] for r in rows]
    assert [r["Mid:correct"] for r in table] == [int(r["Mid:correct"]) for r in rows]


def test_a_track_started_before_any_priced_model_follows_the_headline_mode(tmp_path):
    benchmark = helpers.make_benchmark(tmp_path)
    assert pool_load(benchmark).pool.models == ()  # no model yet: the track starts in the default mode
    helpers.add_model(benchmark, "Late", 0.001, set(helpers.UIDS), mode="text")
    data = pool_load(benchmark)
    assert data.track.mode == "text" and data.pool.models == ("Late",)
