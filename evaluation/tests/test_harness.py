"""The harness library (evaluation/harness) against the simulated model in its own process, with the
real tool registry and real images: what the model is sent, what a line records, the cache, the
failure classes, the budget, and a run killed midway."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from annotation.imagetools import Limits, encode_png, load_image, oracle_image, run_chain
from evaluation.harness.cache import MemoryRequestCache, SqliteRequestCache
from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.loop import Protocol
from evaluation.harness.runner import Patience, estimate, run
from evaluation.harness.simulated import NO_IMAGE, answer_for
from evaluation.harness.tools import ADAPT_TOOLS
from evaluation.tests.harness_fixtures import ROOT, log_lines, simulated_model, wait_for, write_items

MODES = ["text", "adaptive", "oracle", "blind"]


def _endpoint(url: str, cache=None, **kw) -> Endpoint:  # noqa: ANN001
    return Endpoint(Settings(model="sim-model", base_url=url, **kw), cache=cache if cache is not None else MemoryRequestCache())


def _protocol(**kw) -> Protocol:  # noqa: ANN003
    return Protocol(family=kw.pop("family", "generic"), tools=kw.pop("tools", ADAPT_TOOLS), **kw)


def test_library_imports_no_django() -> None:
    code = ("import sys, evaluation.harness.runner, evaluation.harness.simulated, evaluation.endpoint_limits;"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('django','rest_framework','celery','leaderboard')];"
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_answers_follow_the_simulated_policy_and_every_tool_image_reaches_the_model(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data")
    keyed = {json.loads(x)["uid"]: json.loads(x) for x in key.read_text().splitlines()}
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log, "--tool-calls", "2") as url:
        lines, summary = run(items, MODES, _endpoint(url), _protocol(), concurrency=4)
    assert summary.lines == len(items) * 4 and summary.answered == summary.lines and not summary.failures
    for line in lines:
        entry = keyed[line["sample_id"]]
        mode = line["mode"]
        first = line["run"]["images_sent"][0]
        # The simulated model reads an oracle image identical to img0 as the text mode.
        seen_as = "text" if mode == "oracle" and first == [entry["img0_sha256"]] else mode
        assert line["answer"] == answer_for(entry, seen_as), line
        assert line["run"]["model_ids"] == ["sim-model"]
        assert line["run"]["prompt_version"] == f"generic.{mode}.v1"
        assert line["run"]["answer_extraction"] == "answer_tag"
        if mode == "blind":
            assert first == []
        if mode == "text":
            assert first == [entry["img0_sha256"]]

    # Every call's output image reached the model, byte for byte what the registry makes.
    received = [r for r in log_lines(log) if r["mode"] == "adaptive"]
    by_uid = {}
    for r in received:
        by_uid.setdefault(r["uid"], []).extend(r["new_images"])
    for line in (x for x in lines if x["mode"] == "adaptive"):
        item = next(i for i in items if i.uid == line["sample_id"])
        calls = [s["tool"] for s in line["steps"] if "tool" in s]
        assert len(calls) == 2 and all(c["error"] is None for c in calls)
        chain = [{"tool": c["name"], "args": c["args"], "input": c["input"], "output": c["output"]} for c in calls]
        again = run_chain(load_image(item.media[0].path), chain)
        expected = [hashlib.sha256(encode_png(again.images[c["output"]])).hexdigest() for c in calls]
        assert [s for turn in line["run"]["images_sent"][1:] for s in turn] == expected
        assert by_uid[line["sample_id"]] == expected
        assert line["answer"] != NO_IMAGE and line["turns"] == 3
        assert line["answer_image"] == calls[-1]["output"] == "img2"

    # The oracle image is I_E: the transform applied, then cut to the regions.
    for line in (x for x in lines if x["mode"] == "oracle"):
        item = next(i for i in items if i.uid == line["sample_id"])
        want = encode_png(oracle_image(load_image(item.media[0].path), item.transform, item.regions))
        assert line["run"]["images_sent"][0] == [hashlib.sha256(want).hexdigest()]


def test_a_rerun_sends_no_request_and_makes_the_same_file(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=4)
    log = tmp_path / "log.jsonl"
    cache = SqliteRequestCache(tmp_path / "cache.sqlite3", owner="user:1")
    with simulated_model(key, log) as url:
        first, s1 = run(items, MODES, _endpoint(url, cache), _protocol(), out=tmp_path / "a.jsonl")
        sent = len(log_lines(log))
        again = SqliteRequestCache(tmp_path / "cache.sqlite3", owner="user:1")  # a new process would open it afresh
        second, s2 = run(items, MODES, _endpoint(url, again), _protocol(), out=tmp_path / "b.jsonl")
    assert s1.requests_sent == sent > 0
    assert s2.requests_sent == 0 and len(log_lines(log)) == sent
    assert s2.requests_cached == sent
    strip = lambda ls: [{**x, "latency_ms": 0, "run": {**x["run"], "cached_turns": 0}} for x in ls]  # noqa: E731
    assert strip(first) == strip(second)


def test_each_failure_class_is_recorded_never_dropped(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=8)
    script = {"s00": "timeout", "s01": "error500", "s02": "rate429", "s03": "bad_arguments",
              "s04": "unknown_tool", "s05": "loop", "s06": "content_filter"}
    (tmp_path / "script.json").write_text(json.dumps(script))
    log = tmp_path / "log.jsonl"
    with simulated_model(key, log, "--script", str(tmp_path / "script.json"), "--slow", "3") as url:
        endpoint = _endpoint(url, timeout=1.0, max_retries=1, backoff=0.05)
        # s00 and s01 fail however often they are asked: the run's patience (short here) ends the run.
        lines, summary = run(items, ["adaptive"], endpoint, _protocol(max_turns=3), concurrency=8,
                             patience=Patience(seconds=0.5, backoff=0.05, backoff_max=0.1))
    assert summary.unavailable and summary.stopped is not None and "2 of 8 answers still missing" in summary.stopped
    by = {line["sample_id"]: line for line in lines}
    assert len(lines) == 8  # nothing dropped
    assert by["s00"]["failure"] == "timeout" and by["s00"]["answer"] is None
    assert by["s01"]["failure"] == "provider_error" and "HTTP 500" in by["s01"]["failure_detail"]
    assert by["s05"]["failure"] == "max_turns" and by["s05"]["turns"] == 3
    assert by["s06"]["failure"] == "content_filter"
    # A 429 with Retry-After is waited out, then answered.
    assert "failure" not in by["s02"] and by["s02"]["answer"]
    refused = [r for r in log_lines(log) if r["uid"] == "s02" and r["turn"] == 1]
    assert len(refused) == 2
    # A malformed call is the model's mistake: sent back as an error, recorded on the step, then answered.
    for uid, words in (("s03", "not valid JSON"), ("s04", 'unknown tool "magic_wand"')):
        assert "failure" not in by[uid]
        first_call = next(s["tool"] for s in by[uid]["steps"] if "tool" in s)
        assert words in first_call["error"]
    assert summary.failures == {"timeout": 1, "provider_error": 1, "max_turns": 1, "content_filter": 1}


def test_a_registry_failure_is_the_runs_tool_error(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=2)
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        lines, _ = run(items, ["adaptive"], _endpoint(url), _protocol(limits=Limits(time_limit_s=1e-9)))
    assert {line["failure"] for line in lines} == {"tool_error"}
    assert all("time limit" in line["failure_detail"] for line in lines)


def test_the_tagged_text_protocol_runs_the_same_tools(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=4)
    with simulated_model(key, tmp_path / "log.jsonl", "--tool-calls", "2") as url:
        lines, summary = run(items, ["adaptive"], _endpoint(url), _protocol(protocol="tagged_text"))
    assert summary.answered == 4
    for line in lines:
        calls = [s["tool"] for s in line["steps"] if "tool" in s]
        assert len(calls) == 2 and all(c["error"] is None for c in calls)
        assert line["run"]["protocol"] == "tagged_text" and line["answer"] != NO_IMAGE
        assert all(len(turn) == 1 for turn in line["run"]["images_sent"][1:])


def test_a_budget_stops_the_run_cleanly_and_keeps_what_is_done(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=8)
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        endpoint = _endpoint(url, price_input=1000.0, price_output=1000.0, budget_usd=1.5, max_tokens=100)
        planned = estimate(items, ["text"], endpoint, _protocol())
        lines, summary = run(items, ["text"], endpoint, _protocol(), concurrency=1)
    assert planned.cost_usd is not None and planned.cost_usd > 1.5
    assert summary.stopped and "budget of $1.5" in summary.stopped
    assert 0 < len(lines) < 8 and all(line["answer"] for line in lines)
    assert summary.spent_usd <= 1.5


_DRIVER = """
import json, sys
from evaluation.harness.cache import SqliteRequestCache
from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.items import Medium, RunItem
from evaluation.harness.loop import Protocol
from evaluation.harness.runner import run
from evaluation.harness.tools import ADAPT_TOOLS
url, items_path, cache_path, out = sys.argv[1:5]
items = [RunItem(**{**d, "media": tuple(Medium(**m) for m in d["media"])}) for d in json.load(open(items_path))]
endpoint = Endpoint(Settings(model="sim-model", base_url=url), cache=SqliteRequestCache(cache_path, owner="user:1"))
run(items, ["text", "adaptive"], endpoint, Protocol(tools=ADAPT_TOOLS), concurrency=2, out=out)
"""


def test_a_run_killed_midway_resumes_and_pays_for_nothing_twice(tmp_path: Path) -> None:
    items, key = write_items(tmp_path / "data", n=8)
    (tmp_path / "items.json").write_text(json.dumps([
        {**i.__dict__, "media": [m.__dict__ for m in i.media]} for i in items]))
    log = tmp_path / "log.jsonl"
    args = [str(tmp_path / "items.json"), str(tmp_path / "cache.sqlite3"), str(tmp_path / "out.jsonl")]
    with simulated_model(key, log, "--delay", "0.15", "--tool-calls", "2") as url:
        proc = subprocess.Popen([sys.executable, "-c", _DRIVER, url, *args], cwd=ROOT)
        wait_for(lambda: len(log_lines(log)) >= 10)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_at = len(log_lines(log))
        assert not (tmp_path / "out.jsonl").exists()
        done = subprocess.run([sys.executable, "-c", _DRIVER, url, *args], cwd=ROOT, timeout=120)
        assert done.returncode == 0
        resumed = len(log_lines(log))
        # A third run from the same cache, by the same owner against the same endpoint, sends nothing.
        subprocess.run([sys.executable, "-c", _DRIVER, url, *args], cwd=ROOT, timeout=120, check=True)
        assert len(log_lines(log)) == resumed
    bodies = Counter(r["body_sha256"] for r in log_lines(log))
    twice = sum(n - 1 for n in bodies.values())
    # Only requests in flight at the kill (at most the 2 threads' worth) could be sent again: every
    # answer that arrived was stored, and the resumed run replayed it.
    assert twice <= 2, bodies
    assert 10 <= killed_at < len(log_lines(log))
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(lines) == 16 and all(line["answer"] for line in lines)


@pytest.mark.parametrize("family", ["generic", "vtcbench", "vlmevalkit"])
def test_every_family_has_a_prompt_for_every_mode(family: str) -> None:
    from evaluation.harness.prompts import load_prompt

    for mode in MODES:
        prompt = load_prompt(family, mode)
        assert "{question_block}" in prompt.user and prompt.name == f"{family}.{mode}.v1"
