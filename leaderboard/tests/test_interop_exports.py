"""A row out to the shared registries (leaderboard/eee.py, leaderboard/hf_results.py, the export_eee command):
Every Eval Ever records that pass EEE's schemas (our copy, eee_schema.py), showing the public only the dev
split, and Hugging Face .eval_results entries that parse and name the row."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from io import StringIO

import jsonschema
import pytest
import yaml
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Benchmark
from evaluation import pipeline, services
from evaluation.models import Submission
from leaderboard.tests import helpers
from leaderboard.tests.eee_schema import AGGREGATE, INSTANCE

pytestmark = pytest.mark.django_db
DEV = {u for u, spec in helpers.SAMPLES.items() if spec[2] == "dev"}
SPEC = helpers.ModelSpec("Alpha", {"text": ("s1", "s2", "s5"), "adaptive": ("s1", "s2", "s3", "s5", "s8")},
                         tools=("s1", "s2", "s3", "s8"))


def _lines() -> list[dict]:
    out = helpers.prediction_lines(SPEC)
    for i, line in enumerate(out):
        line["cost_usd"] = 0.002
        line["latency_ms"] = 1000 + i
        if line["sample_id"] == "s5" and line["mode"] == "adaptive":  # a failure: no answer, its class kept
            line.update(answer=None, failure="timeout", failure_detail="no answer after 60 s")
    return out


@pytest.fixture
def row(tmp_path) -> Submission:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    Benchmark.objects.filter(pk=benchmark.pk).update(hf_dataset="example-org/hand-bench")
    sub = services.submission_create(
        benchmark=benchmark, owner=helpers.owner(), file=ContentFile(helpers.jsonl(_lines()), name="p.jsonl"),
        model_name="Alpha", organisation="Example Lab", weights="closed", is_public=True, enforce_limits=False, enqueue=False)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    return Submission.objects.select_related("benchmark").get(pk=sub.pk)


def _unzip(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _eee(client, sub: Submission) -> tuple[int, dict, list[dict]]:  # noqa: ANN001
    response = client.get(reverse("leaderboard:eee", args=[sub.benchmark.slug, sub.pk]))
    if response.status_code != 200:
        return response.status_code, {}, []
    files = _unzip(response.content)
    aggregate = json.loads(next(v for k, v in files.items() if k.endswith(".json")))
    samples = next(v for k, v in files.items() if k.endswith("_samples.jsonl"))
    detailed = aggregate["detailed_evaluation_results"]
    assert detailed["file_path"] in files and hashlib.sha256(samples).hexdigest() == detailed["checksum"]
    instances = [json.loads(x) for x in samples.splitlines()]
    assert detailed["total_rows"] == len(instances)
    return 200, aggregate, instances


def test_the_eee_export_of_a_row_passes_eees_schemas(client, row: Submission) -> None:
    status, aggregate, instances = _eee(client, row)
    assert status == 200
    jsonschema.validate(aggregate, AGGREGATE)
    for instance in instances:
        jsonschema.validate(instance, INSTANCE)
    # One result per (mode x figure), with the scorer's interval, and the accuracy the board shows.
    results = {r["evaluation_result_id"]: r for r in aggregate["evaluation_results"]}
    assert set(results) == {"text/accuracy", "text/answered", "adaptive/accuracy", "adaptive/answered"}
    adaptive = results["adaptive/accuracy"]
    assert adaptive["score_details"]["score"] == row.results["modes"]["adaptive"]["accuracy"]["overall"]["value"]
    interval = adaptive["score_details"]["uncertainty"]["confidence_interval"]
    assert interval["confidence_level"] == 0.95 and interval["lower"] <= adaptive["score_details"]["score"]
    # The tools offered in adaptive mode, none in text mode; cost where EEE's HAL adapter puts it (a string).
    assert adaptive["generation_config"]["generation_args"]["agentic_eval_config"]["available_tools"]
    assert "agentic_eval_config" not in results["text/accuracy"]["generation_config"]["generation_args"]
    assert adaptive["generation_config"]["additional_details"]["total_cost_usd"] == str(0.002 * 9)
    assert aggregate["model_info"]["additional_details"]["model_availability"] == "closed_weights"
    # Process figures and failures as strings; an undefined one is "not available", never 0.
    details = adaptive["score_details"]["details"]
    assert details["failures.timeout"] == "1" and details["process.kcov"] == "0.25"
    text_details = results["text/accuracy"]["score_details"]["details"]
    assert text_details["process.tool_eff"] == "not available: no tool calls in this file (text lines)"


def test_the_public_sees_dev_instances_only_with_links_to_their_images(client, row: Submission) -> None:
    _status, _aggregate, instances = _eee(client, row)
    assert {i["sample_id"] for i in instances} == DEV and len(instances) == 2 * len(DEV)
    agentic = next(i for i in instances if i["sample_id"] == "s1" and i["evaluation_name"].endswith("adaptive"))
    assert agentic["interaction_type"] == "agentic" and agentic["output"] is None
    calls = [c for m in agentic["messages"] for c in (m.get("tool_calls") or [])]
    assert [c["name"] for c in calls] == ["rotate", "zoom_in"] and calls[0]["arguments"] == {"angle": "90"}
    base = f"{settings.SITE_URL}/b/{row.benchmark.slug}/m/{row.pk}/s/s1"
    assert agentic["metadata"]["media"] == json.dumps([f"{base}/media/0/still"])
    assert agentic["metadata"]["tool_image.img2"] == f"{base}/adaptive/img2.png"
    assert agentic["input"]["reference"] == [helpers.answer_of("s1")]
    single = next(i for i in instances if i["sample_id"] == "s2" and i["evaluation_name"].endswith("text"))
    assert single["interaction_type"] == "single_turn" and single["messages"] is None
    assert single["token_usage"] == {"input_tokens": 1000, "output_tokens": 100, "total_tokens": 1100}
    # The file records no turns for it: not recorded (null), not 0.
    assert single["evaluation"] == {"score": 1.0, "is_correct": True, "num_turns": None, "tool_calls_count": 0}
    failed = next(i for i in instances if i["sample_id"] == "s5" and i["evaluation_name"].endswith("adaptive"))
    assert failed["error"] == "timeout: no answer after 60 s" and failed["metadata"]["failure_class"] == "timeout"


def test_the_owner_gets_every_split_without_test_gold_or_media(client, row: Submission) -> None:
    client.force_login(row.owner)
    _status, _aggregate, instances = _eee(client, row)
    assert {i["sample_id"] for i in instances} == set(helpers.UIDS)
    test = [i for i in instances if i["sample_id"] not in DEV]
    assert test and all(i["input"]["reference"] == [] and "media" not in i["metadata"] for i in test)
    for instance in instances:
        jsonschema.validate(instance, INSTANCE)


def test_a_private_row_is_not_exported_to_others(client, row: Submission) -> None:
    Submission.objects.filter(pk=row.pk).update(is_public=False)
    assert _eee(client, row)[0] == 404
    assert client.get(reverse("leaderboard:hf_eval_results", args=[row.benchmark.slug, row.pk])).status_code == 404
    client.force_login(row.owner)
    assert _eee(client, row)[0] == 200


def test_export_eee_writes_the_two_files(row: Submission, tmp_path) -> None:
    out = StringIO()
    folder = tmp_path / "out"
    call_command("export_eee", str(row.pk), str(folder), stdout=out)
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert len(written) == 2 and all(w.startswith("data/hand/Example-Lab/Alpha/") for w in written)
    aggregate = json.loads(next(folder.rglob("*.json")).read_text())
    jsonschema.validate(aggregate, AGGREGATE)
    assert "4 results, 10 instances" in out.getvalue()


def test_the_hf_eval_results_parse_and_name_the_row(client, row: Submission) -> None:
    response = client.get(reverse("leaderboard:hf_eval_results", args=[row.benchmark.slug, row.pk]))
    assert response.status_code == 200
    files = {k: yaml.safe_load(v) for k, v in _unzip(response.content).items()}
    assert set(files) == {".eval_results/hand.yaml", ".eval_results/hand_with_tools.yaml"}
    plain, tools = files[".eval_results/hand.yaml"][0], files[".eval_results/hand_with_tools.yaml"][0]
    assert plain["dataset"] == {"id": "example-org/hand-bench", "task_id": "hand"} and "notes" not in plain
    assert tools["notes"] == "With tools"
    assert plain["value"] == round(row.results["modes"]["text"]["accuracy"]["overall"]["percent"], 2)
    assert tools["source"]["url"] == f"{settings.SITE_URL}/b/hand/m/{row.pk}/"


def test_no_hf_entries_for_a_benchmark_not_on_the_hub(client, row: Submission) -> None:
    Benchmark.objects.filter(pk=row.benchmark_id).update(hf_dataset="")
    response = client.get(reverse("leaderboard:hf_eval_results", args=[row.benchmark.slug, row.pk]))
    assert response.status_code == 404


def test_the_model_page_links_both_exports(client, row: Submission) -> None:
    page = client.get(reverse("leaderboard:model", args=[row.benchmark.slug, row.pk])).content.decode()
    assert reverse("leaderboard:eee", args=["hand", row.pk]) in page
    assert reverse("leaderboard:hf_eval_results", args=["hand", row.pk]) in page
