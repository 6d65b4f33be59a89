"""MMReason's step score, labelled as such on an MMReason-shaped benchmark only (docs/metrics.md,
section 6), and our versioned judge prompt copied into the metrics page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluation.judges.base import PROMPT_VERSIONS, PROMPTS_DIR
from evaluation.services import benchmark_results_bump

ROOT = Path(__file__).resolve().parents[2]


def _process(client, slug: str) -> str:  # noqa: ANN001
    html = client.get(f"/b/{slug}/process/").content.decode()
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.django_db
def test_the_step_score_is_mmreasons_on_an_mmreason_shaped_benchmark_only(client, hand) -> None:  # noqa: ANN001
    plain = _process(client, "hand")
    assert "Step score" in plain and "MMReason" not in plain
    hand.benchmark.figures = ["mmreason"]
    hand.benchmark.save(update_fields=["figures"])
    benchmark_results_bump(benchmark_id=hand.benchmark.pk)
    shaped = _process(client, "hand")
    version = PROMPT_VERSIONS["step_scores"]
    assert "MMReason step score" in shaped
    assert f"our judge prompt step_scores {version}" in shaped and "have not released theirs" in shaped
    assert "Alpha" in shaped  # the rows are still there


def test_the_metrics_page_shows_the_current_step_prompt_with_its_version() -> None:
    version = PROMPT_VERSIONS["step_scores"]
    prompt = (PROMPTS_DIR / f"step_scores.{version}.txt").read_text(encoding="utf-8").rstrip("\n")
    doc = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert f"Prompt `step_scores {version}`:\n\n```text\n{prompt}\n```" in doc
    assert "have not released their judge prompt" in doc
