"""The workbench in headless Chromium (Playwright): boxes with the mouse, key-step reordering,
running a toolchain, and a reviewer's approval reaching the export."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from annotation.models import KeyStep, Region, Role
from annotation.tests.workbench_helpers import PASSWORD, make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save

# Playwright's sync API runs an event loop in this thread; Django's ORM would refuse to run here.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser(chromium):  # noqa: ANN001, ANN201
    """The process's Chromium (conftest.py); each page below has a context of its own."""
    return chromium


@pytest.fixture
def page(browser):  # noqa: ANN001, ANN201
    context = browser.new_context(viewport={"width": 1500, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


def login(page, live_server, username: str) -> None:  # noqa: ANN001
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("form.card button[type=submit]")
    page.wait_for_load_state()


def screen(page, x: float, y: float) -> tuple[float, float]:  # noqa: ANN001
    """Where the full-size pixel (x, y) of the frame is on the screen."""
    return tuple(page.evaluate(
        """([x, y]) => { const svg = document.getElementById('canvas'); const p = svg.createSVGPoint();
           p.x = x; p.y = y; const q = p.matrixTransform(svg.getScreenCTM()); return [q.x, q.y]; }""", [x, y]))


def boxes_on_page(page) -> list[list[int]]:  # noqa: ANN001
    return [json.loads(b) for b in page.eval_on_selector_all("#box-list li", "els => els.map(e => e.dataset.box)")]


def close(box: list[float], expected: list[float], tolerance: float = 6) -> bool:
    # One screen pixel is about 2.3 full-size pixels here (3200 px shown in ~1400).
    return all(abs(a - b) <= tolerance for a, b in zip(box, expected, strict=True))


def test_draw_resize_undo_save_reload_keeps_the_box_in_full_size_pixels(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1, size=(3200, 1600), slug="big")  # the preview is 1600 wide
    user = make_user("drawer", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    login(page, live_server, "drawer")
    page.goto(live_server.url + assignment.get_absolute_url())
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")

    page.mouse.move(*screen(page, 400, 300))
    page.mouse.down()
    page.mouse.move(*screen(page, 1200, 900), steps=8)
    page.mouse.up()
    [drawn] = boxes_on_page(page)
    assert close(drawn, [400, 300, 1200, 900]), drawn

    page.mouse.move(*screen(page, drawn[2], drawn[3]))  # the bottom-right handle of the selected box
    page.mouse.down()
    page.mouse.move(*screen(page, 1600, 1100), steps=8)
    page.mouse.up()
    [resized] = boxes_on_page(page)
    assert close(resized, [drawn[0], drawn[1], 1600, 1100]), resized

    page.keyboard.press("Control+z")
    assert boxes_on_page(page) == [drawn]

    page.click("#save-btn")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Saved')")
    page.reload()
    page.wait_for_selector("#box-list li")
    assert boxes_on_page(page) == [drawn]
    assert [r.as_box() for r in Region.objects.filter(annotation=assignment.annotation)] == [drawn]


def test_key_steps_reorder_by_keyboard_and_drag(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1)
    user = make_user("stepper", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    steps = [{"text": t, "origin": "human", "verified": True} for t in ("First", "Second", "Third")]
    annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1, data=payload(key_steps=steps))
    login(page, live_server, "stepper")
    page.goto(live_server.url + assignment.get_absolute_url())
    texts = lambda: page.eval_on_selector_all("#steps textarea", "els => els.map(e => e.value)")  # noqa: E731

    page.focus("#steps li:nth-child(3) textarea")
    page.keyboard.press("Alt+ArrowUp")
    assert texts() == ["First", "Third", "Second"]
    # Measure the boxes only once the page has settled (the preview image arriving shifts the
    # layout), and start the native drag with a short move before travelling to the target.
    page.wait_for_load_state("networkidle")
    page.locator("#steps").scroll_into_view_if_needed()
    grip = page.locator("#steps li:nth-child(1) .grip").bounding_box()
    target = page.locator("#steps li:nth-child(3)").bounding_box()
    page.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
    page.mouse.down()
    page.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2 + 8, steps=4)
    page.mouse.move(target["x"] + 10, target["y"] + target["height"] / 2, steps=10)
    page.mouse.up()
    assert texts() == ["Third", "Second", "First"]

    page.click("#save-btn")
    page.wait_for_function("() => document.getElementById('save-status').textContent.includes('Saved')")
    assert list(KeyStep.objects.filter(annotation=assignment.annotation).values_list("text", flat=True)) == [
        "Third", "Second", "First"]


def test_run_a_toolchain_and_see_its_intermediate_images(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1)
    user = make_user("chainer", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    login(page, live_server, "chainer")
    page.goto(live_server.url + assignment.get_absolute_url())

    page.click("#add-call")  # a zoom_in call, its form generated from the tool's schema
    page.fill("#chain li:nth-child(1) input[name=arg-bbox]", "[0, 0, 100, 50]")
    page.press("#chain li:nth-child(1) input[name=arg-bbox]", "Tab")
    page.click("#add-call")
    page.select_option("#chain li:nth-child(2) select.tool", "rotate")
    page.fill("#chain li:nth-child(2) input[name=arg-angle]", "90")
    page.press("#chain li:nth-child(2) input[name=arg-angle]", "Tab")
    page.click("#run-chain")
    page.wait_for_selector("#chain-result .chain-result")
    assert page.get_attribute("#chain-result .chain-result", "data-ok") == "true"
    assert page.locator("#chain-result figure img").count() == 3  # img0, img1, img2
    sizes = page.eval_on_selector_all("#chain-result figure.step img", "els => els.map(e => [e.naturalWidth, e.naturalHeight])")
    assert sizes == [[100, 50], [50, 100]]  # the zoomed cut, then turned a quarter
    assert "2. img2 = rotate(img1)" in page.inner_text("#chain-result")


def test_a_reviewer_approves_an_item_and_it_appears_in_the_export(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=2)
    reviewer = make_user("boss", bench, Role.REVIEWER)
    sample_uid = None
    for name, box in [("w1", [10, 20, 50, 60]), ("w2", [12, 20, 50, 60])]:
        user = make_user(name, bench, Role.ANNOTATOR)
        assignment = assignment_claim_next(user=user, benchmark=bench)
        sample_uid = assignment.sample.uid
        result = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1,
                                 data=payload(regions=[{"box": box}], answer="3"), submit=True)
        assert result.ok
    login(page, live_server, reviewer.username)
    page.goto(f"{live_server.url}/annotate/review/{bench.slug}/")
    page.click(f"text={sample_uid}")
    assert "mean IoU" in page.inner_text(".agreement")
    page.click(".take-all >> nth=0")  # every part from the first column (nothing is preselected) ...
    page.check(".choose td:nth-child(2) input[name=source_regions]")  # ... and the boxes from w1's
    page.click("#approve-btn")
    page.wait_for_selector(".messages li")
    assert "Approved" in page.inner_text(".messages")
    page.goto(f"{live_server.url}/annotate/review/{bench.slug}/")
    with page.expect_download() as download:
        page.click("text=benchmark file (zip)")
    with zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes())) as zf:
        lines = {json.loads(x)["uid"]: json.loads(x) for x in zf.read("benchmark.jsonl").decode().splitlines()}
    assert lines[sample_uid]["regions"] in ([[10, 20, 50, 60]], [[12, 20, 50, 60]])
    assert reviewer.pk  # the approval was made by the signed-in reviewer
    from annotation.models import ReviewDecision

    assert ReviewDecision.objects.get().reviewer == reviewer
