"""A small benchmark with a video sample and a two-image sample, and one scored public submission."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.files.base import ContentFile

from annotation.models import Benchmark
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line
from annotation.tests.media_files import write_image, write_video
from evaluation import pipeline, services
from evaluation.models import Submission
from leaderboard.tests.helpers import owner

SLUG = "media"


def make_media_benchmark(folder: Path) -> Benchmark:
    write_video(folder / "walk.mp4", frames=40)
    write_image(folder / "left.png", (120, 90), (200, 90, 30))
    write_image(folder / "right.png", (160, 64), (20, 180, 60))
    write_image(folder / "secret.png", (50, 50), (9, 9, 9))
    common = {"transform": [], "key_steps": ["Look at the right image."], "split": "dev"}
    lines = [
        sample_line("vid", image="walk.mp4", regions=[], toolchain=[], answer="4", **common),
        sample_line("pair", image=None, images=["left.png", "right.png"], answer="7",
                    regions=[{"box": [10, 10, 100, 50], "image": "img1"}],
                    toolchain=[{"tool": "zoom_in", "args": {"bbox": [10, 10, 100, 50]}, "input": "img1"}], **common),
        sample_line("hidden", image=None, images=["secret.png", "walk.mp4"], answer="1", regions=[], toolchain=[],
                    **{**common, "split": "test"}),
    ]
    (folder / "benchmark.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    benchmark_import(path=folder / "benchmark.jsonl", slug=SLUG)
    return Benchmark.objects.get(slug=SLUG)


def submit_media(benchmark: Benchmark) -> Submission:
    lines = [
        {"sample_id": "vid", "mode": "adaptive", "answer": "<answer>4</answer>"},
        {"sample_id": "pair", "mode": "adaptive", "answer": "<answer>7</answer>", "steps": [
            {"thought": "Zoom into the right image.",
             "tool": {"name": "zoom_in", "args": {"bbox": [10, 10, 100, 50]}, "input": "img1"}},
            {"thought": "Seven."}]},
        {"sample_id": "hidden", "mode": "adaptive", "answer": "<answer>1</answer>"},
    ]
    body = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
    sub = services.submission_create(
        benchmark=benchmark, owner=owner(), file=ContentFile(body, name="p.jsonl"), model_name="Viewer",
        is_public=True, enforce_limits=False, enqueue=False, weights="open", organisation="Lab",
    )
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done", sub.failure_reason
    return sub
