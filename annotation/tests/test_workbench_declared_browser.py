"""The chain editor in headless Chromium with a declared tool and with a name-only chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import ReferenceToolCall, Role
from annotation.tests.test_workbench_browser import browser, login, page  # noqa: F401  (fixtures)
from annotation.tests.workbench_helpers import make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OCR = {"name": "OCR", "description": "Read the text in an image.",
       "args_schema": {"type": "object", "properties": {"image": {"type": "string"}}, "required": ["image"],
                       "additionalProperties": False}}


def open_with_chain(page, live_server, tmp_path: Path, chain: list, *, declared: list) -> object:  # noqa: ANN001
    bench = make_benchmark(tmp_path, n=1)
    bench.declared_tools = declared
    bench.save(update_fields=["declared_tools"])
    user = make_user("chainer", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    assert annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=assignment.annotation.version,
                           data=payload(toolchain=chain)).ok
    login(page, live_server, "chainer")
    page.goto(live_server.url + assignment.get_absolute_url())
    return assignment


def test_a_declared_step_is_offered_shown_and_not_run(page, live_server, tmp_path: Path) -> None:  # noqa: F811
    open_with_chain(page, live_server, tmp_path, [{"tool": "rotate", "args": {"angle": 90}},
                                                  {"tool": "OCR", "args": {"image": "img1"}}], declared=[OCR])
    second = "#chain li:nth-child(2)"
    assert page.input_value(f"{second} select.tool") == "OCR"
    assert "Declared by the benchmark: validated, not run here." in page.inner_text(second)
    assert page.input_value(f"{second} input[name=arg-image]") == "img1"  # its form comes from the declared schema
    page.click("#run-chain")
    page.wait_for_selector("#chain-result .chain-result")
    result = page.inner_text("#chain-result")
    assert "The chain ran: 2 steps, 1 not run here." in result
    assert "2. img2 = OCR(img1) declared, not run here" in result
    assert page.locator("#chain-result figure img").count() == 2  # img0 and the rotation


def test_a_name_only_chain_stays_names_through_an_edit_and_a_save(page, live_server, tmp_path: Path) -> None:  # noqa: F811
    assignment = open_with_chain(page, live_server, tmp_path, ["Crop", "Flip"], declared=[])
    assert page.locator("#chain li.name-only").count() == 2
    assert "name only, not run" in page.inner_text("#chain li:nth-child(1)")
    assert page.locator("#chain li:nth-child(1) input[name^=arg-]").count() == 0  # no argument form
    page.click("#add-call")
    page.select_option("#chain li:nth-child(3) select.tool", "histogram_eq")
    page.click("#save-btn")
    page.wait_for_function("() => document.getElementById('save-status').textContent.startsWith('Saved')")
    rows = ReferenceToolCall.objects.filter(annotation=assignment.annotation_id).order_by("position")
    assert [(r.tool, r.name_only) for r in rows] == [("crop", True), ("flip", True), ("histogram_eq", True)]
    page.click("#run-chain")
    page.wait_for_selector("#chain-result .chain-result")
    assert "it is never run" in page.inner_text("#chain-result")
