"""The HR-Bench-shaped demo (fixtures/releases/hrbench_demo.py; issue 35 item 4): large images whose answer
is a small tag, imported through the VLMEvalKit reader (HR-Bench's profile), run by `run_model` against the
simulated model in its own process: text and blind cannot read the tag, adaptive can when it zooms at it
on the full-resolution original, and the scores and HR-Bench's cycle figure say so."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.models import Benchmark
from annotation.tests.release_files import run_import
from evaluation.models import Submission
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import simulated_model
from fixtures.releases import hrbench_demo

pytestmark = pytest.mark.django_db
CAP = 1_000_000


def test_only_a_zoom_at_the_tag_reads_it(tmp_path: Path) -> None:
    get_user_model().objects.create_user("runner", "runner@example.org", "pw", is_staff=True)
    run_import(hrbench_demo.write(tmp_path / "release", n=6, size=(2400, 1600)), slug=hrbench_demo.SLUG)
    benchmark = Benchmark.objects.get(slug=hrbench_demo.SLUG)
    assert benchmark.scoring == "hrbench"
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    assert all("detail" in json.loads(line) for line in key.read_text().splitlines())
    with simulated_model(key, tmp_path / "log.jsonl", "--tool-calls", "1") as url:
        call_command("run_model", hrbench_demo.SLUG, "--endpoint", url, "--model", "sim", "--modes",
                     "text,adaptive,blind", "--out", str(tmp_path / "p.jsonl"), "--cache", str(tmp_path / "c.sqlite3"),
                     "--no-progress", "--max-image-pixels", str(CAP), "--submit", "--user", "runner", "--sync",
                     "--model-name", "Sim zoomer", stdout=StringIO())
    lines = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    for line in (x for x in lines if x["mode"] != "blind"):
        (width, height), = line["run"]["images_sent_sizes"][0]
        assert width * height <= CAP  # the 3.84 MP images went as views
    results = Submission.objects.get(model_name="Sim zoomer").results
    accuracy = {m: results["modes"][m]["accuracy"]["overall"]["count"] for m in ("text", "adaptive", "blind")}
    assert accuracy == {"text": 0, "adaptive": 6, "blind": 0}
    assert results["author_figures"]["adaptive"]["average"]["all"] == 1.0
    assert results["author_figures"]["text"]["average"]["all"] == 0.0


def test_a_zoom_in_the_wrong_place_reads_nothing(tmp_path: Path) -> None:
    """Without the reference zoom the simulated model zooms on the middle half of img0: right exactly on the
    samples whose tag lies inside that box."""
    get_user_model().objects.create_user("runner", "runner@example.org", "pw", is_staff=True)
    size = (2400, 1600)
    run_import(hrbench_demo.write(tmp_path / "release", n=6, size=size), slug=hrbench_demo.SLUG)
    benchmark = Benchmark.objects.get(slug=hrbench_demo.SLUG)
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    entries = [{**json.loads(x), "toolchain": []} for x in key.read_text().splitlines()]
    key.write_text("".join(json.dumps(e) + "\n" for e in entries))
    middle = [size[0] // 4, size[1] // 4, 3 * size[0] // 4, 3 * size[1] // 4]
    inside = sum(1 for e in entries if middle[0] <= e["detail"][0] and middle[1] <= e["detail"][1]
                 and e["detail"][2] <= middle[2] and e["detail"][3] <= middle[3])
    with simulated_model(key, tmp_path / "log.jsonl", "--tool-calls", "1") as url:
        call_command("run_model", hrbench_demo.SLUG, "--endpoint", url, "--model", "sim", "--modes", "adaptive",
                     "--out", str(tmp_path / "p.jsonl"), "--cache", str(tmp_path / "c.sqlite3"), "--no-progress",
                     "--max-image-pixels", str(CAP), "--submit", "--user", "runner", "--sync",
                     "--model-name", "Sim middle", stdout=StringIO())
    results = Submission.objects.get(model_name="Sim middle").results
    assert results["modes"]["adaptive"]["accuracy"]["overall"]["count"] == inside < 6
