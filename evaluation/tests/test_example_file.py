"""The example prediction file the upload form offers (issue 38, item 7): on the benchmark's own sample ids, in
the upload format, accepted and scored as it is, with placeholder answers (never the gold)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.urls import reverse

from annotation.models import Benchmark, Sample
from evaluation import pipeline, services
from evaluation.tests.submission_helpers import UIDS, make_benchmark

pytestmark = pytest.mark.django_db


def _example(client, slug: str) -> list[dict]:  # noqa: ANN001
    response = client.get(reverse("leaderboard:example_predictions", args=[slug]))
    assert response.status_code == 200
    assert f'filename="{slug}-example-predictions.jsonl"' in response["Content-Disposition"]
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_the_example_file_covers_every_sample_and_is_scored_as_it_is(client, tmp_path) -> None:
    bench = make_benchmark(tmp_path)
    lines = _example(client, bench.slug)
    assert [(x["sample_id"], x["mode"]) for x in lines] == [(u, m) for u in UIDS for m in ("text", "adaptive")]
    assert lines[1]["steps"][0]["tool"]["name"] == "zoom_in"  # one tool call shows the format
    gold = dict(Sample.objects.filter(benchmark=bench).values_list("uid", "answer"))
    assert all(x["answer"] == "<answer>0</answer>" for x in lines) and "0" not in gold.values()  # placeholders
    owner = get_user_model().objects.create_user("newcomer")
    content = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    sub = services.submission_create(benchmark=bench, owner=owner, file=ContentFile(content, name="example.jsonl"),
                                     model_name="example", enforce_limits=False, enqueue=False)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", (sub.failure_reason, sub.errors)
    assert sub.results["modes"]["adaptive"]["accuracy"]["overall"]["n"] == len(UIDS)


def test_the_upload_form_offers_the_chosen_benchmarks_example_first(client, tmp_path) -> None:
    bench = make_benchmark(tmp_path)
    make_benchmark(tmp_path / "other", slug="other")
    client.force_login(get_user_model().objects.create_user("newcomer"))
    page = client.get(reverse("evaluation:new_for", args=["other"])).content.decode()
    first = page.index('id="example-files"')
    assert page.index(reverse("leaderboard:example_predictions", args=["other"]), first) < page.index(
        reverse("leaderboard:example_predictions", args=[bench.slug]), first)


def test_a_benchmark_without_samples_has_no_example(client) -> None:
    Benchmark.objects.create(slug="paper-only", name="Paper only")
    assert client.get(reverse("leaderboard:example_predictions", args=["paper-only"])).status_code == 404
