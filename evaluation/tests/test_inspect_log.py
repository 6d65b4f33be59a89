"""Inspect AI ``.eval`` logs in (evaluation/converters/inspect_log.py, zipread.py; spec interop.md).

A real harness run (the simulated model in its own process, the real tool registry) is written as an
Inspect log, old (deflate, inputs whole) and new (zstd, pooled inputs), images as attachments; the
converted lines score exactly as the run's own lines do, tool images (their SHA-256) included."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import cv2
import pytest

from annotation.imagetools import resolve_tool_name, run_chain
from evaluation.converters import BenchmarkContext, convert
from evaluation.converters.zipread import ZSTD
from evaluation.harness.cache import MemoryRequestCache
from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.loop import Protocol, _array_view
from evaluation.harness.runner import run
from evaluation.harness.tools import ADAPT_TOOLS
from evaluation.judges import OfflineJudge
from evaluation.metrics import score_submission
from evaluation.reports import report_to_json
from evaluation.tests import inspect_logs
from evaluation.tests.harness_fixtures import simulated_model, write_items


def tool_images(items: list[Any], lines: list[dict[str, Any]]) -> dict[tuple[str, str, str], bytes]:
    """Each call's output image as the harness sent it (PNG), made again by the registry from the line's calls."""
    media = {item.uid: item for item in items}
    out: dict[tuple[str, str, str], bytes] = {}
    for line in lines:
        calls = [s["tool"] for s in line.get("steps") or [] if s.get("tool") and not s["tool"].get("error")]
        if not calls:
            continue
        first = cv2.imread(media[line["sample_id"]].media[0].path, cv2.IMREAD_COLOR)
        chain = [{"tool": c["name"], "args": c["args"], "input": c["input"], "output": c["output"]} for c in calls]
        ran = run_chain(first, chain)
        for c in calls:
            picture = _array_view(c["output"], ran.images[c["output"]], Protocol().max_image_pixels)
            out[(line["sample_id"], line["mode"], c["output"])] = picture.data
    return out


@pytest.fixture(scope="module")
def harness_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("inspect")
    items, key = write_items(folder / "data", n=6)
    with simulated_model(key, folder / "log.jsonl", "--tool-calls", "2") as url:
        endpoint = Endpoint(Settings(model="sim-model", base_url=url), cache=MemoryRequestCache())
        lines, _ = run(items, ["text", "adaptive"], endpoint, Protocol(tools=ADAPT_TOOLS), concurrency=2)
    samples = [{k: e[k] for k in ("uid", "answer", "answer_type", "options")}
               for e in map(json.loads, key.read_text().splitlines())]
    media = {item.uid: [Path(m.path).read_bytes() for m in item.media] for item in items}
    for i, line in enumerate(lines):  # a priced run: the cost must come through
        line["cost_usd"] = round(0.001 * (i + 1), 6)
    return {"items": items, "lines": lines, "samples": samples, "media": media, "images": tool_images(items, lines)}


def convert_log(content: bytes, **kw: Any) -> tuple[Any, list[dict[str, Any]]]:
    out = io.BytesIO()
    report = convert(io.BytesIO(content), out, fmt="inspect", filename="run.eval", resolve_tool=resolve_tool_name,
                     context=BenchmarkContext(media={}), **kw)
    return report, [json.loads(x) for x in out.getvalue().splitlines()]


def logs(data: dict[str, Any], *, zstd: bool, pooled: bool, mode_in: str = "task_args") -> list[bytes]:
    by_mode: dict[str, list[dict[str, Any]]] = {}
    for line in data["lines"]:
        by_mode.setdefault(line["mode"], []).append(line)
    return [inspect_logs.log_of_lines(mode_lines, media=data["media"], tool_images=data["images"], zstd=zstd,
                                      pooled=pooled, mode_in=mode_in) for mode_lines in by_mode.values()]


def figures(samples: list[dict[str, Any]], lines: list[dict[str, Any]]) -> dict[str, Any]:
    report = report_to_json(score_submission(samples, lines, judge=OfflineJudge(), prices=(1.0, 2.0)))
    report.pop("records", None)
    return report


def test_the_harness_tool_images_are_what_it_recorded(harness_run: dict[str, Any]) -> None:
    # The fixture's own check: the re-made images are the bytes the run sent (their SHA-256 in run.tool_outputs).
    import hashlib
    recorded = {(line["sample_id"], line["mode"], ref): sha for line in harness_run["lines"]
                for ref, sha in line["run"]["tool_outputs"].items()}
    assert recorded and {k: hashlib.sha256(v).hexdigest() for k, v in harness_run["images"].items()} == recorded


@pytest.mark.parametrize("zstd,pooled", [(False, False), (True, True)], ids=["old-deflate", "new-zstd-pooled"])
def test_an_inspect_log_of_a_run_scores_as_the_run_itself(harness_run: dict[str, Any], zstd: bool, pooled: bool) -> None:
    got: list[dict[str, Any]] = []
    for content in logs(harness_run, zstd=zstd, pooled=pooled):
        if zstd:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                assert {i.compress_type for i in archive.infolist()} == {ZSTD}
        report, lines = convert_log(content)
        assert report.ok, report.errors
        got += lines
    mine = {(x["sample_id"], x["mode"]): x for x in harness_run["lines"]}
    theirs = {(x["sample_id"], x["mode"]): x for x in got}
    assert theirs.keys() == mine.keys()
    for key, line in mine.items():
        other = theirs[key]
        assert other["steps"] == line["steps"], key
        assert (other["answer"], other.get("response"), other["usage"], other["cost_usd"], other["turns"]) == (
            line["answer"], line.get("response"), line["usage"], line["cost_usd"], line["turns"]), key
        assert other["run"]["tool_outputs"] == line["run"]["tool_outputs"], key  # the same tool images
        assert other["run"]["images_sent"] == line["run"]["images_sent"], key
        assert other["run"]["model_ids"] == line["run"]["model_ids"] == ["sim-model"]  # never the grader
    assert figures(harness_run["samples"], got) == figures(harness_run["samples"], harness_run["lines"])


def test_the_mode_may_be_in_each_sample_metadata(harness_run: dict[str, Any]) -> None:
    content = logs(harness_run, zstd=True, pooled=True, mode_in="metadata")[0]
    report, lines = convert_log(content)
    assert report.ok and {x["mode"] for x in lines} == {harness_run["lines"][0]["mode"]}


def test_a_log_without_a_mode_is_refused_naming_the_sample_and_the_fix(harness_run: dict[str, Any]) -> None:
    content = logs(harness_run, zstd=False, pooled=False, mode_in="nowhere")[0]
    report, lines = convert_log(content)
    assert not lines
    first = report.errors[0]
    assert first.where.startswith("samples/") and first.field == "metadata.mode"
    assert "-T mode=" in first.message


def test_outputs_are_numbered_after_the_sample_media(harness_run: dict[str, Any]) -> None:
    content = logs(harness_run, zstd=True, pooled=True)[1]  # adaptive
    out = io.BytesIO()
    uid = harness_run["lines"][-1]["sample_id"]
    report = convert(io.BytesIO(content), out, fmt="inspect", context=BenchmarkContext(media={uid: 3}))
    assert report.ok
    line = next(json.loads(x) for x in out.getvalue().splitlines() if json.loads(x)["sample_id"] == uid)
    assert [s["tool"]["output"] for s in line["steps"] if s.get("tool")][:2] == ["img3", "img4"]


def _one_sample(**change: Any) -> bytes:
    line = {"sample_id": "s01", "mode": "adaptive", "answer": "A", "response": "<answer>A</answer>",
            "steps": [{"thought": "<answer>A</answer>"}], "usage": {"input_tokens": 5, "output_tokens": 2},
            "latency_ms": 1500, "run": {"model_ids": ["m"]}}
    sample = inspect_logs.sample_of_line({**line, **change.pop("line", {})}, media=[b"png"], tool_images={},
                                         model="m", pooled=False)
    sample.update(change)
    return inspect_logs.eval_zip(inspect_logs.header(model="m", task_args={"mode": "adaptive"}), [sample], zstd=True)


@pytest.mark.parametrize("change,klass", [
    ({"error": {"message": "rate limited", "traceback": ""}}, "provider_error"),
    ({"limit": {"type": "message", "limit": 8}}, "max_turns"),
    ({"limit": {"type": "working", "limit": 60}}, "timeout"),
    ({"output": {"model": "m", "completion": "", "choices": [{"message": {"role": "assistant", "content": ""},
                                                              "stop_reason": "content_filter"}]}}, "content_filter"),
])
def test_errors_and_limits_become_failure_classes(change: dict[str, Any], klass: str) -> None:
    report, lines = convert_log(_one_sample(**change))
    assert report.ok, report.errors
    assert lines[0]["failure"] == klass and lines[0]["answer"] is None and lines[0]["failure_detail"]


def test_usage_counts_cached_input_and_leaves_the_grader_out() -> None:
    usage = {"m": {"input_tokens": 10, "input_tokens_cache_read": 90, "output_tokens": 7, "total_cost": 0.25},
             inspect_logs.GRADER: {"input_tokens": 1000, "output_tokens": 100, "total_cost": 3.0}}
    report, lines = convert_log(_one_sample(model_usage=usage))
    assert report.ok
    assert lines[0]["usage"] == {"input_tokens": 100, "output_tokens": 7} and lines[0]["cost_usd"] == 0.25
    assert lines[0]["latency_ms"] == 1500 and lines[0]["run"]["external_verdict"] == {"match": "C"}


def test_later_epochs_are_left_out_with_a_warning() -> None:
    line = {"sample_id": "s01", "mode": "text", "answer": "A", "steps": [], "run": {"model_ids": ["m"]}}
    samples = [inspect_logs.sample_of_line(line, media=[b"x"], tool_images={}, model="m", pooled=True, epoch=e)
               for e in (1, 2)]
    content = inspect_logs.eval_zip(inspect_logs.header(model="m", task_args={"mode": "text"}), samples, zstd=False)
    report, lines = convert_log(content)
    assert report.ok and len(lines) == 1
    assert "epoch" in report.warnings[0] and "samples/s01_epoch_2.json" in report.warnings[0]


def test_a_damaged_zstd_entry_is_named_not_misread() -> None:
    content = bytearray(_one_sample())
    at = content.index(b"samples/s01_epoch_1.json") + len("samples/s01_epoch_1.json") + 10
    content[at] ^= 0xFF  # a byte of the sample's compressed data
    report, lines = convert_log(bytes(content))
    assert not lines and report.errors[0].where == "samples/s01_epoch_1.json"
    assert "damaged" in report.errors[0].message


def test_an_inspect_log_sent_as_another_format_is_named() -> None:
    out = io.BytesIO()
    report = convert(io.BytesIO(_one_sample()), out, fmt="vtcbench", filename="run.eval")
    assert "Inspect AI log" in report.errors[0].message and "'inspect'" in report.errors[0].message


def test_a_zstd_entry_whose_checksum_differs_is_named_damaged() -> None:
    content = bytearray(_one_sample())
    name = b"samples/s01_epoch_1.json"
    at = content.index(b"PK\x01\x02")
    while content[at + 46:at + 46 + len(name)] != name:
        at = content.index(b"PK\x01\x02", at + 4)
    content[at + 16] ^= 0xFF  # the CRC-32 the central directory gives
    report, lines = convert_log(bytes(content))
    assert not lines and "checksum" in report.errors[0].message


def test_a_zip_of_logs_reads_each_and_names_the_log_of_a_problem() -> None:
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("adaptive.eval", _one_sample())
        archive.writestr("text.eval", b"not a zip at all")
    report, lines = convert_log(bundle.getvalue())
    assert [(e.where, e.message) for e in report.errors] == [
        ("text.eval", "The Inspect log could not be read as a zip (File is not a zip file).")]
    assert not report.ok and len(lines) == 1  # the good log is read; the upload still fails as a whole
