"""Loading the demo again (scripts/run does at every start) never replaces what people approved or edited, and
any import that replaces an approved annotation says so in its history (issue 38, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Annotation, AnnotationStatus, Revision, RevisionKind, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from annotation.tests.workbench_helpers import bench, payload, people  # noqa: F401
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save
from annotation.workbench.review import sample_approve
from annotation.workbench.revisions import history_rows

pytestmark = pytest.mark.django_db
PARTS = ("regions", "answer", "key_steps", "toolchain")


def _file(folder: Path, *, s1_box: list[int]) -> Path:
    """The workbench helpers' three samples (the same lines make_benchmark imported), s1's box as given."""
    lines = [sample_line(f"s{i}", transform=[], regions=[s1_box if i == 1 else [10, 10, 60, 40]], toolchain=[])
             for i in range(3)]
    return write_benchmark(folder, lines, size=(200, 100))


def _approve_an_annotators_work(bench, people) -> Annotation:  # noqa: ANN001, F811
    """ann1 answers s0 with a box and a key step of their own; the reviewer approves it."""
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    result = annotation_save(annotation_id=assignment.annotation_id, user=people["ann1"], base_version=1, submit=True,
                             data=payload(answer="7", regions=[{"box": [20, 20, 80, 60], "label": "theirs"}],
                                          key_steps=[{"text": "Count the squares by hand.", "origin": "human",
                                                      "verified": True, "note": ""}]))
    assert result.ok, result.errors
    return sample_approve(sample=assignment.sample, reviewer=people["rev"],
                          sources=dict.fromkeys(PARTS, assignment.annotation_id))


def _approved(bench, uid: str) -> Annotation:  # noqa: ANN001
    return Annotation.objects.get(sample__benchmark=bench, sample__uid=uid, status=AnnotationStatus.APPROVED)


def test_the_demo_loaded_again_leaves_what_people_approved_and_says_how_many(bench, people, tmp_path) -> None:  # noqa: F811
    approved = _approve_an_annotators_work(bench, people)
    sample = Sample.objects.get(pk=approved.sample_id)
    assert sample.answer == "7"  # the review copied the annotator's answer to the sample
    reviewed_import = _approved(bench, "s2")  # the imported annotation of s2, approved as it came by the reviewer
    sample_approve(sample=reviewed_import.sample, reviewer=people["rev"], sources=dict.fromkeys(PARTS, reviewed_import.pk))

    summary = benchmark_import(path=_file(tmp_path / "again", s1_box=[10, 10, 60, 40]), slug=bench.slug,
                               keep_edited=True)

    assert summary.kept == 1 and "1 approved annotation(s) people edited or reviewed left as they are" in str(summary)
    kept = _approved(bench, "s0")
    assert kept.pk == approved.pk and kept.annotator_id == people["ann1"].pk
    assert [r.as_box() for r in kept.regions.all()] == [[20, 20, 80, 60]]
    assert [s.text for s in kept.key_steps.all()] == ["Count the squares by hand."]
    assert Sample.objects.get(pk=sample.pk).answer == "7"  # the approved answer, not the file's
    assert not kept.revisions.filter(kind=RevisionKind.IMPORT).exists()
    assert _approved(bench, "s2").pk == reviewed_import.pk  # the file equals it: nothing to leave or replace


def test_an_imported_annotation_nobody_touched_follows_the_file_and_its_history_says_so(bench, people,  # noqa: F811
                                                                                        tmp_path) -> None:
    summary = benchmark_import(path=_file(tmp_path / "moved", s1_box=[30, 30, 90, 70]), slug=bench.slug,
                               keep_edited=True)
    assert summary.kept == 0 and summary.updated == 1
    s1 = _approved(bench, "s1")
    assert [r.as_box() for r in s1.regions.all()] == [[30, 30, 90, 70]]
    revisions = list(Revision.objects.filter(annotation=s1).order_by("-pk"))
    assert [r.kind for r in revisions] == [RevisionKind.IMPORT, RevisionKind.IMPORT]
    rows = history_rows(revisions)
    assert [(c.part, c.kind) for c in rows[0].changes] == [("Box 1", "change")]  # the box the file moved


def test_a_staff_import_replaces_an_annotators_approved_work_and_the_history_keeps_both(bench, people,  # noqa: F811
                                                                                      tmp_path) -> None:
    approved = _approve_an_annotators_work(bench, people)
    summary = benchmark_import(path=_file(tmp_path / "staff", s1_box=[10, 10, 60, 40]), slug=bench.slug)
    assert summary.kept == 0
    replaced = _approved(bench, "s0")
    assert [r.as_box() for r in replaced.regions.all()] == [[10, 10, 60, 40]]
    kinds = list(replaced.revisions.order_by("pk").values_list("kind", flat=True))
    assert kinds[-1] == RevisionKind.IMPORT and RevisionKind.REVIEW in kinds  # what it was, and what replaced it
    assert replaced.pk == approved.pk
