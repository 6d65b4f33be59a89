"""A model's proposal in the workbench (annotation/workbench/proposals.py): what the annotator did with each part
is recorded on the annotation's history, read from the saved work (IoU for a box, edit distance for a step and
the chain); the item page offers the proposal; agreement and review never see it."""

from __future__ import annotations

import pytest

from annotation.models import Annotation, Proposal, ProposalDecision, ProposalRun, Role
from annotation.tests.workbench_helpers import PASSWORD, first_sample, make_benchmark, make_user, payload
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save
from annotation.workbench.proposals import edit_distance

pytestmark = pytest.mark.django_db

PROPOSED = {"regions": [{"box": [20, 20, 60, 60], "label": "a"}, {"box": [100, 20, 140, 60], "label": "b"}],
            "transform": [{"op": "contrast", "alpha": 1.5, "beta": 0}],
            "key_steps": ["Count the squares.", "Say the number."],
            "toolchain": [{"tool": "zoom_in", "args": {"bbox": [20, 20, 60, 60]}, "input": "img0", "output": "img1"}]}


def make_proposal(sample, owner) -> Proposal:  # noqa: ANN001
    run = ProposalRun.objects.create(benchmark=sample.benchmark, owner=owner, endpoint="http://127.0.0.1:9/v1",
                                     model="sim", prompt_version="proposals_v1", status="done",
                                     details={"simulated": True})
    return Proposal.objects.create(run=run, sample=sample, model="sim-proposer", prompt_version="proposals_v1",
                                   raw_reply="{}", confidence=0.8, **PROPOSED)


def test_each_decision_is_recorded_with_how_far_the_final_work_is(tmp_path) -> None:  # noqa: ANN001
    bench = make_benchmark(tmp_path, n=1)
    user = make_user("ann", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    proposal = make_proposal(first_sample(bench), user)
    data = payload(
        regions=[{"box": [20, 20, 60, 60], "label": "a", "proposal": 0},  # accepted as proposed
                 {"box": [110, 20, 150, 60], "label": "b", "proposal": 1},  # accepted, then moved 10 px right
                 {"box": [1, 1, 9, 9], "label": "mine"}],
        key_steps=[{"text": "Count the red squares.", "origin": "human", "verified": True, "note": "", "proposal": 0}],
        toolchain=[{**PROPOSED["toolchain"][0], "verdict": "unchecked", "note": ""}], proposal_chain=True,
        proposal={"id": proposal.pk, "decisions": [
            {"part": "region", "index": 0, "action": "accepted"}, {"part": "region", "index": 1, "action": "accepted"},
            {"part": "transform", "index": 0, "action": "rejected"}, {"part": "key_step", "index": 0, "action": "edited"},
            {"part": "key_step", "index": 1, "action": "rejected"}, {"part": "toolchain", "index": 0, "action": "accepted"}]})
    result = annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1, data=data)
    assert result.ok, result.errors
    got = {(d.part, d.index): (d.action, d.measure) for d in ProposalDecision.objects.all()}
    # Box 2: 30 x 40 overlap of two 40 x 40 boxes: 1200 / (1600 + 1600 - 1200) = 0.6.
    assert got == {("region", 0): ("accepted", 1.0), ("region", 1): ("edited", 0.6), ("transform", 0): ("rejected", None),
                   ("key_step", 0): ("edited", 4.0), ("key_step", 1): ("rejected", None),
                   ("toolchain", 0): ("accepted", 0.0)}
    assert {d.revision.version for d in ProposalDecision.objects.all()} == {2}
    # The saved annotation is the annotator's work: the region tags and the proposal are not part of it.
    annotation = Annotation.objects.get(pk=assignment.annotation_id)
    assert [r.as_box() for r in annotation.regions.all()] == [[20, 20, 60, 60], [110, 20, 150, 60], [1, 1, 9, 9]]
    assert annotation.transform == [] and [s.text for s in annotation.key_steps.all()] == ["Count the red squares."]
    # A later save that moves box 1 updates its decision, on the new revision.
    data["regions"][0]["box"] = [20, 20, 60, 70]
    annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=2, data=data)
    moved = ProposalDecision.objects.get(part="region", index=0)
    assert moved.action == "edited" and moved.measure == round(1600 / 2000, 4) and moved.revision.version == 3


def test_the_history_and_the_item_page_say_it(tmp_path, client) -> None:  # noqa: ANN001
    bench = make_benchmark(tmp_path, n=1)
    user = make_user("ann", bench, Role.ANNOTATOR)
    assignment = assignment_claim_next(user=user, benchmark=bench)
    proposal = make_proposal(first_sample(bench), user)
    annotation_save(annotation_id=assignment.annotation_id, user=user, base_version=1, data=payload(
        regions=[{"box": [25, 20, 65, 60], "label": "a", "proposal": 0}],
        proposal={"id": proposal.pk, "decisions": [{"part": "region", "index": 0, "action": "edited"},
                                                    {"part": "transform", "index": 0, "action": "rejected"}]}))
    client.login(username="ann", password=PASSWORD)
    history = client.get(assignment.get_absolute_url() + "history/").content.decode()
    assert "Proposed box 1 edited (IoU 0.78)" in history and "Proposed transform rejected" in history
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert 'id="proposal"' in page and "sim-proposer" in page and "(simulated model)" in page
    assert '"proposal_decided": [{"part": "region", "index": 0, "action": "edited"}' in page


def test_a_proposal_is_not_an_annotation_for_agreement_or_review(tmp_path) -> None:  # noqa: ANN001
    bench = make_benchmark(tmp_path, n=1)
    user = make_user("ann", bench, Role.ANNOTATOR)
    sample = first_sample(bench)
    before = Annotation.objects.filter(sample=sample).count()
    make_proposal(sample, user)
    assert Annotation.objects.filter(sample=sample).count() == before


def test_edit_distance() -> None:
    assert edit_distance("Count the squares.", "Count the red squares.") == 4
    assert edit_distance(["a", "b", "c"], ["a", "c"]) == 1 and edit_distance([], ["x", "y"]) == 2


def _proposed(sample, owner, model: str, box: list[int], confidence: float | None) -> Proposal:  # noqa: ANN001
    run = ProposalRun.objects.create(benchmark=sample.benchmark, owner=owner, endpoint="http://127.0.0.1:9/v1",
                                     model=model, prompt_version="proposals_v1", status="done")
    return Proposal.objects.create(run=run, sample=sample, model=model, prompt_version="proposals_v1",
                                   regions=[{"box": box, "label": ""}], confidence=confidence)


def test_the_queue_sorts_by_proposal_confidence_or_by_two_models_disagreement(tmp_path, client) -> None:  # noqa: ANN001
    from annotation.models import Sample

    bench = make_benchmark(tmp_path, n=4, per_item=3)
    s0, s1, s2, s3 = Sample.objects.filter(benchmark=bench).order_by("position")
    owner = make_user("owner")
    _proposed(s0, owner, "a", [10, 10, 50, 50], 0.9)
    _proposed(s1, owner, "a", [10, 10, 50, 50], 0.2)
    _proposed(s2, owner, "a", [10, 10, 50, 50], 0.5)
    _proposed(s0, owner, "b", [12, 10, 52, 50], None)  # two models nearly agree on s0
    _proposed(s2, owner, "b", [100, 50, 140, 90], None)  # and disagree entirely on s2
    picks = {}
    for order in ("", "confidence", "disagreement"):
        user = make_user(f"ann-{order or 'plain'}", bench, Role.ANNOTATOR)
        client.force_login(user)
        response = client.post(f"/annotate/next/{bench.slug}/", {"order": order})
        assert response.status_code == 302, response
        picks[order] = user.assignments.get().sample.uid
    assert picks == {"": s0.uid, "confidence": s1.uid, "disagreement": s2.uid}
    page = client.get("/annotate/").content.decode()
    assert "least confident proposal first" in page and "most disagreement between two models" in page
