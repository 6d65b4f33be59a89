"""The recovery transform's fields on the item page (annotation/static/annotation/recovery_fields.js, issue 38
item 1): contrast α and brightness β are one affine step with one clip, so every demo sample, typed as its key
step names its recovery, previews as its gold recovery; and the page itself shows it, at 1440 and 390 px."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from annotation.imagetools import apply_transform, load_image
from annotation.models import Role
from annotation.tests.benchmark_files import sample_line
from annotation.tests.test_workbench_browser import browser, login  # noqa: F401 - the module's Chromium, a fixture
from annotation.tests.test_workbench_chain_browser import page  # noqa: F401 - a fixture: one page at 1440, one at 390 px
from annotation.tests.workbench_helpers import make_user
from annotation.workbench.assignments import assignment_claim_next

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo"
SCRIPT = ROOT / "annotation" / "static" / "annotation" / "recovery_fields.js"
UNTOUCHED = {"rotate": "0", "angle": "0", "flip": "", "alpha": "1", "beta": "0", "gamma": "1"}


def typed(transform: list[dict]) -> dict:
    """The fields a person fills in from the recovery the key step names ("rotate it 90 degrees", "stretch
    its contrast (alpha 2, beta -128)", "raise its brightness by 70"), as the inputs hold them."""
    fields = dict(UNTOUCHED)
    for op in transform:
        if op["op"] == "rotate":
            fields["rotate"] = str(op["angle"])
        elif op["op"] == "contrast":
            fields["alpha"], fields["beta"] = str(op["alpha"]), str(op.get("beta", 0))
        elif op["op"] == "brightness":
            fields["beta"] = str(op["beta"])
        else:
            raise AssertionError(f"the demo holds an operation the test does not type: {op}")
    return fields


def fields_page(chromium):  # noqa: ANN001, ANN201
    page = chromium.new_page()
    page.set_content("<!doctype html><title>fields</title>")
    page.add_script_tag(content=SCRIPT.read_text())
    return page


@pytest.mark.slow
def test_every_demo_sample_typed_as_its_key_step_says_previews_as_its_gold_recovery(chromium) -> None:  # noqa: ANN001
    lines = [json.loads(line) for line in (DEMO / "benchmark.jsonl").read_text().splitlines()]
    assert len(lines) == 151
    page = fields_page(chromium)
    typed_ops = page.evaluate("(all) => all.map((f) => RecoveryFields.toOps(f))", [typed(x["transform"]) for x in lines])
    # Opened again later, the saved transform fills the fields and gives back the same transform.
    reopened = page.evaluate("(all) => all.map((t) => { const r = RecoveryFields.fromOps(t); "
                             "return RecoveryFields.toOps(r.fields).concat(r.extra); })", [x["transform"] for x in lines])
    contrast = 0
    for line, ops, again in zip(lines, typed_ops, reopened, strict=True):
        assert again == line["transform"], line["uid"]
        if not line["transform"]:
            continue
        contrast += any(op["op"] == "contrast" for op in line["transform"])
        image = load_image(DEMO / line["image"])
        gold = apply_transform(image, line["transform"])
        assert np.array_equal(apply_transform(image, ops), gold), (line["uid"], ops, line["transform"])
    assert contrast == 23  # the samples whose recovery is a contrast with a brightness offset


def test_the_fields_keep_what_they_cannot_hold_in_its_place(chromium) -> None:  # noqa: ANN001
    page = fields_page(chromium)
    round_trip = "(t) => { const r = RecoveryFields.fromOps(t); return RecoveryFields.toOps(r.fields).concat(r.extra); }"
    for transform in (
        [{"op": "brightness", "beta": 40}, {"op": "contrast", "alpha": 2}],  # two steps, in this order: kept so
        [{"op": "gamma", "gamma": 0.5}, {"op": "rotate", "angle": 90}],
        [{"op": "contrast", "alpha": 2, "beta": -100}, {"op": "brightness", "beta": 10}],
        [{"op": "rotate", "angle": 37.5}, {"op": "flip", "direction": "vertical"}, {"op": "histogram_eq"}],
        [{"op": "brightness", "beta": 2, "additive": False}],
    ):
        assert page.evaluate(round_trip, transform) == transform


# ---- the page ---------------------------------------------------------------------------------------------

def _low_contrast_benchmark(folder: Path):  # noqa: ANN202
    """One sample stored as the demo stores a low-contrast one: colours squeezed by (p + 128) / 2, so the
    recovery 2p - 128 gives them back; an orange block on paper."""
    from annotation.models import Benchmark
    from annotation.services import benchmark_import

    clean = np.full((120, 240, 3), (250, 250, 247), np.uint8)
    clean[30:90, 40:200] = (250, 127, 14)
    stored = np.rint((clean.astype(np.float64) + 128) / 2).astype(np.uint8)
    (folder / "images").mkdir(parents=True)
    Image.fromarray(stored).save(folder / "images" / "s0.png")
    line = sample_line("s0", transform=[], regions=[], toolchain=[])
    line["image"] = "images/s0.png"
    (folder / "benchmark.jsonl").write_text(json.dumps(line) + "\n")
    benchmark_import(path=folder / "benchmark.jsonl", slug="lowc")
    return Benchmark.objects.get(slug="lowc"), clean


@pytest.mark.django_db(transaction=True)
def test_contrast_and_brightness_typed_preview_one_step(page, live_server, tmp_path: Path) -> None:  # noqa: ANN001
    bench, clean = _low_contrast_benchmark(tmp_path / "bench")
    user = make_user("lowc", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    login(page, live_server, "lowc")
    page.goto(live_server.url + assignment.get_absolute_url())
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")
    page.fill("#t-contrast", "2")
    page.dispatch_event("#t-contrast", "change")
    page.fill("#t-brightness", "-128")
    page.dispatch_event("#t-brightness", "change")
    href = page.get_attribute("#stage-image", "href")
    shown = np.asarray(Image.open(io.BytesIO(page.request.get(live_server.url + href).body())).convert("RGB"))
    # The orange block is orange again (JPEG preview: a few units off), not olive (two clips: 127 everywhere).
    block = shown[45:75, 60:180].reshape(-1, 3).mean(axis=0)
    assert np.abs(block - (250, 127, 14)).max() < 8, block
    assert np.abs(shown[5:20, 5:30].reshape(-1, 3).mean(axis=0) - 250).max() < 8  # the paper white again
    # The chain a new call starts from has the same one step.
    page.click("#add-call")
    assert page.evaluate("() => WB.state.toolchain[0]") | {"output": "img1"} == {
        "tool": "contrast", "args": {"alpha": 2, "beta": -128}, "input": "img0", "output": "img1",
        "verdict": "unchecked", "note": ""}
    assert page.evaluate("() => document.documentElement.scrollWidth") <= page.viewport_size["width"]
