"""The review page that compares (issue 17, part 4), server side: nothing preselected, an approval
with a part not chosen refused (and nothing lost), the calls shown with their arguments, and the
reviewer's notes on single boxes, steps and calls reaching that annotator, and no one else."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import AnnotationStatus, ReviewDecision, ReviewNote
from annotation.tests.workbench_helpers import PASSWORD, bench, payload, people  # noqa: F401
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save

pytestmark = pytest.mark.django_db
PARTS = ("regions", "answer", "key_steps", "toolchain")
CHAIN = [{"tool": "zoom_in", "args": {"bbox": [10, 20, 60, 70], "scale": 2}, "input": "img0", "output": "img1"}]


def client_for(user) -> Client:  # noqa: ANN001
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def submitted(bench, user, **data):  # noqa: ANN001, ANN003, ANN201
    assignment = assignment_claim_next(user=user, benchmark=bench)
    result = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1,
                             data=payload(**data), submit=True)
    assert result.ok, result.errors
    return assignment


def review_url(assignment) -> str:  # noqa: ANN001
    return reverse("annotation:review_sample", args=[assignment.sample_id])


def test_the_review_page_preselects_nothing_and_shows_the_calls_arguments(bench, people) -> None:
    a1 = submitted(bench, people["ann1"], toolchain=CHAIN)
    submitted(bench, people["ann2"])
    html = client_for(people["rev"]).get(review_url(a1)).content.decode()
    radios = re.findall(r'<input type="radio" name="source_[a-z_]+"[^>]*>', html)
    assert len(radios) == 4 * 3  # four parts for ann1, ann2 and the imported annotation
    assert not [r for r in radios if "checked" in r]
    assert "img1 = zoom_in(img0, bbox=[10, 20, 60, 70], scale=2)" in html


def test_an_approval_without_a_choice_is_refused_and_keeps_what_was_chosen(bench, people) -> None:
    a1 = submitted(bench, people["ann1"], regions=[{"box": [1, 2, 30, 40]}])
    submitted(bench, people["ann2"])
    reviewer = client_for(people["rev"])
    imported = a1.sample.annotations.get(annotator=None)

    nothing = reviewer.post(review_url(a1), {"action": "approve", "comment": "looks right"})
    assert nothing.status_code == 400
    text = nothing.content.decode()
    assert "Nothing approved: choose, for each part, the annotation it comes from." in text
    assert "boxes (with the transform), question and answer, key steps, toolchain" in text
    assert 'value="looks right"' in text  # the reviewer's comment is kept

    some = reviewer.post(review_url(a1), {"action": "approve", "source_regions": a1.annotation_id})
    assert some.status_code == 400
    text = some.content.decode()
    assert "Not chosen yet: question and answer, key steps, toolchain." in text
    assert f'name="source_regions" value="{a1.annotation_id}" checked' in text

    assert not ReviewDecision.objects.exists()
    imported.refresh_from_db()
    assert imported.status == AnnotationStatus.APPROVED  # still the imported annotation counts
    assert a1.sample.annotations.filter(status=AnnotationStatus.APPROVED).count() == 1


def _reject(reviewer: Client, assignment, comment: str, **notes: str):  # noqa: ANN001, ANN201
    return reviewer.post(review_url(assignment), {"action": "reject", "annotation": assignment.annotation_id,
                                                  f"comment_{assignment.annotation_id}": comment, **notes})


def test_notes_on_a_box_a_step_and_a_call_reach_their_annotator_and_no_one_else(bench, people) -> None:
    steps = [{"text": t, "origin": "human", "verified": True} for t in ("Find the squares.", "Count them.")]
    a1 = submitted(bench, people["ann1"], regions=[{"box": [10, 20, 50, 60]}, {"box": [70, 10, 90, 30]}],
                   key_steps=steps, toolchain=CHAIN)
    a2 = submitted(bench, people["ann2"])
    reviewer = client_for(people["rev"])
    response = _reject(reviewer, a1, "", note_region_1="This box is on the shadow.",
                       note_key_step_1="Say how you counted.", note_tool_call_0="Zoom to the squares only.",
                       note_region_0="")
    assert response.status_code == 302
    notes = {(n.part, n.position): (n.target, n.text) for n in ReviewNote.objects.all()}
    assert notes == {
        ("region", 1): ("img0 [70, 10, 90, 30]", "This box is on the shadow."),
        ("key_step", 1): ("Count them.", "Say how you counted."),
        ("tool_call", 0): ("img1 = zoom_in(img0, bbox=[10, 20, 60, 70], scale=2)", "Zoom to the squares only."),
    }
    assert _reject(reviewer, a2, "ann2's own comment", note_region_0="ann2's box note").status_code == 302

    ann1 = client_for(people["ann1"])
    item = ann1.get(a1.get_absolute_url()).content.decode()
    assert "This box is on the shadow." in item and "img0 [70, 10, 90, 30]" in item
    assert "Say how you counted." in item and "Zoom to the squares only." in item
    assert "ann2" not in item  # the other annotator's notes stay with them
    queue = ann1.get(reverse("annotation:queue")).content.decode()
    assert "This box is on the shadow." in queue and "ann2&#x27;s box note" not in queue

    ann2 = client_for(people["ann2"])
    for page in (ann2.get(a2.get_absolute_url()), ann2.get(reverse("annotation:queue"))):
        text = page.content.decode()
        assert "ann2&#x27;s box note" in text
        assert "This box is on the shadow." not in text and "Say how you counted." not in text
    assert ann2.get(a1.get_absolute_url()).status_code == 404
    for outsider in ("ann3", "outsider"):
        assert "This box is on the shadow." not in client_for(people[outsider]).get(reverse("annotation:queue")).content.decode()

    # The reviewers of the benchmark see what was asked, when the work comes back.
    a1.annotation.refresh_from_db()
    annotation_save(annotation_id=a1.annotation_id, user=people["ann1"], base_version=a1.annotation.version,
                    data=payload(regions=[{"box": [10, 20, 50, 60]}], key_steps=steps), submit=True)
    assert "This box is on the shadow." in reviewer.get(review_url(a1)).content.decode()


def test_a_send_back_needs_a_comment_or_a_note_and_refuses_a_note_on_a_missing_item(bench, people) -> None:
    a1 = submitted(bench, people["ann1"])
    reviewer = client_for(people["rev"])
    empty = _reject(reviewer, a1, " ", note_region_0=" ")
    assert empty.status_code == 400 and "say what needs changing" in empty.content.decode()
    stale = _reject(reviewer, a1, "", note_key_step_5="There is no sixth step.")
    assert stale.status_code == 400 and "key step 6 names an item" in stale.content.decode()
    assert not ReviewDecision.objects.exists()
    a1.annotation.refresh_from_db()
    assert a1.annotation.status == AnnotationStatus.SUBMITTED
