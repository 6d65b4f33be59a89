"""The run protocol page (leaderboard/protocol.py, `/b/<slug>/protocol/`): what a harness run does on a
benchmark, read from the code the run uses, linked from the board and the data page; a read that writes
nothing."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Benchmark
from annotation.tests import thinking_files as tf
from annotation.tests.release_files import run_import
from evaluation.harness.prompts import PROMPTS_DIR

pytestmark = pytest.mark.django_db


@pytest.fixture
def treebench(tmp_path: Path) -> Benchmark:
    run_import(tf.write_treebench(tmp_path / "release"), slug="tree")
    return Benchmark.objects.get(slug="tree")


def test_the_page_states_prompts_tools_images_turns_and_scoring(treebench: Benchmark) -> None:
    with CaptureQueriesContext(connection) as ctx:
        page = Client().get("/b/tree/protocol/").content.decode()
    assert not [q for q in ctx.captured_queries if re.match(r"\s*(INSERT|UPDATE|DELETE)", q["sql"], re.I)]
    # TreeBench is a VLMEvalKit dataset: VLMEvalKit's prompt family, one versioned file per mode, with its digest.
    for mode in ("text", "adaptive", "oracle", "blind"):
        name = f"vlmevalkit.{mode}.v1"
        digest = hashlib.sha256((PROMPTS_DIR / f"{name}.txt").read_bytes()).hexdigest()
        assert f"evaluation/harness/prompts/{name}.txt" in page and digest[:16] in page
    assert "<code>zoom_in</code>" in page and "&quot;parameters&quot;" in page  # the tools, with their schemas
    assert "<code>max_turns</code> 8 by default" in page
    assert "64,000,000 pixels" in page and "over 4,194,304 pixels" in page  # the tools' cap, the view's
    assert "Scoring profile <code>treebench</code>" in page and "mean IoU" in page
    assert "the last &lt;answer&gt;...&lt;/answer&gt;" in page


def test_the_board_and_the_data_page_link_to_it(treebench: Benchmark) -> None:
    client = Client()
    for url in ("/b/tree/", "/b/tree/data/"):
        assert 'href="/b/tree/protocol/"' in client.get(url).content.decode()


def test_its_version_changes_with_what_a_run_does(treebench: Benchmark) -> None:
    def version() -> str:
        page = Client().get("/b/tree/protocol/").content.decode()
        found = re.search(r"Protocol version <code>([0-9a-f]{12})</code>", page)
        assert found is not None
        return found.group(1)

    before = version()
    assert version() == before  # the same benchmark, the same protocol
    Benchmark.objects.filter(pk=treebench.pk).update(scoring="generic")  # another family and scoring
    assert version() != before


def test_a_benchmark_with_declared_model_tools_says_adaptive_is_not_run(treebench: Benchmark) -> None:
    Benchmark.objects.filter(pk=treebench.pk).update(
        declared_tools=[{"name": "OCR", "description": "reads text", "args_schema": {}}])
    page = Client().get("/b/tree/protocol/").content.decode()
    assert 'id="adaptive-refused"' in page and "OCR" in page
