"""Saving never loses typing (issue 38, item 5; annotation/workbench/editing.py, payload_clean's `held`): a save
with an unfinished tool call saves the rest and keeps the chain as stored, saying so on the call; an added step
not yet written does not block a save; a submit still refuses both. The page at 1440 and 390 px."""

from __future__ import annotations

import os

import pytest

from annotation.models import Annotation, Role
from annotation.tests.test_workbench_browser import browser, login  # noqa: F401 - the module's Chromium, a fixture
from annotation.tests.test_workbench_chain_browser import page  # noqa: F401 - a fixture: at 1440 and 390 px
from annotation.tests.workbench_helpers import bench, make_benchmark, make_user, payload, people  # noqa: F401
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save, annotation_snapshot

ZOOM = {"tool": "zoom_in", "args": {"bbox": [0, 0, 40, 20]}, "input": "img0", "output": "img1", "verdict": "valid"}
UNFINISHED = {"tool": "rotate", "args": {}, "input": "img1", "output": "img2"}  # its angle not given yet


@pytest.mark.django_db
def test_an_unfinished_call_keeps_the_stored_chain_and_the_rest_is_saved(bench, people) -> None:  # noqa: F811
    user = people["ann1"]
    assignment = assignment_claim_next(user=user, benchmark=bench)
    first = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1,
                            data=payload(toolchain=[ZOOM]))
    assert first.ok and not first.held
    steps = [{"text": "Find the dial.", "origin": "human", "verified": True, "note": ""},
             {"text": "", "origin": "human", "verified": True, "note": ""}]  # added, not written yet
    result = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=first.version,
                             data=payload(answer="7", key_steps=steps, toolchain=[ZOOM, UNFINISHED]))
    assert result.ok and result.held == ["toolchain"]
    assert result.message.startswith("Saved, except the toolchain")
    assert [e for e in result.errors if e.startswith("toolchain[2]")] == result.errors and "angle" in result.errors[0]
    stored = annotation_snapshot(Annotation.objects.get(pk=assignment.annotation_id))
    assert stored["answer"] == "7"
    assert [s["text"] for s in stored["key_steps"]] == ["Find the dial."]
    assert [c["tool"] for c in stored["toolchain"]] == ["zoom_in"]

    refused = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=result.version,
                              data=payload(answer="7", key_steps=steps, toolchain=[ZOOM, UNFINISHED]), submit=True)
    assert not refused.ok and any(e.startswith("toolchain[2]") for e in refused.errors)
    assert any(e.startswith("key_steps[2]") for e in refused.errors)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_typing_survives_an_unfinished_call_and_a_reopening(page, live_server, tmp_path) -> None:  # noqa: ANN001, F811
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    benchmark = make_benchmark(tmp_path, n=1, size=(400, 200))
    user = make_user("typist", benchmark, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=benchmark)
    login(page, live_server, "typist")
    page.goto(live_server.url + assignment.get_absolute_url())
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")
    page.click("#add-call")  # a zoom_in, its box not given yet
    page.fill("#qa-answer", "12")
    page.click("#add-step")
    page.fill("#steps li:last-child textarea", "Count the dials.")
    page.click("#save-btn")
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Saved, except the toolchain')")
    assert "bbox" in page.inner_text("#chain li:nth-child(1) .call-problem")
    assert "toolchain[1]" in page.inner_text("#errors")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= page.viewport_size["width"]

    page.goto(live_server.url + "/annotate/")  # reopened: what was typed is there
    page.goto(live_server.url + assignment.get_absolute_url())
    page.wait_for_function("() => document.getElementById('stage-image').getAttribute('href')")
    assert page.input_value("#qa-answer") == "12"
    assert page.eval_on_selector_all("#steps textarea", "els => els.map(e => e.value)") == ["Count the dials."]
