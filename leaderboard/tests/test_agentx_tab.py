"""The Agent-X tab: a hand-made Agent-X release imported (its manifest declares the figure set), a
prediction file scored through the real pipeline, and the exact figures computed by hand; the
judged ones say "needs an LLM judge". A benchmark without the figure set has no such tab."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.base import ContentFile

from annotation.models import Benchmark
from annotation.tests import test_release_agentx as rel
from evaluation import pipeline, services
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db

TOOLMETA = [*rel.TOOLMETA, {"name": "ImageGenerator", "description": "Draws an image from keywords.",
                            "inputs": [{"type": "text", "name": "keywords", "description": "what to draw",
                                        "optional": False}],
                            "outputs": [{"type": "image", "name": "image", "description": "the drawing"}]}]


def tasks() -> dict:
    return {
        # names-only chain (one input is a string): OCR, Calculator
        "0": rel.task("What is the sum of the two prices?", "sign.jpg",
                      [rel.step(1, "OCR", "Read the prices."), rel.step(2, "Calculator", "Add.", {"expression": "2+3"})],
                      query_type="Factual"),
        # every input an object: arguments kept, the generation call's among them
        "1": rel.task("Draw the car in red.", "sign.jpg",
                      [rel.step(1, "SceneDescriber", "Describe.", {"image": "sign.jpg"}),
                       rel.step(2, "ImageGenerator", "Draw.", {"keywords": "a red car"})],
                      value="an image of a red car", query_type="Generative"),
        "2": rel.task("How many signs?", "sign.jpg", [rel.step(1, "OCR", "Read.")], value="7", query_type="Interpretive"),
    }


def line(uid: str, answer: str, calls: list[tuple[str, dict]]) -> dict:
    return {"sample_id": uid, "mode": "adaptive", "answer": f"<answer>{answer}</answer>",
            "steps": [{"thought": f"Call {name}.", "tool": {"name": name, "args": args}} for name, args in calls]}


PREDICTIONS = [
    line("0", "5", [("OCR", {}), ("OCR", {}), ("Calculator", {"expression": "2+3"})]),  # F1 .8, precision 1/3, right
    line("1", "here it is", [("SceneDescriber", {}), ("ImageGenerator", {"keywords": "A red  car"})]),  # 1, 1, gen 1
    line("2", "8", []),  # no calls: F1 0, precision 0, wrong
]


@pytest.fixture
def agentx(tmp_path) -> Benchmark:
    rel.run_import(rel.write_release(tmp_path / "agentx", tasks(), toolmeta=TOOLMETA))
    benchmark = Benchmark.objects.get(slug="agentx")
    assert benchmark.figures == ["agentx"]
    sub = services.submission_create(
        benchmark=benchmark, owner=helpers.owner(), model_name="Agent One", is_public=True, enforce_limits=False,
        enqueue=False, file=ContentFile("\n".join(json.dumps(p) for p in PREDICTIONS).encode(), name="p.jsonl"))
    assert pipeline.submission_process_sync(submission=sub).status == "done"
    return helpers.refreshed(benchmark)


def test_the_agentx_tab_shows_the_exact_figures_and_no_made_up_judged_ones(client, agentx) -> None:
    page = client.get("/b/agentx/agentx/")
    assert page.status_code == 200
    html = page.content.decode()
    values = dict(re.findall(r'<td class="num" data-figure="(\w+)"><span class="value">([\d.]+)</span>', html))
    assert values == {"toolset_accuracy": "60.0",  # (0.8 + 1 + 0) / 3
                      "tool_precision": "44.4",  # (1/3 + 1 + 0) / 3
                      "goal_accuracy": "50.0",  # tasks 0 (right) and 2 (wrong); task 1 is generative
                      "goal_accuracy_generation": "100.0"}  # task 1's generation arguments match
    assert "n=2" in html and len(re.findall(r"<td class=\"judged muted\" data-figure=\"\w+\">needs an LLM judge</td>", html)) == 6
    assert 'href="/b/agentx/agentx/"' in html  # the tab is in the navigation


def test_a_benchmark_without_the_figure_set_has_no_agentx_tab(client, tmp_path) -> None:
    helpers.make_benchmark(tmp_path)
    assert client.get("/b/hand/agentx/").status_code == 404
    assert "/b/hand/agentx/" not in client.get("/b/hand/").content.decode()
