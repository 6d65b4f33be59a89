"""The history's account of a revision in words (annotation/workbench/revisions.py), and the history page
in Chromium at a laptop's and a phone's width: what changed, never raw JSON or an empty diff."""

from __future__ import annotations

import os

import pytest

from annotation.models import Role
from annotation.tests.workbench_helpers import PASSWORD, make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save
from annotation.workbench.revisions import snapshot_changes

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


def _texts(old: dict, new: dict) -> list[str]:
    return [f"{c.kind} {c.part}: {c.text}" for c in snapshot_changes(old, new)]


def test_each_part_is_told_in_words() -> None:
    before = payload(toolchain=[{"tool": "zoom_in", "args": {"bbox": [1, 2, 3, 4]}, "input": "img0", "output": "img1",
                                 "verdict": "unchecked", "note": ""}])
    after = payload(answer="4", regions=[{"box": [12, 20, 50, 60], "label": ""}, {"box": [0, 0, 5, 5], "label": "dial"}],
                    key_steps=[{"text": "Rotate it upright.", "origin": "human", "verified": True, "note": ""},
                               {"text": "Count the squares.", "origin": "human", "verified": True, "note": ""}],
                    toolchain=[{"tool": "zoom_in", "args": {"bbox": [1, 2, 3, 4]}, "input": "img0", "output": "img1",
                                "verdict": "valid", "note": ""}])
    assert _texts(before, after) == [
        "change Answer: “3” → “4”",
        "change Box 1: img0 [10, 20, 50, 60] → img0 [12, 20, 50, 60]",
        "add Box 2: img0 [0, 0, 5, 5] “dial”",
        "add Key step 1: “Rotate it upright.”",  # inserted: the step after it is not "changed"
        "change Call 1: img1 = zoom_in(img0, bbox=[1, 2, 3, 4]) → img1 = zoom_in(img0, bbox=[1, 2, 3, 4]), marked valid",
    ]
    assert _texts(after, after) == []
    assert _texts(payload(transform=[]), payload(transform=[{"op": "rotate", "angle": 90}])) == [
        "change Recovery transform: none → rotate(angle=90)"]


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1440, 390])
def test_the_history_page_says_what_changed(live_server, chromium, tmp_path, width: int) -> None:

    bench = make_benchmark(tmp_path, n=1)
    user = make_user("writer", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    annotation = assignment.annotation
    for data in (payload(), payload(answer="4"), payload(answer="4")):
        annotation.refresh_from_db()
        assert annotation_save(annotation_id=annotation.pk, user=user, base_version=annotation.version, data=data).ok
    page = chromium.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "writer")
    page.fill("#id_password", PASSWORD)
    page.click("form.card button[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/annotate/a/{assignment.pk}/history/")
    sections = page.locator("section.revision")
    newest, middle, first = (sections.nth(i).inner_text() for i in range(3))
    assert "No change from version" in newest and "saved again as it was" in newest
    assert "Answer: “3” → “4”" in middle and "Compared with version" in middle
    assert "Answer added: “3”" in first and "Box 1 added: img0 [10, 20, 50, 60]" in first
    assert "{" not in page.inner_text("main")  # no JSON
    assert page.evaluate("document.documentElement.scrollWidth") <= width
