"""Tool outputs shown (evaluation/metrics/tool_effect.py, metrics.md section 15) against real harness runs: the
simulated model in its own process, the real tool registry; one run sends it each tool's image, one sends it
none (as through a gateway that drops images after the first turn), and the scorer tells them apart from the
lines' ``run`` records alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.harness.cache import MemoryRequestCache
from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.loop import Protocol
from evaluation.harness.runner import run
from evaluation.harness.tools import ADAPT_TOOLS
from evaluation.judges import OfflineJudge
from evaluation.metrics import score_submission
from evaluation.metrics.tool_effect import outputs_shown
from evaluation.metrics.types import SubmissionReport
from evaluation.tests.harness_fixtures import log_lines, simulated_model, write_items


def _run(tmp_path: Path, name: str, tool_images: bool, *args: str) -> tuple[list[dict[str, Any]], SubmissionReport,
                                                                             list[dict]]:
    items, key = write_items(tmp_path / "data", n=6)
    log = tmp_path / f"{name}.jsonl"
    with simulated_model(key, log, "--tool-calls", "2", *args) as url:
        endpoint = Endpoint(Settings(model="sim-model", base_url=url), cache=MemoryRequestCache())
        lines, _ = run(items, ["text", "adaptive"], endpoint,
                       Protocol(tools=ADAPT_TOOLS, tool_images=tool_images), concurrency=2)
    samples = [{k: e[k] for k in ("uid", "answer", "answer_type", "options")}
               for e in map(json.loads, key.read_text().splitlines())]
    return lines, score_submission(samples, lines, judge=OfflineJudge()), log_lines(log)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("shown")
    return {"sent": _run(folder, "sent", True),
            "dropped": _run(folder, "dropped", False, "--ignore-tool-images")}


def test_every_tool_image_sent_is_shown(runs: dict[str, Any]) -> None:
    _, report, _ = runs["sent"]
    shown = report.tool_effect.shown
    assert shown.n == 12 and shown.count == 12  # 6 adaptive lines, 2 successful calls each


def test_a_run_whose_model_is_sent_no_tool_image_shows_zero(runs: dict[str, Any]) -> None:
    lines, report, log = runs["dropped"]
    # What the model received: after its first turn, no image at all.
    assert all(not r["new_images"] for r in log if r["mode"] == "adaptive" and r["turn"] > 1)
    effect = report.tool_effect
    assert (effect.shown.count, effect.shown.n) == (0, 12) and effect.shown.percent == 0.0
    # The model answered as in text mode: the tools changed nothing, and the interval holds 0.
    g = effect.overall
    assert g is not None and g.contribution.value == 0 and g.solved == g.broken == 0
    assert g.contribution.interval is not None and g.contribution.interval.low <= 0 <= g.contribution.interval.high
    # Each call's output is flagged as never shown, on its own line.
    adaptive = [line for line in lines if line["mode"] == "adaptive"]
    assert all(outputs_shown(line["steps"], line["run"])[2] == ("img1", "img2") for line in adaptive)
