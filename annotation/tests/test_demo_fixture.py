"""The committed demo benchmark: reproducible, complete, well-formed, and right by construction.

These tests read files only (no database). The recovery below is written from formats.md, not
imported from the generator, so a wrong rotation direction or contrast formula in the generator
shows up as a wrong blob count or bar height here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from annotation.taxonomy import ADAPTMMBENCH_DOMAINS
from annotation import imagetools  # a broken registry must fail these tests, not skip them

pytestmark = pytest.mark.same_on_every_path  # files and images only: no database, no broker

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo"
PALETTE = {  # the generator's colours, restated so the tests do not trust its module
    "red": (214, 39, 40), "green": (44, 160, 44), "blue": (31, 90, 220),
    "yellow": (240, 200, 20), "purple": (148, 60, 189), "orange": (250, 127, 14),
}
TOOL_ARGS = {
    "rotate": {"angle"}, "zoom_in": {"bbox"}, "crop": {"x", "y", "width", "height"},
    "contrast": {"alpha", "beta"}, "brightness": {"beta"}, "gamma": {"gamma"},
    "histogram_eq": {"mode"}, "binarize": {"mode", "threshold_value"}, "connected_components": set(),
    "measure_area": set(), "edge_detect": {"threshold_low", "threshold_high"}, "circle_detect": set(),
    "line_detect": set(), "draw_aux_line": {"x1", "y1", "x2", "y2"}, "draw_bbox": {"bbox", "label"},
    "flip": {"direction"},
}
FIELDS = ["uid", "image", "question", "options", "answer", "answer_type", "tolerance", "domain", "category",
          "regions", "transform", "key_steps", "toolchain", "aux_line", "split", "source", "meta"]


def load(folder: Path) -> list[dict]:
    with open(folder / "benchmark.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    return load(DEMO)


def recover(image: np.ndarray, transform: list[dict]) -> np.ndarray:
    """Apply a recovery transform as formats.md defines it (rotate is counter-clockwise)."""
    for op in transform:
        if op["op"] == "rotate":
            image = np.rot90(image, k=op["angle"] // 90)
            continue
        f = image.astype(np.float64)
        if op["op"] == "contrast":
            f = op["alpha"] * f + op["beta"]
        elif op["op"] == "brightness":
            f = f + op["beta"]
        else:
            raise AssertionError(f"unexpected op {op['op']}")
        image = np.clip(np.rint(f), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(image)


def upright(sample: dict) -> np.ndarray:
    rgb = np.asarray(Image.open(DEMO / sample["image"]).convert("RGB"))
    return recover(rgb, sample["transform"])


def colour_mask(image: np.ndarray, rgb: tuple[int, int, int] | list[int], tol: float = 40) -> np.ndarray:
    dist = np.linalg.norm(image.astype(np.int32) - np.array(rgb, dtype=np.int32), axis=-1)
    return dist < tol


def gold_text(sample: dict) -> str:
    return sample["options"][sample["answer"]] if sample["answer_type"] == "choice" else sample["answer"]


# --- reproducibility -----------------------------------------------------------------------

@pytest.mark.slow
def test_committed_files_equal_a_fresh_generation(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(DEMO / "generate.py"), "--out", str(tmp_path)],
                   check=True, cwd=tmp_path, capture_output=True)
    for name in ("benchmark.jsonl", "benchmark.json"):
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), f"{name} differs: regenerate"
    fresh = sorted(p.name for p in (tmp_path / "images").glob("*.png"))
    committed = sorted(p.name for p in (DEMO / "images").glob("*.png"))
    assert fresh == committed
    changed = [n for n in fresh if (tmp_path / "images" / n).read_bytes() != (DEMO / "images" / n).read_bytes()]
    assert changed == [], f"images differ from a fresh generation: {changed[:5]}"


# --- coverage and proportions --------------------------------------------------------------

def test_covers_every_domain_and_category(samples: list[dict]) -> None:
    assert len(samples) >= 120
    seen = Counter((s["domain"], s["category"]) for s in samples)
    expected = {(d, c) for d, spec in ADAPTMMBENCH_DOMAINS.items() for c in spec["categories"]}
    assert set(seen) == expected
    assert min(seen.values()) >= 4


def test_splits_distortions_and_aux_lines_in_proportion(samples: list[dict]) -> None:
    n = len(samples)
    dev = sum(s["split"] == "dev" for s in samples)
    assert {s["split"] for s in samples} == {"dev", "test"}
    assert 0.25 <= dev / n <= 0.35
    for domain, category in {(s["domain"], s["category"]) for s in samples}:
        splits = {s["split"] for s in samples if (s["domain"], s["category"]) == (domain, category)}
        assert splits == {"dev", "test"}, f"{domain}/{category} lacks a split"
    distorted = [s for s in samples if s["transform"]]
    assert 0.28 <= len(distorted) / n <= 0.4
    ops = Counter(op["op"] for s in distorted for op in s["transform"])
    assert set(ops) == {"rotate", "contrast", "brightness"}
    assert {op["angle"] for s in distorted for op in s["transform"] if op["op"] == "rotate"} == {90, 180, 270}
    assert any(len(s["transform"]) == 2 for s in distorted)
    aux = [s for s in samples if s["aux_line"]]
    assert 4 <= len(aux) <= 8
    assert all(s["category"] == "geometry" and any(c["tool"] == "draw_aux_line" for c in s["toolchain"])
               for s in aux)
    assert set(Counter(s["answer_type"] for s in samples)) == {"choice", "number", "text"}


def test_manifest_matches_taxonomy_and_tools(samples: list[dict]) -> None:
    manifest = json.loads((DEMO / "benchmark.json").read_text(encoding="utf-8"))
    assert manifest["slug"] == "adaptmm-demo" and manifest["version"] == "1.0"
    assert manifest["license"] == "CC BY 4.0" and manifest["name"] and manifest["citation"]
    assert manifest["domains"] == ADAPTMMBENCH_DOMAINS
    used = {c["tool"] for s in samples for c in s["toolchain"]}
    assert used <= set(manifest["tools"]) <= set(TOOL_ARGS)


def test_size_budget_and_image_sizes(samples: list[dict]) -> None:
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert total < 8 * 1024 * 1024
    sides = [max(Image.open(DEMO / s["image"]).size) for s in samples]
    assert all(300 <= side <= 2400 for side in sides)
    assert sum(side >= 2000 for side in sides) >= 3


# --- each sample well-formed ---------------------------------------------------------------

def test_every_sample_is_well_formed(samples: list[dict]) -> None:
    uids = [s["uid"] for s in samples]
    assert len(set(uids)) == len(uids)
    for s in samples:
        where = s["uid"]
        assert list(s) == FIELDS, where
        assert re.fullmatch(rf"{s['domain'].replace('_', '-')}-{s['category']}-\d{{4}}", s["uid"]), where
        assert s["image"] == f"images/{s['uid']}.png" and (DEMO / s["image"]).is_file(), where
        assert s["source"] == "synthetic-demo" and s["meta"]["generator"] == "v1", where
        assert s["question"].strip().endswith("?") or s["question"].strip().endswith("."), where
        if s["answer_type"] == "choice":
            letters = list(s["options"])
            assert letters == list("ABCDE"[: len(letters)]) and len(letters) >= 2, where
            assert s["answer"] in s["options"], where
            assert len(set(s["options"].values())) == len(letters), where
        else:
            assert s["options"] is None, where
        if s["answer_type"] == "number":
            float(s["answer"])
            assert s["tolerance"] is None or s["tolerance"] >= 0, where
        assert 2 <= len(s["key_steps"]) <= 5 and all(k.strip() for k in s["key_steps"]), where


def test_regions_are_integer_boxes_inside_the_upright_frame(samples: list[dict]) -> None:
    for s in samples:
        w, h = Image.open(DEMO / s["image"]).size
        if sum(op["angle"] for op in s["transform"] if op["op"] == "rotate") % 180:
            w, h = h, w
        assert len(s["regions"]) <= 2, s["uid"]
        for box in s["regions"]:
            assert all(isinstance(v, int) for v in box), s["uid"]
            x1, y1, x2, y2 = box
            assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h, (s["uid"], box, (w, h))
    assert sum(bool(s["regions"]) for s in samples) >= 0.75 * len(samples)


def test_toolchains_use_registry_names_and_chain_properly(samples: list[dict]) -> None:
    for s in samples:
        chain, where = s["toolchain"], s["uid"]
        assert 1 <= len(chain) <= 4, where
        produced = {"img0"}
        for k, call in enumerate(chain):
            assert set(call) == {"tool", "args", "input", "output"}, where
            assert call["tool"] in TOOL_ARGS and set(call["args"]) == TOOL_ARGS[call["tool"]], where
            assert call["input"] in produced and call["output"] == f"img{k + 1}", where
            produced.add(call["output"])
        recovery = [{"op": c["tool"], **c["args"]} for c in chain[: len(s["transform"])]]
        assert recovery == s["transform"], f"{where}: chain must start with the recovery"


def test_zoom_and_aux_coordinates_fit_their_input_frame(samples: list[dict]) -> None:
    for s in samples:
        w, h = Image.open(DEMO / s["image"]).size
        sizes = {"img0": (w, h)}
        for call in s["toolchain"]:
            size = sizes.get(call["input"])
            if call["tool"] == "rotate" and size and call["args"]["angle"] % 180:
                size = (size[1], size[0])
            if call["tool"] == "zoom_in":
                assert size, f"{s['uid']}: zoom reads an image of unknown frame"
                x1, y1, x2, y2 = call["args"]["bbox"]
                assert 0 <= x1 < x2 <= size[0] and 0 <= y1 < y2 <= size[1], s["uid"]
                size = None  # a zoom's output scale is the tool's business
            if call["tool"] == "draw_aux_line":
                a = call["args"]
                assert size and all(0 <= a[k] <= size[0] for k in ("x1", "x2")), s["uid"]
                assert all(0 <= a[k] <= size[1] for k in ("y1", "y2")), s["uid"]
            if size:
                sizes[call["output"]] = size


# --- answers right by construction, read back from the pixels -------------------------------

def test_counting_answers_match_blob_counts(samples: list[dict]) -> None:
    counted = [s for s in samples if s["meta"].get("kind") == "shape_scene"]
    assert len(counted) >= 5 and any(s["transform"] for s in counted)
    for s in counted:
        x1, y1, x2, y2 = s["regions"][0]
        crop = upright(s)[y1:y2, x1:x2]
        mask = colour_mask(crop, PALETTE[s["meta"]["target_color"]]).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        blobs = int(np.sum(stats[1:, cv2.CC_STAT_AREA] >= 40))
        assert blobs == int(s["answer"]), (s["uid"], blobs, s["answer"], s["transform"])


def _bar_heights(s: dict) -> dict[str, float]:
    image, meta = upright(s), s["meta"]
    heights = {}
    for label, (bx1, bx2) in meta["bars"].items():
        column = colour_mask(image[:, (bx1 + bx2) // 2], meta["bar_color"])
        rows = np.flatnonzero(column[: meta["baseline"]])
        heights[label] = (meta["baseline"] - rows.min()) / meta["px_per_unit"] if rows.size else 0.0
    return heights


def test_bar_and_histogram_answers_match_bar_heights(samples: list[dict]) -> None:
    charts = [s for s in samples if s["meta"].get("kind") in ("bar_chart", "histogram")]
    assert len(charts) >= 8 and any(s["transform"] for s in charts)
    for s in charts:
        heights = _bar_heights(s)
        asked = s["meta"]["asked"]
        if "higher" in s["question"]:
            other = next(label for label in heights if f"than for {label}?" in s["question"])
            assert abs(heights[asked] - heights[other] - float(s["answer"])) <= 1.2, s["uid"]
        elif s["answer_type"] == "number":
            assert abs(heights[asked] - float(s["answer"])) <= 0.6, (s["uid"], heights[asked], s["answer"])
        else:
            assert max(heights, key=heights.get) == gold_text(s) == asked, s["uid"]


def test_colour_answers_match_the_probed_pixel(samples: list[dict]) -> None:
    tagged = [s for s in samples if s["meta"].get("kind") == "tagged_scene"]
    assert len(tagged) >= 5
    for s in tagged:
        x, y = s["meta"]["probe"]
        pixel = upright(s)[y, x].astype(int)
        nearest = min(PALETTE, key=lambda c: np.linalg.norm(pixel - np.array(PALETTE[c])))
        assert nearest == s["meta"]["probe_color"], s["uid"]
        if "colour" in s["question"]:
            assert gold_text(s) == nearest, s["uid"]


def test_distorted_images_really_are_degraded(samples: list[dict]) -> None:
    for s in samples:
        ops = {op["op"] for op in s["transform"]}
        stored = np.asarray(Image.open(DEMO / s["image"]).convert("L")).astype(np.float64)
        fixed = cv2.cvtColor(upright(s), cv2.COLOR_RGB2GRAY).astype(np.float64)
        if "contrast" in ops:
            assert stored.max() - stored.min() < 0.6 * (fixed.max() - fixed.min()), s["uid"]
        if "brightness" in ops:
            assert stored.mean() < fixed.mean() - 20, s["uid"]


# --- the project's tool registry runs every reference chain ---------------------------------

def test_every_toolchain_runs_through_the_registry(samples: list[dict]) -> None:
    for s in samples:
        image = imagetools.load_image(DEMO / s["image"])
        result = imagetools.run_chain(image, s["toolchain"])
        assert result.ok, (s["uid"], result.error)


def test_registry_recovery_agrees_with_the_format(samples: list[dict]) -> None:
    """The oracle image is built by the registry; it must turn each stored image upright the
    same way formats.md (and the pixel checks above) do."""
    for s in [s for s in samples if s["transform"]]:
        theirs = imagetools.apply_transform(imagetools.load_image(DEMO / s["image"]), s["transform"])
        ours = cv2.cvtColor(upright(s), cv2.COLOR_RGB2BGR)
        assert theirs.shape == ours.shape, s["uid"]
        assert int(np.abs(theirs.astype(int) - ours.astype(int)).max()) <= 1, s["uid"]
