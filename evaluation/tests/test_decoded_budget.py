"""The decoded originals a run's pairs hold at once are bounded per process (issue 35: an 8K run's memory at 16
pairs in flight): a pair waits for room before it decodes, gives it back when its line is written (whatever
ended it), and the answers are the same as without the bound."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from evaluation.harness import loop
from evaluation.harness.cache import SqliteRequestCache
from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.loop import DecodedBudget, Protocol
from evaluation.harness.runner import run
from evaluation.harness.tools import ADAPT_TOOLS
from evaluation.tests.harness_fixtures import simulated_model, write_items


def test_the_budget_never_holds_more_than_its_limit_and_lets_a_larger_pair_go_alone() -> None:
    budget = DecodedBudget(limit=100)
    during: list[int] = []

    def pair(pixels: int) -> None:
        got = budget.acquire(pixels)
        during.append(budget.held)
        time.sleep(0.01)
        budget.release(got)

    threads = [threading.Thread(target=pair, args=(p,)) for p in (60, 60, 40, 250, 30, 70) * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert budget.held == 0 and budget.peak <= 100 and max(during) <= 100


@pytest.fixture
def one_image_at_a_time():
    before = loop.DECODED
    loop.DECODED = DecodedBudget(limit=1)  # room for one pair's originals, whatever their size
    yield loop.DECODED
    loop.DECODED = before


def test_a_run_with_room_for_one_image_gives_the_same_answers_and_gives_the_room_back(
        one_image_at_a_time, tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=6)
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        endpoint = Endpoint(Settings(model="sim-model", base_url=url, max_retries=1, backoff=0.02),
                            cache=SqliteRequestCache(tmp_path / "c.sqlite3", owner="user:1"))
        bounded, summary = run(items, ["adaptive"], endpoint, Protocol(tools=ADAPT_TOOLS), concurrency=4)
        loop.DECODED = DecodedBudget()
        free, _ = run(items, ["adaptive"], Endpoint(endpoint.settings, cache=SqliteRequestCache(
            tmp_path / "d.sqlite3", owner="user:1")), Protocol(tools=ADAPT_TOOLS), concurrency=4)
    assert summary.answered == 6
    assert one_image_at_a_time.peak == 1 and one_image_at_a_time.held == 0  # one pair's originals at a time
    assert [(x["sample_id"], x["answer"]) for x in bounded] == [(x["sample_id"], x["answer"]) for x in free]
