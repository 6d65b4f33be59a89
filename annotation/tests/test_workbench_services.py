"""Workbench services: the queue and its soft locks, saving with revisions and stale-save drafts,
the toolchain verification rule, review (approve, merge, reject) and what exports."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.coco import coco_from_benchmark
from annotation.models import Annotation, AnnotationStatus, AssignmentStatus, Revision, RevisionKind, Sample
from annotation.services import benchmark_export
from annotation.tests.workbench_helpers import bench, first_sample, payload, people  # noqa: F401
from annotation.workbench.access import role_grant
from annotation.workbench.assignments import assignment_claim_next, assignment_skip
from annotation.workbench.chain import ChainNotVerified, annotation_chain_verify
from annotation.workbench.editing import PARTS, annotation_restore, annotation_save, annotation_snapshot
from annotation.workbench.review import ReviewError, annotation_reject, sample_agreement, sample_approve

pytestmark = pytest.mark.django_db


def save(assignment, user, data, *, version=None, submit=False):  # noqa: ANN001, ANN201
    annotation = assignment.annotation
    annotation.refresh_from_db()
    return annotation_save(annotation_id=annotation.pk, user=user, base_version=version or annotation.version,
                           data=data, submit=submit)


def test_a_claimed_item_starts_blank_and_leaves_the_imported_annotation_approved(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    annotation = assignment.annotation
    assert assignment.sample == first_sample(bench)
    assert (annotation.status, annotation.answer, annotation.regions.count()) == ("draft", "", 0)
    assert annotation.question == assignment.sample.question  # the question is given, the answer is not
    assert assignment.sample.annotations.get(status=AnnotationStatus.APPROVED).annotator is None


def test_each_sample_gets_n_annotators_then_the_next_sample(bench, people) -> None:
    got = [assignment_claim_next(user=people[u], benchmark=bench).sample.uid for u in ("ann1", "ann2", "ann3")]
    assert got == ["s0", "s0", "s1"]  # annotators_per_item is 2 in these tests


def test_claiming_again_resumes_the_unfinished_item(bench, people) -> None:
    first = assignment_claim_next(user=people["ann1"], benchmark=bench)
    assert assignment_claim_next(user=people["ann1"], benchmark=bench) == first


def test_an_expired_lock_frees_the_slot_but_keeps_the_draft(bench, people) -> None:
    start = timezone.now()
    idle = assignment_claim_next(user=people["ann1"], benchmark=bench, now=start)
    save(idle, people["ann1"], payload(answer=""))
    assignment_claim_next(user=people["ann2"], benchmark=bench, now=start)
    # Within the lock, s0 is full; after it, the idle annotator's slot goes to someone else.
    assert assignment_claim_next(user=people["ann3"], benchmark=bench, now=start + timedelta(minutes=5)).sample.uid == "s1"
    later = people["rev"]
    role_grant(benchmark=bench, user=later, role="annotator")
    taken = assignment_claim_next(user=later, benchmark=bench, now=start + timedelta(hours=2))
    assert taken.sample.uid == "s0"
    idle.annotation.refresh_from_db()
    assert idle.annotation.regions.count() == 1  # nothing lost


def test_skip_gives_the_slot_back_and_is_not_offered_again(bench, people) -> None:
    skipped = assignment_claim_next(user=people["ann1"], benchmark=bench)
    assignment_skip(assignment=skipped)
    assert assignment_claim_next(user=people["ann1"], benchmark=bench).sample.uid == "s1"
    # s1 (one annotator already) is completed first; then s0, whose skipped slot is free again.
    assert [assignment_claim_next(user=people[u], benchmark=bench).sample.uid for u in ("ann2", "ann3")] == ["s1", "s0"]


def test_every_save_is_a_revision_with_its_author(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    result = save(assignment, people["ann1"], payload())
    assert result.ok and result.version == 2
    revision = Revision.objects.get(annotation=assignment.annotation)
    assert (revision.author, revision.kind, revision.snapshot["regions"][0]["box"]) == (people["ann1"], "save", [10, 20, 50, 60])


def test_a_stale_save_is_refused_and_kept_as_a_draft(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    assert save(assignment, people["ann1"], payload(answer="3")).ok  # tab A saves: version 2
    stale = save(assignment, people["ann1"], payload(answer="7"), version=1)  # tab B still on version 1
    assert not stale.ok
    assert "changed since you opened it" in stale.message and "kept as draft" in stale.message
    annotation = assignment.annotation
    annotation.refresh_from_db()
    assert (annotation.answer, annotation.version) == ("3", 2)
    assert stale.conflict.kind == RevisionKind.CONFLICT and stale.conflict.snapshot["answer"] == "7"
    restored = annotation_restore(revision=stale.conflict, user=people["ann1"])
    annotation.refresh_from_db()
    assert restored.ok and annotation.answer == "7" and annotation.version == 3


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (payload(regions=[{"box": [10, 10, 250, 40]}]), "outside the image (200x100"),
        (payload(regions=[{"box": [50, 10, 10, 40]}]), "inverted"),
        (payload(answer="three"), "not a number"),
        (payload(answer_type="choice", options={"A": "x", "B": "y"}, answer="C"), "not one of the options"),
        (payload(transform=[{"op": "zoom_in", "bbox": [0, 0, 5, 5]}]), "cannot be a recovery transform"),
        (payload(toolchain=[{"tool": "rotate", "args": {"angle": "ninety"}}]), "toolchain[1].args"),
    ],
)
def test_invalid_edits_are_refused_with_the_reason(bench, people, data, message) -> None:
    # A save keeps the part with the problem as stored and saves the rest (test_workbench_saving_keeps_typing.py);
    # a submit refuses the whole.
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    before = annotation_snapshot(assignment.annotation)
    result = save(assignment, people["ann1"], data)
    assert result.ok and len(result.held) == 1 and message in " ".join(result.errors)
    after = annotation_snapshot(Annotation.objects.get(pk=assignment.annotation_id))
    assert all(after[key] == before[key] for key in PARTS[result.held[0]])
    refused = annotation_save(annotation_id=assignment.annotation_id, user=people["ann1"], base_version=result.version,
                              data=data, submit=True)
    assert not refused.ok and message in " ".join(refused.errors)


def test_boxes_are_checked_against_the_frame_after_the_transform(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)  # the image is 200x100
    rotated = payload(transform=[{"op": "rotate", "angle": 90}], regions=[{"box": [10, 120, 90, 190]}])
    assert save(assignment, people["ann1"], rotated).ok


def test_submit_needs_an_answer_and_every_drafted_step_verified(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    drafted = [{"text": "Count them.", "origin": "llm", "verified": False}]
    result = save(assignment, people["ann1"], payload(answer="", key_steps=drafted), submit=True)
    assert "give the answer" in " ".join(result.errors) and "verify step 1" in " ".join(result.errors)
    drafted[0]["verified"] = True
    assert save(assignment, people["ann1"], payload(key_steps=drafted), submit=True).ok
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED and assignment.annotation.status == "submitted"
    assert not save(assignment, people["ann1"], payload()).ok  # submitted work is frozen


def test_a_chain_is_verified_only_when_it_runs_and_every_step_is_valid(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    failing = [{"tool": "zoom_in", "args": {"bbox": [500, 500, 600, 600]}, "verdict": "valid"}]
    save(assignment, people["ann1"], payload(toolchain=failing))
    with pytest.raises(ChainNotVerified, match="the chain fails"):
        annotation_chain_verify(annotation_id=assignment.annotation_id)
    unchecked = [{"tool": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}},
                 {"tool": "rotate", "args": {"angle": 90}, "verdict": "valid"}]
    save(assignment, people["ann1"], payload(toolchain=unchecked))
    with pytest.raises(ChainNotVerified, match="mark step 1 valid"):
        annotation_chain_verify(annotation_id=assignment.annotation_id)
    unchecked[0]["verdict"] = "valid"
    save(assignment, people["ann1"], payload(toolchain=unchecked))
    assert annotation_chain_verify(annotation_id=assignment.annotation_id).chain_verified
    unchecked[1]["args"] = {"angle": 180}  # an edit of the chain withdraws the verification
    save(assignment, people["ann1"], payload(toolchain=unchecked))
    assignment.annotation.refresh_from_db()
    assert not assignment.annotation.chain_verified


def test_a_call_marked_anything_but_valid_withdraws_the_verification(bench, people) -> None:  # noqa: F811
    """Issue 38, item 6: "verified" stood beside a chain whose call had since been marked invalid."""
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    chain = [{"tool": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}, "verdict": "valid"}]
    assert save(assignment, people["ann1"], payload(toolchain=chain)).ok
    assert annotation_chain_verify(annotation_id=assignment.annotation_id).chain_verified
    assert save(assignment, people["ann1"], payload(toolchain=[{**chain[0], "note": "checked twice"}])).ok
    assignment.annotation.refresh_from_db()
    assert assignment.annotation.chain_verified  # a note is not a change of what was verified
    assert save(assignment, people["ann1"], payload(toolchain=[{**chain[0], "verdict": "invalid"}])).ok
    assignment.annotation.refresh_from_db()
    assert not assignment.annotation.chain_verified


def test_changing_the_transform_withdraws_the_verification_of_an_unchanged_chain(bench, people) -> None:
    # The chain starts from the transform (rotate 90, then a zoom); the transform changes, the chain is sent as it was.
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    chain = [{"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1", "verdict": "valid"},
             {"tool": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}, "input": "img1", "output": "img2", "verdict": "valid"}]
    rotated = payload(transform=[{"op": "rotate", "angle": 90}], regions=[], toolchain=chain)
    assert save(assignment, people["ann1"], rotated).ok
    assert annotation_chain_verify(annotation_id=assignment.annotation_id).chain_verified
    assert save(assignment, people["ann1"], {**rotated, "answer": "4"}).ok  # the same transform: still verified
    assignment.annotation.refresh_from_db()
    assert assignment.annotation.chain_verified
    assert save(assignment, people["ann1"], {**rotated, "transform": [{"op": "rotate", "angle": 180}]}).ok
    assignment.annotation.refresh_from_db()
    assert not assignment.annotation.chain_verified
    assert assignment.annotation.tool_calls.first().args == {"angle": 90}  # kept as sent: the page's to rewrite


def _two_submissions(bench, people):  # noqa: ANN001, ANN202
    a1 = assignment_claim_next(user=people["ann1"], benchmark=bench)
    a2 = assignment_claim_next(user=people["ann2"], benchmark=bench)
    assert save(a1, people["ann1"], payload(answer="3", regions=[{"box": [10, 20, 50, 60], "label": "squares"}]), submit=True).ok
    assert save(a2, people["ann2"], payload(answer="4", regions=[{"box": [12, 20, 50, 60]}]), submit=True).ok
    return a1, a2


def test_approving_one_annotation_makes_it_the_one_that_exports(bench, people, tmp_path: Path) -> None:
    a1, a2 = _two_submissions(bench, people)
    sample = a1.sample
    figures = sample_agreement(list(sample.annotations.exclude(status="draft")))
    assert figures.annotators == 2 and figures.box_f1 == 1.0 and figures.answer_agreement == 0.0
    approved = sample_approve(sample=sample, reviewer=people["rev"],
                              sources=dict.fromkeys(("regions", "answer", "key_steps", "toolchain"), a1.annotation_id))
    assert approved.pk == a1.annotation_id and approved.status == "approved"
    assert sample.annotations.filter(annotator=None).get().status == "submitted"  # the import steps back
    benchmark_export(benchmark=bench, out=tmp_path / "out")
    lines = {json.loads(x)["uid"]: json.loads(x) for x in (tmp_path / "out" / "benchmark.jsonl").read_text().splitlines()}
    assert lines["s0"]["regions"] == [[10, 20, 50, 60]] and lines["s0"]["answer"] == "3"
    coco = coco_from_benchmark(bench)
    s0 = next(i for i in coco["images"] if i["uid"] == "s0")
    box = next(a for a in coco["annotations"] if a["image_id"] == s0["id"])
    assert box["bbox"] == [10, 20, 40, 40]
    assert coco["categories"][box["category_id"] - 1]["name"] == "squares"


def test_a_merge_takes_each_part_from_the_chosen_annotation(bench, people) -> None:
    a1, a2 = _two_submissions(bench, people)
    merged = sample_approve(sample=a1.sample, reviewer=people["rev"], sources={
        "regions": a2.annotation_id, "answer": a1.annotation_id, "key_steps": a1.annotation_id, "toolchain": a2.annotation_id})
    assert merged.annotator == people["rev"]
    assert [r.as_box() for r in merged.regions.all()] == [[12, 20, 50, 60]]
    assert Sample.objects.get(pk=a1.sample_id).answer == "3"
    with pytest.raises(ReviewError, match="Nothing approved: choose, for each part"):
        sample_approve(sample=a1.sample, reviewer=people["rev"], sources={"regions": 999999})


def test_rejecting_returns_the_item_to_its_annotator_with_the_comment(bench, people) -> None:
    a1, _ = _two_submissions(bench, people)
    with pytest.raises(ReviewError, match="comment"):
        annotation_reject(annotation=a1.annotation, reviewer=people["rev"], comment=" ")
    annotation_reject(annotation=a1.annotation, reviewer=people["rev"], comment="The box misses the third square.")
    a1.refresh_from_db()
    assert a1.status == AssignmentStatus.RETURNED and a1.review_comment == "The box misses the third square."
    assert assignment_claim_next(user=people["ann1"], benchmark=bench) == a1  # returned work comes first
    assert save(a1, people["ann1"], payload(regions=[{"box": [10, 20, 90, 60]}]), submit=True).ok
