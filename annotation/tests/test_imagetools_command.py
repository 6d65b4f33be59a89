"""manage.py run_toolchain IMAGE CHAIN.json --out DIR."""

from __future__ import annotations

import io
import json

import cv2
import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.imagetools import encode_png

from .imagetools_helpers import marked, textured


def _run(*args: str) -> dict:
    out = io.StringIO()
    call_command("run_toolchain", *args, stdout=out)
    return json.loads(out.getvalue())


def test_writes_every_image_and_prints_each_step(tmp_path):
    (tmp_path / "in.png").write_bytes(encode_png(marked(300, 200, x=10, y=20)))
    chain = [{"tool": "rotate", "args": {"angle": 90}},
             {"tool": "zoom_in", "args": {"bbox": [0, 250, 50, 300]}},
             {"tool": "Measure Area", "args": {"threshold_mode": "nonzero"}}]
    (tmp_path / "chain.json").write_text(json.dumps({"uid": "x", "toolchain": chain}))
    report = _run(str(tmp_path / "in.png"), str(tmp_path / "chain.json"), "--out",
                  str(tmp_path / "out"))
    assert report["ok"] and report["error"] is None and report["final"] == "img3"
    assert [(s["tool"], s["output"], s["error"]) for s in report["steps"]] == [
        ("rotate", "img1", None), ("zoom_in", "img2", None), ("measure_area", "img3", None)]
    assert report["steps"][2]["measurements"]["area"] == 1
    assert report["steps"][1]["measurements"] == {"bbox": [0, 250, 50, 300]}
    for ref in ("img0", "img1", "img2", "img3"):
        assert (tmp_path / "out" / f"{ref}.png").is_file()
    zoomed = cv2.imread(str(tmp_path / "out" / "img2.png"))
    assert zoomed.shape == (50, 50, 3) and zoomed[39, 20].min() == 255  # (20, 289) in img1


def test_a_failing_step_is_reported_and_exits_non_zero(tmp_path, capsys):
    (tmp_path / "in.png").write_bytes(encode_png(marked(300, 200)))
    (tmp_path / "chain.json").write_text(json.dumps([
        {"tool": "flip"}, {"tool": "zoom_in", "args": {"bbox": [0, 0, 5000, 10]}}]))
    out = io.StringIO()
    with pytest.raises(CommandError, match=r'step 2 \(zoom_in\): argument "bbox": x2 \(5000\)'):
        call_command("run_toolchain", str(tmp_path / "in.png"), str(tmp_path / "chain.json"),
                     "--out", str(tmp_path / "out"), stdout=out)
    report = json.loads(out.getvalue())
    assert not report["ok"] and report["steps"][1]["error"].startswith("step 2 (zoom_in)")
    assert report["steps"][1]["file"] is None
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["img0.png", "img1.png"]


def test_extra_images_by_name(tmp_path):
    image = textured(160, 120, seed=4)
    (tmp_path / "in.png").write_bytes(encode_png(image))
    (tmp_path / "logo.png").write_bytes(encode_png(image[40:60, 90:130]))
    (tmp_path / "chain.json").write_text(json.dumps([
        {"tool": "template_match", "args": {"template": "logo"}}]))
    report = _run(str(tmp_path / "in.png"), str(tmp_path / "chain.json"), "--out",
                  str(tmp_path / "out"), "--ref", f"logo={tmp_path / 'logo.png'}")
    assert report["steps"][0]["measurements"]["location"] == [90, 40]


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "is not valid JSON"), ('{"a": 1}', "must hold a toolchain list")])
def test_bad_chain_files(tmp_path, content, message):
    (tmp_path / "in.png").write_bytes(encode_png(np.zeros((4, 4, 3), np.uint8)))
    (tmp_path / "chain.json").write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("run_toolchain", str(tmp_path / "in.png"), str(tmp_path / "chain.json"),
                     "--out", str(tmp_path / "out"), stdout=io.StringIO())


def test_unreadable_or_oversized_image(tmp_path, settings):
    (tmp_path / "chain.json").write_text("[]")
    with pytest.raises(CommandError, match="cannot read the image"):
        call_command("run_toolchain", str(tmp_path / "missing.png"), str(tmp_path / "chain.json"),
                     "--out", str(tmp_path / "out"), stdout=io.StringIO())
    settings.IMAGE_MAX_PIXELS = 100
    (tmp_path / "in.png").write_bytes(encode_png(np.zeros((20, 20, 3), np.uint8)))
    with pytest.raises(CommandError, match="above the limit of 100"):
        call_command("run_toolchain", str(tmp_path / "in.png"), str(tmp_path / "chain.json"),
                     "--out", str(tmp_path / "out"), stdout=io.StringIO())
