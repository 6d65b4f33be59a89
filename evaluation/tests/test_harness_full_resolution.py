"""Full resolution in the harness (evaluation/harness/loop.py, docs/runs.md "Full resolution"): an image
over `max_image_pixels` is sent as a scaled-down view, the tools work on the original (a zoom crops the
full-resolution image), and the record says what was sent (size and sha256) at every turn. Against the
simulated model in its own process; the 8K path's peak memory measured in a child process."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.cache import MemoryRequestCache
from evaluation.harness.items import Medium, RunItem
from evaluation.harness.loop import Protocol
from evaluation.harness.runner import run
from evaluation.tests.harness_fixtures import ROOT, simulated_model

DETAIL = [3000, 2000, 3400, 2300]  # where the small detail is, in the original's pixels


def _large_jpeg(path: Path, width: int, height: int) -> None:
    image = np.zeros((height, width, 3), np.uint8)
    image[:, :, 1] = (np.arange(width) % 256).astype(np.uint8)[None, :]
    x1, y1, x2, y2 = DETAIL
    cv2.rectangle(image, (x1 + 50, y1 + 50), (x2 - 50, y2 - 50), (0, 0, 255), -1)
    cv2.putText(image, "7", (x1 + 150, y1 + 200), cv2.FONT_HERSHEY_SIMPLEX, 4, (255, 255, 255), 8)
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 85])


def _big_item(tmp_path: Path) -> tuple[Path, RunItem, Path]:
    path = tmp_path / "big.jpg"
    _large_jpeg(path, 4000, 3000)
    item = RunItem(uid="big", question="What number is on the red tag?", options=None, answer_type="number",
                   media=(Medium(ref="img0", path=str(path), width=4000, height=3000),))
    key = tmp_path / "key.jsonl"
    key.write_text(json.dumps({"uid": "big", "question": item.question, "options": None, "answer": "7",
                               "answer_type": "number", "img0_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                               "oracle_sha256": "", "width": 4000, "height": 3000,
                               "toolchain": [{"tool": "zoom_in", "args": {"bbox": DETAIL}}]}) + "\n")
    return path, item, key


def test_an_original_over_the_registry_cap_ends_the_pair_with_a_message(tmp_path: Path) -> None:
    _, item, key = _big_item(tmp_path)
    protocol = Protocol(family="generic", tools=("zoom_in",), max_image_pixels=1_000_000, max_pixels=2_000_000)
    with simulated_model(key, tmp_path / "log.jsonl", "--tool-calls", "1") as url:
        endpoint = Endpoint(Settings(model="sim-model", base_url=url), cache=MemoryRequestCache())
        (line,), summary = run([item], ["adaptive"], endpoint, protocol, concurrency=1)
    # The view was sent (decoded at a reduced scale); the tools' full decode is refused, and the run goes on.
    assert line["failure"] == "tool_error" and "above the limit of 2,000,000" in line["failure_detail"], line["failure_detail"]
    assert summary.lines == 1


def test_the_model_sees_a_view_and_the_zoom_crops_the_original(tmp_path: Path) -> None:
    path, item, key = _big_item(tmp_path)
    cap = 1_000_000
    protocol = Protocol(family="generic", tools=("zoom_in",), max_image_pixels=cap)
    with simulated_model(key, tmp_path / "log.jsonl", "--tool-calls", "1") as url:
        endpoint = Endpoint(Settings(model="sim-model", base_url=url), cache=MemoryRequestCache())
        lines, _ = run([item], ["text", "adaptive"], endpoint, protocol, concurrency=1)
    by_mode = {line["mode"]: line for line in lines}
    for mode in ("text", "adaptive"):
        record = by_mode[mode]["run"]
        (width, height), = record["images_sent_sizes"][0]
        assert width * height <= cap and abs(width / height - 4 / 3) < 0.01  # the view, same shape
        assert record["images_sent"][0] != [hashlib.sha256(path.read_bytes()).hexdigest()]  # not the 12 MP file
    adaptive = by_mode["adaptive"]
    call = adaptive["steps"][0]["tool"]
    assert call["name"] == "zoom_in" and call["error"] is None
    # The crop is 400 x 300 pixels of the original: the detail at full resolution, sent whole (it fits).
    assert adaptive["run"]["images_sent_sizes"][1] == [[400, 300]]
    assert adaptive["run"]["images_sent"][1] == [adaptive["run"]["tool_outputs"]["img1"]]


def test_with_no_cap_an_image_goes_as_stored(tmp_path: Path) -> None:
    from evaluation.harness.loop import _pictures

    path = tmp_path / "big.jpg"
    _large_jpeg(path, 4000, 3000)
    item = RunItem(uid="big", question="?", options=None, answer_type="number",
                   media=(Medium(ref="img0", path=str(path), width=4000, height=3000),))
    (picture,) = _pictures(item, "text", Protocol(max_image_pixels=0))
    assert picture.data == path.read_bytes() and picture.size == (4000, 3000)


# Peak memory of the child itself: VmHWM (its address space's high-water mark, new at exec). ru_maxrss would
# carry the forking parent's (the test process, which drew the 8K image) across exec.
PEAK = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]) / 1024"
CHILD = """
import json, sys
from annotation.imagetools import load_image, run_chain
from evaluation.harness.items import Medium, RunItem
from evaluation.harness.loop import Protocol, _pictures
path = sys.argv[1]
item = RunItem(uid="8k", question="?", options=None, answer_type="number",
               media=(Medium(ref="img0", path=path, width=8000, height=8000),))
(view,) = _pictures(item, "text", Protocol())
original = load_image(path)
result = run_chain(original, [{"tool": "zoom_in", "args": {"bbox": [3000, 2000, 3400, 2300]}}])
print(json.dumps({"view": list(view.size), "zoom": list(result.images[result.final].shape[:2]), "ok": result.ok,
                  "peak_mb": PEAK}))
""".replace("PEAK", PEAK)


def test_an_8k_image_is_viewed_and_zoomed_under_a_gigabyte(tmp_path: Path) -> None:
    path = tmp_path / "8k.jpg"
    _large_jpeg(path, 8000, 8000)
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["ok"] and got["zoom"] == [300, 400]
    assert got["view"][0] * got["view"][1] <= 2048 * 2048
    assert got["peak_mb"] < 1024, got  # the worker's bound (docs/performance.md)
    print(got)


IMPORT_CHILD = """
import json, sys
from pathlib import Path
from annotation.benchmark_format import open_benchmark_source, read_benchmark
with open_benchmark_source(Path(sys.argv[1])) as source:
    bundle = read_benchmark(source)
print(json.dumps({"samples": len(bundle.samples), "scoring": bundle.manifest.scoring,
                  "peak_mb": PEAK}))
""".replace("PEAK", PEAK)


def test_an_8k_hrbench_tsv_is_read_and_checked_without_decoding_its_images_whole(tmp_path: Path) -> None:
    """The reader streams the rows (each image written out as its row is read) and the validator walks a
    JPEG's markers instead of decoding it (annotation/jpeg_check.py): two 7680 x 7680 rows stay far under
    the worker's bound. (Storing the media, the database part of an import, is not measured here.)"""
    import base64

    path = tmp_path / "hr_bench_8k.tsv"
    big = tmp_path / "8k.jpg"
    _large_jpeg(big, 7680, 7680)
    cell = base64.b64encode(big.read_bytes()).decode()
    columns = ["index", "image", "question", "answer", "A", "B", "category", "cycle_category"]
    rows = ["\t".join(columns)] + ["\t".join([str(i), cell, "Which digit is on the tag?", "A", "7", "1", "single",
                                              f"cycle{i + 1}"]) for i in range(2)]
    path.write_text("\n".join(rows) + "\n")
    out = subprocess.run([sys.executable, "-c", IMPORT_CHILD, str(path)], capture_output=True, text=True, cwd=ROOT,
                         check=True, env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"})
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["samples"] == 2 and got["scoring"] == "hrbench"
    # Decoding one of them whole would take 177 MB beside the ~60 MB of imports: the read never does.
    assert got["peak_mb"] < 200, got
    print(got)
