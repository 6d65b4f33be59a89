"""leaderboard/downloads.py: a benchmark's inputs as files, as a visitor gets them (docs/downloads.md).

Anonymous visitors download every split; the test split's zip, TSV and parquet carry no gold at all,
the dev split's carry it as the database has it. Before a build the page and the file's URL say so,
and asking wrote nothing.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.downloads.services import downloads_build_now, downloads_request
from annotation.export_rows import GOLD_FIELDS
from annotation.models import Annotation, AnnotationStatus, Benchmark, DataDownload, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from config.storages import private_storage
from tests.confidential import MARK, gold_in, mark_test_gold

pytestmark = pytest.mark.django_db

SLUG = "dl"
GOLD_META = {"transform_label": f"{MARK}META"}  # a release's unmapped column: meta may hold gold


def _lines() -> list[dict]:
    lines = []
    for k in range(6):
        split = "dev" if k < 2 else "test"
        choice = {"options": {"A": "two", "B": "three", "C": "four"}, "answer": "B", "answer_type": "choice"}
        extra = choice if k % 2 else {}
        lines.append(sample_line(f"u{k}", split=split, meta=GOLD_META if split == "test" else {"note": "dev"},
                                 **extra))
    return lines


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    benchmark_import(path=write_benchmark(tmp_path / "src", _lines()), slug=SLUG)
    benchmark = Benchmark.objects.get(slug=SLUG)
    mark_test_gold(benchmark)
    # One test sample without an approved annotation: its inputs are downloaded all the same.
    Annotation.objects.filter(sample__uid="u5").update(status=AnnotationStatus.SUBMITTED)
    return benchmark


@pytest.fixture
def built(bench: Benchmark) -> Benchmark:
    downloads_build_now(benchmark=bench)
    return bench


def _get(url: str) -> tuple[object, bytes]:
    response = Client().get(url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


def _test_uids() -> set[str]:
    return set(Sample.objects.filter(benchmark__slug=SLUG, split="test").values_list("uid", flat=True))


def test_an_anonymous_visitor_gets_the_test_inputs_without_any_gold(built: Benchmark) -> None:
    test_uids = _test_uids()
    assert len(test_uids) == 4

    response, body = _get(f"/b/{SLUG}/data/test.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        lines = [json.loads(line) for line in zf.read("benchmark.jsonl").decode().splitlines()]
        names = set(zf.namelist())
        manifest = json.loads(zf.read("benchmark.json"))
        texts = "".join(zf.read(n).decode("utf-8", "replace") for n in names if not n.startswith("images/"))
    assert {line["uid"] for line in lines} == test_uids  # u5 (not approved) included
    for line in lines:
        assert not set(line) & {*GOLD_FIELDS, "meta"}, line
        assert line["question"] and f"images/{line['uid']}.png" in names
    assert manifest["download"]["gold"] is False and manifest["download"]["samples"] == 4
    assert gold_in(texts) == []

    response, body = _get(f"/b/{SLUG}/data/test.tsv")
    assert response.status_code == 200
    text = body.decode()
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    assert {r["index"] for r in rows} == test_uids
    for row in rows:
        assert not set(row) & {*GOLD_FIELDS, "meta"}, sorted(row)
        assert row["image"] and row["question"]
    assert {"A", "B", "C"} <= set(rows[0])  # options as columns, inputs of a choice question
    assert gold_in(text) == []

    response, body = _get(f"/b/{SLUG}/data/test.parquet")
    assert response.status_code == 200
    table = pq.read_table(io.BytesIO(body))
    assert not set(table.column_names) & {*GOLD_FIELDS, "meta"}
    rows = table.to_pylist()
    assert {r["uid"] for r in rows} == test_uids
    for row in rows:
        assert row["image"]["bytes"].startswith(b"\x89PNG") and row["image"]["path"] == f"images/{row['uid']}.png"
    assert gold_in(str(rows)) == []
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["image"] == {"_type": "Image"}


def test_the_dev_split_carries_its_gold_as_the_database_has_it(built: Benchmark) -> None:
    samples = {s.uid: s for s in Sample.objects.filter(benchmark=built, split="dev")}
    approved = {a.sample.uid: a for a in Annotation.objects.filter(sample__in=samples.values(),
                                                                   status=AnnotationStatus.APPROVED)}
    _, body = _get(f"/b/{SLUG}/data/dev.zip")
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        lines = {line["uid"]: line for line in map(json.loads, zf.read("benchmark.jsonl").decode().splitlines())}
    _, body = _get(f"/b/{SLUG}/data/dev.tsv")
    rows = {r["index"]: r for r in csv.DictReader(io.StringIO(body.decode()), delimiter="\t")}
    _, body = _get(f"/b/{SLUG}/data/dev.parquet")
    table = {r["uid"]: r for r in pq.read_table(io.BytesIO(body)).to_pylist()}
    assert set(lines) == set(rows) == set(table) == set(samples)
    for uid, sample in samples.items():
        annotation = approved[uid]
        regions = [r.as_box() for r in annotation.regions.all()]
        steps = [s.text for s in annotation.key_steps.all()]
        chain = [c.as_dict() for c in annotation.tool_calls.all()]
        assert lines[uid]["answer"] == rows[uid]["answer"] == table[uid]["answer"] == sample.answer
        assert lines[uid]["regions"] == json.loads(rows[uid]["regions"]) == json.loads(table[uid]["regions"]) == regions
        assert lines[uid]["transform"] == json.loads(table[uid]["transform"]) == annotation.transform
        assert lines[uid]["key_steps"] == json.loads(rows[uid]["key_steps"]) == steps
        assert lines[uid]["toolchain"] == json.loads(table[uid]["toolchain"]) == chain
        assert lines[uid]["meta"] == {"note": "dev"}


def test_files_come_streamed_with_their_length_and_a_versioned_name(built: Benchmark) -> None:
    for kind in ("zip", "tsv", "parquet"):
        response = Client().get(f"/b/{SLUG}/data/test.{kind}")
        row = DataDownload.objects.get(benchmark=built, split="test", kind=kind, status="ready")
        body = b"".join(response.streaming_content)
        assert response.streaming
        assert int(response["Content-Length"]) == row.size_bytes == private_storage().size(row.file.name) == len(body)
        assert response["Content-Disposition"] == f'attachment; filename="{SLUG}-1.0-test.{kind}"'


def test_before_a_build_the_page_and_the_url_say_so_and_asking_writes_nothing(bench: Benchmark) -> None:
    client = Client()
    rows_before = DataDownload.objects.count()  # the import's, for the state before the test's changes
    with CaptureQueriesContext(connection) as queries:
        page = client.get(f"/b/{SLUG}/data/")
        missing = client.get(f"/b/{SLUG}/data/test.zip")
    assert page.status_code == 200 and "not prepared yet" in page.content.decode()
    assert missing.status_code == 503 and "not prepared yet" in missing.content.decode()
    assert DataDownload.objects.count() == rows_before

    # A write asks for the builds (here without running the tasks): "being prepared".
    downloads_request(benchmark=bench, send=False)
    with CaptureQueriesContext(connection) as more:
        page = client.get(f"/b/{SLUG}/data/")
        building = client.get(f"/b/{SLUG}/data/test.parquet")
        api = client.get(f"/api/v1/benchmarks/{SLUG}/downloads/")
    assert "being prepared, try again in a minute" in page.content.decode()
    assert building.status_code == 503 and building["Retry-After"] == "60"
    assert "is being prepared; try again in a minute" in building.content.decode()
    assert {d["status"] for d in api.json()} == {"building"}
    writes = [q["sql"] for q in [*queries.captured_queries, *more.captured_queries]
              if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert writes == []


def test_the_page_links_each_ready_file_and_the_api_lists_sizes_and_counts(built: Benchmark) -> None:
    board = Client().get(f"/b/{SLUG}/").content.decode()
    assert f'href="/b/{SLUG}/data/"' in board
    page = Client().get(f"/b/{SLUG}/data/").content.decode()
    for split in ("dev", "test"):
        for kind in ("zip", "tsv", "parquet"):
            assert f'href="/b/{SLUG}/data/{split}.{kind}"' in page
    listed = Client().get(f"/api/v1/benchmarks/{SLUG}/downloads/").json()
    kinds = ("zip", "tsv", "parquet")
    assert [(d["split"], d["kind"]) for d in listed] == [(s, k) for s in ("dev", "test") for k in kinds]
    for entry in listed:
        row = DataDownload.objects.get(benchmark=built, split=entry["split"], kind=entry["kind"])
        assert entry["status"] == "ready" and entry["size_bytes"] == row.size_bytes
        assert entry["sample_count"] == (2 if entry["split"] == "dev" else 4)
        assert entry["url"] == f"http://testserver/b/{SLUG}/data/{entry['split']}.{entry['kind']}"
        assert entry["gold"] is (entry["split"] == "dev")
    detail = Client().get(f"/api/v1/benchmarks/{SLUG}/").json()
    assert detail["downloads"] == listed


def test_an_unknown_split_or_kind_is_a_404(built: Benchmark) -> None:
    assert Client().get(f"/b/{SLUG}/data/train.zip").status_code == 404
    assert Client().get(f"/b/{SLUG}/data/test.csv").status_code == 404
    assert Client().get("/b/nope/data/").status_code == 404
