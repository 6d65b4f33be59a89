"""The workbench's chain editor in Chromium (issue 26, item 2): a box drawn on the shown image goes through
the recovery transform and the chain's steps into a call's arguments (annotation/static/annotation/frames.js);
a new chain starts from the recovery transform, and follows it when it changes (or, edited by hand, says so and
offers to start from it); what "verified" needs is said up front; messages go when
what they speak of changes; Ctrl+S saves and "Save and next" opens the next item."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotation.models import Assignment, Role
from annotation.tests.test_review_workbench_browser import draw
from annotation.tests.test_workbench_browser import browser, login  # noqa: F401 - the module's Chromium, a fixture
from annotation.tests.workbench_helpers import make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next, assignment_create
from annotation.workbench.chain import annotation_chain_verify
from annotation.workbench.editing import annotation_save

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(params=[1440, 390])
def page(browser, request):  # noqa: ANN001, ANN201, F811
    context = browser.new_context(viewport={"width": request.param, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


def _open(page, live_server, tmp_path: Path, name: str, **saved: object):  # noqa: ANN001, ANN202
    bench = make_benchmark(tmp_path, n=2, size=(400, 200))
    user = make_user(name, bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    if saved:
        assert annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1,
                               data=payload(regions=[], key_steps=[], **saved)).ok
    login(page, live_server, name)
    page.goto(live_server.url + assignment.get_absolute_url())
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")
    return bench, user, assignment


def test_a_box_drawn_on_the_rotated_image_goes_through_the_chain(page, live_server, tmp_path: Path) -> None:
    # img0 is 400 x 200; the recovery transform turns it 90° counter-clockwise and raises the contrast.
    _open(page, live_server, tmp_path, "turner", transform=[{"op": "rotate", "angle": 90}, {"op": "contrast", "alpha": 1.5}],
          toolchain=[{"tool": "zoom_in", "args": {"bbox": [0, 0, 10, 10]}, "input": "img0", "output": "img1"}])
    assert page.get_attribute("#canvas", "viewBox") == "0 0 200 400"
    draw(page, 40, 100, 120, 160)  # on the shown frame: (x, y) there is (400 - y, x) of the original
    page.click("#chain li:nth-child(1) .take-box")  # a call reading the original img0
    assert page.evaluate("() => WB.state.toolchain[0].args.bbox") == [240, 40, 300, 120]
    page.click("#run-chain")
    page.wait_for_selector("#chain-result .chain-result")
    assert page.eval_on_selector_all("#chain-result figure.step img", "els => els.map(e => [e.naturalWidth, e.naturalHeight])") \
        == [[60, 80]]

    # A step whose geometry is not known (a zoom without its box yet) is named, and nothing is filled.
    page.evaluate("() => { WB.state.toolchain.unshift({tool: 'zoom_in', args: {}, input: 'img0', output: 'img5',"
                  " verdict: 'unchecked', note: ''}); WB.state.toolchain[1].input = 'img5'; }")
    page.click("#add-call")  # shows the chain as changed
    page.click("#chain li:nth-child(2) .take-box")
    message = page.inner_text("#chain li:nth-child(2) .take-error")
    assert "step 1 (zoom_in)" in message and "not known" in message
    # The message speaks of the boxes as they were: drawing another box takes it away.
    page.locator("#canvas").scroll_into_view_if_needed()  # a phone scrolled down to the chain
    draw(page, 20, 220, 100, 320)
    assert len(page.evaluate("() => WB.boxes.boxes")) == 2
    assert not page.locator("#chain li:nth-child(2) .take-error").is_visible()


def test_a_new_chain_starts_from_the_recovery_transform(page, live_server, tmp_path: Path) -> None:
    _open(page, live_server, tmp_path, "starter")
    page.select_option("#t-rotate", "90")
    page.fill("#t-contrast", "1.5")
    page.dispatch_event("#t-contrast", "change")
    assert "starts from the recovery transform" in page.inner_text("#chain-start")
    draw(page, 40, 100, 120, 160)
    page.click("#add-call")
    chain = page.evaluate("() => WB.state.toolchain.map(c => [c.output, c.tool, c.input, c.args])")
    assert chain == [["img1", "rotate", "img0", {"angle": 90}], ["img2", "contrast", "img1", {"alpha": 1.5}],
                     ["img3", "zoom_in", "img2", {}]]
    page.click("#chain li:nth-child(3) .take-box")  # img2 is the image shown: the box as drawn
    assert page.evaluate("() => WB.state.toolchain[2].args.bbox") == [40, 100, 120, 160]


def test_verification_is_explained_first_and_a_refusal_goes_after_the_chain_runs(page, live_server, tmp_path: Path) -> None:
    _open(page, live_server, tmp_path, "verifier",
          toolchain=[{"tool": "zoom_in", "args": {"bbox": [0, 0, 100, 50]}, "input": "img0", "output": "img1"}])
    needs = page.locator("#verify-needs")
    assert needs.is_visible() and "mark every call valid" in needs.inner_text()
    assert "0 of 1 marked valid" in needs.inner_text()
    page.click("#verify-chain")
    refusal = page.locator('#chain-verified [data-verified="false"]')
    refusal.wait_for()
    assert "mark step 1 valid" in refusal.inner_text()
    page.click("#run-chain")  # the chain runs: the refusal spoke of a check before it, and goes
    page.wait_for_selector("#chain-result .chain-result")
    assert refusal.count() == 0
    page.select_option("#chain li:nth-child(1) select.verdict", "valid")
    assert "1 of 1 marked valid" in needs.inner_text()
    assert "changed since this run" in page.inner_text("#chain-result")  # the run shown is of the old chain
    page.click("#verify-chain")
    page.wait_for_selector('#chain-verified [data-verified="true"]')


def test_ctrl_s_saves_and_save_and_next_opens_the_next_item(page, live_server, tmp_path: Path) -> None:
    page.clock.install()  # the page's timers run on a clock the test can stop
    bench, user, first = _open(page, live_server, tmp_path, "keys")
    second = assignment_create(sample=bench.samples.order_by("position")[1], annotator=user)
    # Stopped, the 1.2 s autosave the edit schedules cannot fire: only Ctrl+S can send this save, however
    # long the server takes to answer (the test once raced the autosave with a 900 ms deadline).
    page.clock.pause_at(page.evaluate("() => Date.now()") + 1)
    page.fill("#qa-answer", "7")
    with page.expect_response(lambda r: r.url.endswith("/save/")):
        page.keyboard.press("Control+s")
    page.clock.resume()
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Saved')")
    page.fill("#qa-answer", "8")
    page.click("#save-next-btn")
    page.wait_for_url(f"**{second.get_absolute_url()}")
    first.annotation.refresh_from_db()
    assert first.annotation.answer == "8"
    assert Assignment.objects.get(pk=first.pk).status == "active"  # still theirs, to finish later
    assert json.loads(page.evaluate("() => JSON.stringify(WB.state.answer || '')")) == ""
    page.click("#save-next-btn")  # the first item is still open: it comes round again
    page.wait_for_url(f"**{first.get_absolute_url()}")


def _call(output: str, tool: str, input_ref: str, args: dict, note: str = "") -> dict:
    return {"tool": tool, "args": args, "input": input_ref, "output": output, "verdict": "valid", "note": note}


def _saved_chain(assignment: Assignment) -> list[list]:
    return [[c.output_ref, c.tool, c.input_ref, c.args, c.verdict, c.note]
            for c in assignment.annotation.tool_calls.order_by("position")]


def _save_and_reload(page) -> None:  # noqa: ANN001
    page.click("#save-btn")
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Saved')")
    page.reload()
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")


def test_changing_the_transform_rewrites_the_calls_of_a_chain_that_starts_from_it(page, live_server, tmp_path: Path) -> None:
    # The chain is the transform's two calls and a zoom reading their output, every call checked, and verified.
    _, _, assignment = _open(page, live_server, tmp_path, "follower",
                             transform=[{"op": "rotate", "angle": 90}, {"op": "contrast", "alpha": 1.5}],
                             toolchain=[_call("img1", "rotate", "img0", {"angle": 90}),
                                        _call("img2", "contrast", "img1", {"alpha": 1.5}),
                                        _call("img3", "zoom_in", "img2", {"bbox": [0, 0, 100, 50]}, "the dial")])
    annotation_chain_verify(annotation_id=assignment.annotation_id)
    page.reload()
    page.wait_for_selector('#chain-verified [data-verified="true"]')
    assert page.locator("#chain-transform").is_hidden()

    page.select_option("#t-rotate", "270")  # the rotation changes: the first call follows, the others are kept
    chain = "() => WB.state.toolchain.map(c => [c.output, c.tool, c.input, c.args, c.verdict])"
    # The zoom's box goes into the new frame (turned 180° from the old one: test_workbench_reframe_browser.py).
    assert page.evaluate(chain) == [["img1", "rotate", "img0", {"angle": 270}, "unchecked"],
                                    ["img2", "contrast", "img1", {"alpha": 1.5}, "valid"],
                                    ["img3", "zoom_in", "img2", {"bbox": [100, 350, 200, 400]}, "valid"]]
    assert page.locator('#chain-verified [data-verified="true"]').count() == 0  # an edit of the chain
    page.fill("#t-contrast", "1")  # the contrast goes: its call goes, the zoom reads the rotation
    page.dispatch_event("#t-contrast", "change")
    assert page.evaluate(chain) == [["img1", "rotate", "img0", {"angle": 270}, "unchecked"],
                                    ["img3", "zoom_in", "img1", {"bbox": [100, 350, 200, 400]}, "valid"]]
    assert page.locator("#chain-transform").is_hidden()

    _save_and_reload(page)
    assignment.annotation.refresh_from_db()
    assert assignment.annotation.transform == [{"op": "rotate", "angle": 270}]
    assert _saved_chain(assignment) == [["img1", "rotate", "img0", {"angle": 270}, "unchecked", ""],
                                        ["img3", "zoom_in", "img1", {"bbox": [100, 350, 200, 400]}, "valid", "the dial"]]
    assert not assignment.annotation.chain_verified
    assert page.input_value("#chain li:nth-child(2) input.note") == "the dial"
    assert page.locator("#chain-transform").is_hidden()

    page.select_option("#t-rotate", "0")  # no transform left: its calls go, the zoom reads img0
    assert page.evaluate(chain) == [["img3", "zoom_in", "img0", {"bbox": [350, 0, 400, 100]}, "valid"]]


def test_a_chain_edited_by_hand_is_not_rewritten_but_can_be_started_from_the_transform(page, live_server, tmp_path: Path) -> None:
    _, _, assignment = _open(page, live_server, tmp_path, "handy", transform=[{"op": "rotate", "angle": 90}],
                             toolchain=[_call("img1", "rotate", "img0", {"angle": 90}),
                                        _call("img2", "zoom_in", "img1", {"bbox": [0, 0, 100, 50]}, "the dial")])
    notice = page.locator("#chain-transform")
    assert notice.is_hidden()
    page.fill("#chain li:nth-child(1) input[name=arg-angle]", "92")  # the annotator turns the chain's rotation by hand
    page.dispatch_event("#chain li:nth-child(1) input[name=arg-angle]", "change")
    assert notice.is_visible() and "does not start from the recovery transform any more" in notice.inner_text()

    page.select_option("#t-rotate", "180")  # not rewritten silently
    chain = "() => WB.state.toolchain.map(c => [c.output, c.tool, c.input, c.args, c.verdict])"
    assert page.evaluate(chain) == [["img1", "rotate", "img0", {"angle": 92}, "valid"],
                                    ["img2", "zoom_in", "img1", {"bbox": [0, 0, 100, 50]}, "valid"]]
    assert notice.is_visible() and "rotate(angle=180)" in notice.inner_text()
    notice.get_by_role("button", name="Start the chain from the transform").click()
    # The zoom's box was drawn on the image turned 92°: it cannot be carried to 180° exactly, so it is invalid.
    assert page.evaluate(chain) == [["img1", "rotate", "img0", {"angle": 180}, "unchecked"],
                                    ["img2", "zoom_in", "img1", {"bbox": [0, 0, 100, 50]}, "invalid"]]
    assert "call 2 (zoom_in): the new frame is not the old one" in page.inner_text("#chain-reframed")
    assert notice.is_hidden()
    _save_and_reload(page)
    assert _saved_chain(assignment) == [["img1", "rotate", "img0", {"angle": 180}, "unchecked", ""],
                                        ["img2", "zoom_in", "img1", {"bbox": [0, 0, 100, 50]}, "invalid", "the dial"]]
    assert notice.is_hidden()

    # A chain with none of the transform's calls: the button puts them first, and the first call reads them.
    page.click("#chain li:nth-child(1) button[title='Delete call']")
    assert notice.is_visible()
    notice.get_by_role("button", name="Start the chain from the transform").click()
    assert page.evaluate(chain) == [["img3", "rotate", "img0", {"angle": 180}, "unchecked"],
                                    ["img2", "zoom_in", "img3", {"bbox": [0, 0, 100, 50]}, "invalid"]]
    assert notice.is_hidden()

    # The transform removed from a chain edited by hand: the notice stays, and the button takes its calls away.
    page.fill("#chain li:nth-child(1) input[name=arg-angle]", "181")
    page.dispatch_event("#chain li:nth-child(1) input[name=arg-angle]", "change")
    page.select_option("#t-rotate", "0")
    assert "the transform is empty, but the chain starts with rotate(angle=181)" in notice.inner_text()
    notice.get_by_role("button", name="Start the chain from the transform").click()
    assert page.evaluate(chain) == [["img2", "zoom_in", "img0", {"bbox": [0, 0, 100, 50]}, "invalid"]]
    assert notice.is_hidden()
