"""A chain whose frame changes under it (issue 38, item 3; annotation/static/annotation/workbench.js,
reframeChain): changing the recovery transform after the chain is built carries each kept call's box into the
new frame when that is exact (quarter turns, flips), and otherwise marks the call invalid with a notice naming
it and why, before anyone runs the chain. In Chromium at 1440 and 390 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from annotation.tests.test_workbench_browser import browser  # noqa: F401 - the module's Chromium, a fixture
from annotation.tests.test_workbench_chain_browser import _open, page  # noqa: F401 - page: at 1440 and 390 px

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# img0 is 400 x 200. Turned 90° counter-clockwise (a frame of 200 x 400) the box [40, 100, 120, 160] is the
# original's [240, 40, 300, 120]; turned 180° instead, that part is [100, 80, 160, 160].
BUILT = {"transform": [{"op": "rotate", "angle": 90}],
         "toolchain": [{"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1", "verdict": "valid"},
                       {"tool": "zoom_in", "args": {"bbox": [40, 100, 120, 160]}, "input": "img1", "output": "img2",
                        "verdict": "valid"},
                       {"tool": "crop", "args": {"x": 10, "y": 20, "width": 30, "height": 10}, "input": "img2",
                        "output": "img3", "verdict": "valid"}]}


def chain(page) -> list:  # noqa: ANN001
    return page.evaluate("() => WB.state.toolchain.map(c => [c.tool, c.input, c.args, c.verdict])")


def test_a_quarter_turn_carries_the_boxes_into_the_new_frame(page, live_server, tmp_path: Path) -> None:  # noqa: ANN001
    _open(page, live_server, tmp_path, "returner", **BUILT)
    assert page.locator("#chain-reframed").is_hidden()
    page.select_option("#t-rotate", "180")
    notice = page.locator("#chain-reframed")
    assert notice.is_visible()
    assert "call 2 (zoom_in) bbox: [40, 100, 120, 160] → [100, 80, 160, 160]" in notice.inner_text()
    # The crop reads the zoom's output, 80 x 60 before and 60 x 80 now: its corner and size follow.
    assert "call 3 (crop) x, y, width, height: [10, 20, 40, 30] → [20, 40, 30, 70]" in notice.inner_text()
    assert chain(page) == [["rotate", "img0", {"angle": 180}, "unchecked"],
                           ["zoom_in", "img1", {"bbox": [100, 80, 160, 160]}, "valid"],
                           ["crop", "img2", {"x": 20, "y": 40, "width": 10, "height": 30}, "valid"]]
    page.click("#run-chain")  # it runs, on the same pixels turned once more
    page.wait_for_selector("#chain-result .chain-result")
    sizes = page.eval_on_selector_all("#chain-result figure.step img", "els => els.map(e => [e.naturalWidth, e.naturalHeight])")
    assert sizes[-2:] == [[60, 80], [10, 30]]
    assert not page.locator("#chain-result .errorlist").count()


def test_a_turn_that_is_not_exact_marks_the_calls_invalid_and_says_why(page, live_server, tmp_path: Path) -> None:  # noqa: ANN001
    _open(page, live_server, tmp_path, "tilter", **BUILT)
    page.select_option("#t-rotate", "custom")  # "other…" starts at the turn there was (90°): nothing moves yet
    assert page.input_value("#t-angle") == "90" and page.locator("#chain-reframed").is_hidden()
    page.fill("#t-angle", "30")
    page.dispatch_event("#t-angle", "change")
    text = page.inner_text("#chain-reframed")
    assert "call 2 (zoom_in): the new frame is not the old one turned by quarter turns or flipped" in text
    assert "call 3 (crop)" in text  # reads an image whose frame is no longer known
    assert [c[3] for c in chain(page)] == ["unchecked", "invalid", "invalid"]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= page.viewport_size["width"]
