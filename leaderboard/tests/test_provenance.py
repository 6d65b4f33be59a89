"""Provenance and row digests on the leaderboard (spec runs.md, "The verified tier"): the overview's
badges (templatetags.provenance_badges), the model page, leaderboard.json, the CSV and the API rows
(exports.row_dict), and the records export (views_model.records)."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.urls import reverse

from evaluation import pipeline, services
from evaluation.models import DerivedState, Submission
from leaderboard.models import BoardEntry
from leaderboard.services import board_refresh
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db
HEX64 = re.compile(r"^[0-9a-f]{64}$")
RUN_RECORD = {
    "run_id": 7, "harness_version": "harness-1.3", "prompt_versions": {"text": "text.v2", "adaptive": "adaptive.v3"},
    "sampling": {"temperature": 0, "max_tokens": 1024, "seed": 1234}, "protocol": "function_calling",
    "date": "2026-11-20T10:00:00+00:00", "model_ids": ["acme-vl-7b-0925"], "declared_model": "acme-vl-7b",
    "endpoint_host": "secret-host.internal", "split": "all", "modes": ["text", "adaptive"],
}


def _create(benchmark, spec: helpers.ModelSpec, *, run_record: dict | None = None, public: bool = True,
            owner=None) -> Submission:  # noqa: ANN001
    sub = services.submission_create(
        benchmark=benchmark, owner=owner or helpers.owner(), model_name=spec.name, is_public=public,
        file=ContentFile(helpers.jsonl(helpers.prediction_lines(spec)), name="p.jsonl"), enforce_limits=False,
        enqueue=False, run_record=run_record)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    helpers.refreshed(benchmark)
    return sub


@pytest.fixture
def board(tmp_path):  # noqa: ANN201
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    run = _create(benchmark, helpers.ALPHA, run_record=RUN_RECORD)
    upload = _create(benchmark, helpers.BETA)
    return benchmark, run, upload


def _row(html: str, pk: int) -> str:
    found = re.search(rf'<tr [^>]*data-key="s{pk}">(.*?)</tr>', html, re.S)
    assert found, pk
    return found.group(1)


def test_the_overview_marks_each_row_run_or_file_with_its_digest(client, board) -> None:
    _, run, upload = board
    html = client.get("/b/hand/").content.decode()
    run_row, file_row = _row(html, run.pk), _row(html, upload.pk)
    badge = re.search(r'<span class="badge provenance run" data-provenance="run" title="([^"]*)">run by the platform'
                      r'</span>', run_row)
    assert badge, run_row
    title = badge.group(1)
    for fact in ("harness-1.3", "text: text.v2", "adaptive: adaptive.v3", "max_tokens 1024", "seed 1234",
                 "temperature 0", "2026-11-20", "acme-vl-7b-0925"):
        assert fact in title, fact
    assert "secret-host" not in html  # the endpoint's host stays with the run's owner
    assert "⚠ the endpoint answered as acme-vl-7b-0925, asked for acme-vl-7b" in run_row
    assert '>submitted file</span>' in file_row and "run by the platform" not in file_row
    assert "answered as" not in file_row
    for sub, row in ((run, run_row), (upload, file_row)):
        assert HEX64.match(sub.digest)
        assert f'data-digest="{sub.digest}">{sub.digest[:12]}</code>' in row


def test_no_flag_when_the_endpoint_answered_as_the_model_asked_for(client, tmp_path) -> None:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    honest = _create(benchmark, helpers.ALPHA, run_record={**RUN_RECORD, "model_ids": ["acme-vl-7b"]})
    html = client.get("/b/hand/").content.decode()
    assert "run by the platform" in _row(html, honest.pk) and "answered as" not in html
    page = client.get(reverse("leaderboard:model", args=[benchmark.slug, honest.pk])).content.decode()
    assert 'id="model-mismatch"' not in page


def test_the_model_page_spells_out_the_run_and_the_digest(client, board) -> None:
    benchmark, run, upload = board
    html = client.get(reverse("leaderboard:model", args=[benchmark.slug, run.pk])).content.decode()
    prov = re.search(r'<dd id="model-provenance" data-provenance="run">(.*?)</dd>', html, re.S).group(1)
    assert "run by the platform" in prov
    assert "⚠ the endpoint answered as acme-vl-7b-0925, asked for acme-vl-7b" in prov
    for fact in ("Harness: harness-1.3", "Prompts: text: text.v2, adaptive: adaptive.v3",
                 "Sampling: max_tokens 1024, seed 1234, temperature 0", "Date: 2026-11-20T10:00:00+00:00",
                 "Model asked for: acme-vl-7b", "Model ids returned: acme-vl-7b-0925"):
        assert f"<li>{fact}</li>" in prov, fact
    assert f'<code data-digest="{run.digest}">{run.digest}</code>' in html
    assert f'<code data-digest-dev="{run.digest_dev}">' in html
    file_html = client.get(reverse("leaderboard:model", args=[benchmark.slug, upload.pk])).content.decode()
    assert re.search(r'<dd id="model-provenance" data-provenance="file"><span class="badge provenance file">'
                     r'submitted file</span>', file_html)


def test_json_csv_and_api_rows_carry_provenance_and_digests(client, board) -> None:
    _, run, upload = board
    api = {r["model"]: r for r in client.get("/api/v1/benchmarks/hand/leaderboard/").json()["rows"]}
    assert client.get("/b/hand/leaderboard.json").json()["rows"] == list(api.values())
    assert api["Alpha"]["provenance"] == "run" and api["Beta"]["provenance"] == "file"
    assert api["Alpha"]["digest"] == run.digest and api["Alpha"]["digest_dev"] == run.digest_dev
    assert api["Beta"]["digest"] == upload.digest and HEX64.match(api["Beta"]["digest"])
    assert api["Alpha"]["run_mismatch"] == "the endpoint answered as acme-vl-7b-0925, asked for acme-vl-7b"
    assert api["Alpha"]["run"]["harness_version"] == "harness-1.3" and "endpoint_host" not in api["Alpha"]["run"]
    assert api["Beta"]["run_mismatch"] is None and api["Beta"]["run"] is None
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode()))}
    assert (rows["Alpha"]["provenance"], rows["Alpha"]["digest"]) == ("run", run.digest)
    assert (rows["Beta"]["provenance"], rows["Beta"]["digest"]) == ("file", upload.digest)
    assert rows["Alpha"]["run_mismatch"].startswith("the endpoint answered as")


def test_rows_without_a_digest_say_not_available(client, board) -> None:
    _, run, upload = board
    Submission.objects.filter(pk=upload.pk).update(digest="", digest_dev="", digest_parts={})
    BoardEntry.objects.all().delete()  # as migration 0008 did: rebuilt by the board's refresh
    DerivedState.objects.all().delete()
    board_refresh(benchmark_id=run.benchmark_id)
    html = client.get("/b/hand/").content.decode()
    assert "digest not available" in _row(html, upload.pk) and "digest not available" not in _row(html, run.pk)
    api = {r["model"]: r for r in client.get("/api/v1/benchmarks/hand/leaderboard/").json()["rows"]}
    assert api["Beta"]["digest"] is None and api["Beta"]["provenance"] == "file"


def _records(client, benchmark, pk: int) -> tuple[int, list[dict]]:  # noqa: ANN001
    response = client.get(reverse("leaderboard:records", args=[benchmark.slug, pk]))
    if response.status_code != 200:
        return response.status_code, []
    body = b"".join(response.streaming_content).decode()
    return 200, [json.loads(line) for line in body.splitlines()]


def test_the_records_export_hides_test_rows_from_visitors(client, board) -> None:
    benchmark, run, _ = board
    status, lines = _records(client, benchmark, run.pk)
    assert status == 200
    head, records = lines[0], lines[1:]
    assert head["scope"] == "dev" and head["digest_dev"] == run.digest_dev and "digest" not in head
    assert records and {r["split"] for r in records} == {"dev"}
    dev = {uid for uid, (_, _, split, _, _) in helpers.SAMPLES.items() if split == "dev"}
    assert {r["uid"] for r in records} == dev
    client.force_login(run.owner)
    status, lines = _records(client, benchmark, run.pk)
    assert lines[0]["scope"] == "all" and lines[0]["digest"] == run.digest
    assert {r["split"] for r in lines[1:]} == {"dev", "test"}


def test_a_private_submissions_records_are_its_owners(client, board) -> None:
    benchmark, _, _ = board
    owner = get_user_model().objects.create_user("researcher", password="pw")
    hidden = _create(benchmark, helpers.GAMMA, public=False, owner=owner)
    assert _records(client, benchmark, hidden.pk)[0] == 404
    client.force_login(get_user_model().objects.create_user("someone", password="pw"))
    assert _records(client, benchmark, hidden.pk)[0] == 404
    client.force_login(owner)
    status, lines = _records(client, benchmark, hidden.pk)
    assert status == 200 and lines[0]["digest"] == hidden.digest


def test_a_harness_row_links_to_the_protocol_it_ran_under(client, tmp_path) -> None:  # noqa: ANN001
    """Issue 35: the overview row and the model page of a hosted run link to /b/<slug>/protocol/, showing the
    protocol version the run recorded; the page it links to is there. An upload links to no protocol."""
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    record = {**RUN_RECORD, "protocol_version": "p-3f2a9c1d0b7e", "protocol_page": f"/b/{benchmark.slug}/protocol/"}
    run, upload = _create(benchmark, helpers.ALPHA, run_record=record), _create(benchmark, helpers.BETA)
    link = (f'<a class="protocol-link" href="/b/{benchmark.slug}/protocol/" title="the protocol this run ran under '
            '(docs/runs.md)">protocol <code>p-3f2a9c1d0b7e</code></a>')
    html = client.get(f"/b/{benchmark.slug}/").content.decode()
    assert link in _row(html, run.pk)
    assert "protocol-link" not in _row(html, upload.pk)
    page = client.get(reverse("leaderboard:model", args=[benchmark.slug, run.pk])).content.decode()
    prov = re.search(r'<dd id="model-provenance" data-provenance="run">(.*?)</dd>', page, re.S).group(1)
    assert link in prov
    file_page = client.get(reverse("leaderboard:model", args=[benchmark.slug, upload.pk])).content.decode()
    assert "protocol-link" not in file_page
    assert client.get(f"/b/{benchmark.slug}/protocol/").status_code == 200
