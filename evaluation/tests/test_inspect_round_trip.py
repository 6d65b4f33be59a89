"""The round trip of issue 36: a harness run of a benchmark (the simulated model in its own process, the
real tool registry), uploaded as our JSON Lines, and the same run written as Inspect logs (one per mode,
zstd, pooled inputs, images as attachments; zipped together) and uploaded back: the two rows score the
same to the last digit, record the same tool images, and show the same tool images in the sample browser."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from annotation.imagetools import run_chain
from annotation.media import chain_inputs
from annotation.models import Sample
from evaluation import pipeline, services
from evaluation.harness.cache import MemoryRequestCache
from evaluation.harness.client import Settings
from evaluation.harness.loop import Protocol, _array_view
from evaluation.harness.simulated import serving
from evaluation.models import PredictionResult, Submission
from evaluation.run_inputs import run_benchmark, write_simulated_key
from evaluation.tests import inspect_logs
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db


def _tool_images(lines: list[dict[str, Any]]) -> dict[tuple[str, str, str], bytes]:
    """Each successful call's image as the harness sent it, made again by the registry from the stored sample."""
    out: dict[tuple[str, str, str], bytes] = {}
    for line in lines:
        calls = [s["tool"] for s in line.get("steps") or [] if s.get("tool") and not s["tool"].get("error")]
        if not calls:
            continue
        first, extras = chain_inputs(Sample.objects.get(uid=line["sample_id"]))
        ran = run_chain(first, [{"tool": c["name"], "args": c["args"], "input": c["input"], "output": c["output"]}
                                for c in calls], extra_images=extras)
        for c in calls:
            data = _array_view(c["output"], ran.images[c["output"]], Protocol().max_image_pixels).data
            assert hashlib.sha256(data).hexdigest() == line["run"]["tool_outputs"][c["output"]]  # the premise
            out[(line["sample_id"], line["mode"], c["output"])] = data
    return out


def _submit(benchmark: Any, content: bytes, name: str, fmt: str) -> Submission:
    sub = services.submission_create(benchmark=benchmark, owner=helpers.owner(), file=ContentFile(content, name=name),
                                     model_name=f"Sim {fmt}", is_public=True, enforce_limits=False, enqueue=False,
                                     file_format=fmt, price_input_per_mtok=0.3, price_output_per_mtok=1.2)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", (sub.failure_reason, sub.errors)
    return sub


def _rows(sub: Submission) -> list[tuple]:
    return sorted(PredictionResult.objects.filter(submission=sub).values_list(
        "sample__uid", "mode", "correct", "extracted", "n_steps", "n_calls", "calls", "tokens", "cost_usd",
        "latency_ms", "iou", "kcov", "step_score"))


def test_a_harness_run_written_as_inspect_logs_comes_back_as_the_same_row(tmp_path: Path, client) -> None:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    out = tmp_path / "run.jsonl"
    with serving(key, "--tool-calls", "2") as url:
        run_benchmark(benchmark=benchmark, settings=Settings(model="sim-rt", base_url=url, price_input=0.3,
                                                             price_output=1.2),
                      modes=["text", "adaptive"], concurrency=2, cache=MemoryRequestCache(), out=out, tool_images=True)
    content = out.read_bytes()
    lines = [json.loads(x) for x in content.splitlines()]
    media = {s.uid: [s.image.open("rb").read()] for s in Sample.objects.filter(benchmark=benchmark)}
    images = _tool_images(lines)
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as archive:
        for mode in ("text", "adaptive"):
            archive.writestr(f"2026-08-01_{mode}.eval", inspect_logs.log_of_lines(
                [x for x in lines if x["mode"] == mode], media=media, tool_images=images, model="sim-rt",
                zstd=True, pooled=True))
    mine = _submit(benchmark, content, "harness-run.jsonl", "jsonl")
    theirs = _submit(benchmark, bundle.getvalue(), "inspect-logs.zip", "inspect")

    assert theirs.results == mine.results
    assert _rows(theirs) == _rows(mine)
    adaptive = mine.results["modes"]["adaptive"]
    assert adaptive["process"]["mean_calls"]["value"] > 0 and mine.results["tool_effect"]["shown"]["n"] > 0
    # The same tool images recorded (their SHA-256 per reference) ...
    with theirs.file.open("rb") as handle:
        converted = {(x["sample_id"], x["mode"]): x for x in map(json.loads, handle.read().splitlines())}
    for line in lines:
        assert converted[(line["sample_id"], line["mode"])]["run"]["tool_outputs"] == line["run"]["tool_outputs"]
    # ... and shown: the sample browser's image of a call is the same for both rows.
    uid, ref = next((x["sample_id"], ref) for x in lines if x["mode"] == "adaptive" and x["run"]["tool_outputs"]
                    and helpers.SAMPLES[x["sample_id"]][2] == "dev" for ref in x["run"]["tool_outputs"])
    shown = [client.get(reverse("leaderboard:sample_image", args=[benchmark.slug, sub.pk, uid, "adaptive", ref]))
             for sub in (mine, theirs)]
    assert [r.status_code for r in shown] == [200, 200] and shown[0].content == shown[1].content
