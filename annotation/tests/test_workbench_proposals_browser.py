"""A model's proposal in the workbench, in headless Chromium at a wide and a narrow width: the annotator
accepts one proposed box, takes another to edit and moves it, rejects the transform and edits a step, one key
per action; the saved annotation and its history say exactly that (annotation/workbench/proposals.py)."""

from __future__ import annotations

import os

import pytest

from annotation.models import Annotation, ProposalDecision, Role
from annotation.tests.test_workbench_browser import login
from annotation.tests.test_workbench_proposals import make_proposal
from annotation.tests.workbench_helpers import first_sample, make_benchmark, make_user
from annotation.workbench.assignments import assignment_claim_next

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1500, 760])
def test_accept_a_box_move_another_reject_the_transform_and_edit_a_step(chromium, live_server, tmp_path,
                                                                         width: int) -> None:  # noqa: ANN001
    bench = make_benchmark(tmp_path, n=1)
    user = make_user("ann", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    make_proposal(first_sample(bench), user)
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15000)
    try:
        login(page, live_server, "ann")
        page.goto(live_server.url + assignment.get_absolute_url())
        # The proposed boxes are a dashed, labelled layer; the rest a "proposed" block.
        assert page.locator("#proposal-layer rect.proposed-box").count() == 2
        assert page.locator("#proposal-layer text").first.text_content() == "proposed 1: a"
        part = lambda key: page.locator(f'.proposed-part[data-key="{key}"]')  # noqa: E731
        part("region:0").focus()
        page.keyboard.press("a")
        part("region:1").focus()
        page.keyboard.press("e")  # taken and selected: the arrows move it
        page.keyboard.press("Shift+ArrowRight")
        part("transform:0").focus()
        page.keyboard.press("r")
        part("key_step:0").focus()
        page.keyboard.press("e")  # taken, its text selected in the step editor
        page.keyboard.type("Count the red squares.")
        assert page.locator("#proposal-layer rect").count() == 0  # taken or rejected: no longer drawn dashed
        page.keyboard.press("Control+s")
        page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Saved')")
    finally:
        context.close()
    annotation = Annotation.objects.get(pk=assignment.annotation_id)
    boxes = [r.as_box() for r in annotation.regions.order_by("position")]
    assert boxes == [[20, 20, 60, 60], [110, 20, 150, 60]]  # the two taken, the second moved 10 px
    assert annotation.transform == [] and annotation.key_steps.last().text == "Count the red squares."
    got = {(d.part, d.index): (d.action, d.measure) for d in ProposalDecision.objects.filter(annotation=annotation)}
    assert got == {("region", 0): ("accepted", 1.0), ("region", 1): ("edited", 0.6),
                   ("transform", 0): ("rejected", None), ("key_step", 0): ("edited", 4.0)}
