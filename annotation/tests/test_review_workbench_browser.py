"""Issue 17, parts 4 and 5, in headless Chromium: the review page that compares (boxes overlaid
per annotator with toggles, no preselected choice, notes that reach the annotator) and the
workbench (a drawn box into a call's arguments, larger handles, single numbering, the image in
view while the side panel scrolls, the shortcuts on `?`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import AnnotationStatus, ReviewDecision, ReviewNote, Role
from annotation.tests.test_workbench_browser import browser, boxes_on_page, login, page, screen  # noqa: F401
from annotation.tests.workbench_helpers import make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def two_submissions(bench):  # noqa: ANN001, ANN201
    """w1 and w2 submit the same sample with different boxes; returns their assignments."""
    out = []
    for name, regions in [("w1", [[10, 20, 50, 60]]), ("w2", [[120, 30, 180, 90], [60, 10, 90, 40]])]:
        user = make_user(name, bench, Role.ANNOTATOR)
        assignment = assignment_claim_next(user=user, benchmark=bench)
        result = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1, submit=True,
                                 data=payload(regions=[{"box": b} for b in regions], answer="3"))
        assert result.ok, result.errors
        out.append(assignment)
    return out


def layer_rects(page, annotation_id: int):  # noqa: ANN001, ANN201
    return page.locator(f"#overlay g.layer[data-layer='{annotation_id}'] rect")


def test_the_review_page_overlays_the_annotators_boxes_and_refuses_an_approval_without_a_choice(
        page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1)
    make_user("boss", bench, Role.REVIEWER)
    w1, w2 = two_submissions(bench)
    login(page, live_server, "boss")
    page.goto(f"{live_server.url}/annotate/review/sample/{w1.sample_id}/")

    first, second = layer_rects(page, w1.annotation_id), layer_rects(page, w2.annotation_id)
    assert first.count() == 1 and second.count() == 2
    assert first.first.is_visible() and second.first.is_visible() and second.nth(1).is_visible()
    stroke = lambda loc: loc.first.evaluate("e => getComputedStyle(e).stroke")  # noqa: E731
    assert stroke(first) != stroke(second)  # each annotator in their own colour
    legend = page.inner_text("#overlay-legend")
    assert "w1" in legend and "w2" in legend and "imported" in legend

    page.uncheck(f"#overlay-legend input[data-layer='{w1.annotation_id}']")
    assert not first.first.is_visible()
    assert second.first.is_visible()  # only w1's boxes went
    page.check(f"#overlay-legend input[data-layer='{w1.annotation_id}']")
    assert first.first.is_visible()

    # Nothing is chosen for the reviewer: an approval now is refused, and nothing changes.
    assert page.locator("input[type=radio]:checked").count() == 0
    page.click("#approve-btn")
    page.wait_for_selector(".messages li")
    assert "Nothing approved: choose, for each part, the annotation it comes from." in page.inner_text(".messages")
    assert not ReviewDecision.objects.exists()
    assert w1.sample.annotations.get(status=AnnotationStatus.APPROVED).annotator_id is None  # still the import

    page.click(f".take-all[data-annotation='{w2.annotation_id}']")  # every part from w2 ...
    page.check(f"input[name=source_regions][value='{w1.annotation_id}']")  # ... but w1's boxes
    page.click("#approve-btn")
    page.wait_for_selector(".messages li.success")
    approved = w1.sample.annotations.get(status=AnnotationStatus.APPROVED)
    assert [r.as_box() for r in approved.regions.all()] == [[10, 20, 50, 60]]
    assert approved.annotator.username == "boss"  # a merge, made by the reviewer

    # On a phone the comparison table scrolls in its own box; the page, its header included
    # (docs/layout.md), does not scroll sideways.
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_notes_on_a_box_and_a_step_reach_the_annotator(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1)
    make_user("boss", bench, Role.REVIEWER)
    w1, w2 = two_submissions(bench)
    login(page, live_server, "boss")
    page.goto(f"{live_server.url}/annotate/review/sample/{w1.sample_id}/")

    layer_rects(page, w2.annotation_id).nth(1).click()  # w2's second box: its note field takes the focus
    focused = page.evaluate("() => document.activeElement.id")
    assert focused == f"note-{w2.annotation_id}-region-1"
    page.keyboard.type("This box cuts the left square in half.")
    page.fill(f"#note-{w2.annotation_id}-key_step-0", "Which squares? Say where they are.")
    page.click(f"button[form='reject-{w2.annotation_id}']")
    page.wait_for_selector(".messages li.success")
    assert {n.text for n in ReviewNote.objects.filter(decision__annotation=w2.annotation)} == {
        "This box cuts the left square in half.", "Which squares? Say where they are."}

    page.context.clear_cookies()
    login(page, live_server, "w2")
    page.goto(f"{live_server.url}/annotate/")
    assert "This box cuts the left square in half." in page.inner_text(f"section[data-benchmark='{bench.slug}']")
    page.click(f"text={w2.sample.uid}")
    notes = page.inner_text("#review-notes")
    assert "Box 2 img0 [60, 10, 90, 40]: This box cuts the left square in half." in notes
    assert "Key step 1" in notes and "Which squares? Say where they are." in notes
    # ... and beside the box and the step they are on, in the editor.
    assert page.inner_text("#box-list li:nth-child(2) .review-note") == "Reviewer: This box cuts the left square in half."
    assert page.locator("#box-list li:nth-child(1) .review-note").count() == 0
    assert page.inner_text("#steps li:nth-child(1) .review-note") == "Reviewer: Which squares? Say where they are."

    page.context.clear_cookies()
    login(page, live_server, "w1")  # the other annotator of the sample sees none of it
    page.goto(f"{live_server.url}/annotate/")
    page.click(f"text={w1.sample.uid}")
    assert page.locator("#review-notes").count() == 0
    assert "left square" not in page.content()


def draw(page, x1: float, y1: float, x2: float, y2: float) -> None:  # noqa: ANN001
    page.mouse.move(*screen(page, x1, y1))
    page.mouse.down()
    page.mouse.move(*screen(page, x2, y2), steps=6)
    page.mouse.up()


def test_a_drawn_box_fills_a_zoom_and_a_crop_calls_arguments(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1, size=(400, 200))  # shown about twice its size: whole pixels hit exactly
    user = make_user("chainer", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    login(page, live_server, "chainer")
    page.goto(live_server.url + assignment.get_absolute_url())
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")

    draw(page, 40, 20, 120, 70)
    assert boxes_on_page(page) == [[40, 20, 120, 70]]
    # The handles: at least 12 px to grab, so a press 8 px off the corner still resizes.
    hit = page.locator("rect.handle-hit.handle-se").bounding_box()
    assert hit["width"] >= 12 and hit["height"] >= 12
    cx, cy = screen(page, 120, 70)
    page.mouse.move(cx + 8, cy + 8)
    page.mouse.down()
    page.mouse.move(*screen(page, 140, 90), steps=6)
    page.mouse.up()
    assert boxes_on_page(page) == [[40, 20, 140, 90]]
    page.keyboard.press("Control+z")
    assert boxes_on_page(page) == [[40, 20, 120, 70]]

    page.click("#add-call")  # zoom_in on img0
    page.click("#chain li:nth-child(1) .take-box")
    assert json.loads(page.input_value("#chain li:nth-child(1) input[name=arg-bbox]")) == [40, 20, 120, 70]
    assert page.evaluate("() => WB.state.toolchain[0].args.bbox") == [40, 20, 120, 70]

    page.click("#add-call")  # a second call reads img1, the zoomed cut: the box is taken relative to it
    page.select_option("#chain li:nth-child(2) select.tool", "crop")
    page.locator("#canvas").focus()
    page.keyboard.press("Delete")  # a press inside a box moves it: the first box goes, its zoom stays
    draw(page, 60, 30, 100, 60)
    assert boxes_on_page(page) == [[60, 30, 100, 60]]
    page.click("#chain li:nth-child(2) .take-box")
    assert page.evaluate("() => WB.state.toolchain[1].args") == {"x": 20, "y": 10, "width": 40, "height": 30}
    assert page.input_value("#chain li:nth-child(2) input[name=arg-width]") == "40"

    heads = page.eval_on_selector_all("#chain .call-head", "els => els.map(e => e.textContent.trim())")
    assert len(heads) == 2 and not any(h[:1].isdigit() for h in heads)  # the list numbers them, once

    page.click("#run-chain")
    page.wait_for_selector("#chain-result .chain-result")
    assert page.get_attribute("#chain-result .chain-result", "data-ok") == "true"
    sizes = page.eval_on_selector_all("#chain-result figure.step img", "els => els.map(e => [e.naturalWidth, e.naturalHeight])")
    assert sizes == [[80, 50], [40, 30]]

    # A box outside the cut the call reads is refused with a message, and the arguments stay.
    draw(page, 300, 120, 380, 180)
    page.click("#chain li:nth-child(2) .take-box")
    assert "outside img1" in page.inner_text("#chain li:nth-child(2) .take-error")
    assert page.evaluate("() => WB.state.toolchain[1].args.x") == 20


def test_the_image_stays_in_view_and_question_mark_lists_the_shortcuts(page, live_server, tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path, n=1, size=(400, 200))
    user = make_user("scroller", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    steps = [{"text": f"Step number {i}", "origin": "human", "verified": True} for i in range(12)]
    chain = [{"tool": "zoom_in", "args": {"bbox": [0, 0, 100, 50]}, "input": "img0", "output": f"img{i + 1}"}
             for i in range(6)]
    assert annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1,
                           data=payload(key_steps=steps, toolchain=chain)).ok
    login(page, live_server, "scroller")
    page.goto(live_server.url + assignment.get_absolute_url())

    page.locator("#chain li:last-child").scroll_into_view_if_needed()
    assert page.evaluate("() => window.scrollY") > 300  # the side panel did scroll the page
    top, bottom, height = page.evaluate(
        "() => { const r = document.getElementById('canvas').getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; }")
    assert 0 <= top and bottom <= height  # the whole image is still on the screen

    page.keyboard.press("Escape")
    page.focus("#qa-answer")
    page.keyboard.type("?")  # typed into a field, a question mark is text
    assert not page.locator("#shortcuts").is_visible()
    page.locator("#canvas").focus()
    page.keyboard.press("?")
    assert page.locator("#shortcuts").is_visible()
    assert "undo" in page.inner_text("#shortcuts") and "from drawn box" in page.inner_text("#shortcuts")
    page.keyboard.press("Escape")
    assert not page.locator("#shortcuts").is_visible()
