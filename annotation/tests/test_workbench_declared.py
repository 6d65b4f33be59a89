"""The workbench with declared tools and name-only chains: the verifier runs what it can and says
what it does not run; saves validate declared calls; name-only chains are kept and never run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.imagetools import run_chain
from annotation.models import ReferenceToolCall
from annotation.tests.workbench_helpers import PASSWORD, bench, payload, people  # noqa: F401
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.chain import ChainNotVerified, annotation_chain_verify
from annotation.workbench.editing import annotation_save

pytestmark = pytest.mark.django_db

OCR = {"name": "OCR", "description": "Read the text in an image.",
       "args_schema": {"type": "object", "properties": {"image": {"type": "string"}}, "required": ["image"],
                       "additionalProperties": False}}


@pytest.fixture
def declaring(bench):  # noqa: ANN001, ANN201
    bench.declared_tools = [OCR]
    bench.save(update_fields=["declared_tools"])
    return bench


def client_for(user) -> Client:  # noqa: ANN001
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def run_on_page(user, assignment, chain: list) -> str:  # noqa: ANN001
    return client_for(user).post(reverse("annotation:run_chain", args=[assignment.pk]),
                                 {"chain": json.dumps(chain)}).content.decode()


def save(assignment, user, data):  # noqa: ANN001, ANN201
    annotation = assignment.annotation
    annotation.refresh_from_db()
    return annotation_save(annotation_id=annotation.pk, user=user, base_version=annotation.version, data=data)


def test_the_runner_skips_declared_steps_and_what_needs_their_output() -> None:
    image = np.zeros((40, 60, 3), np.uint8)
    result = run_chain(image, [
        {"tool": "rotate", "args": {"angle": 90}},
        {"tool": "ocr", "args": {"image": "img1"}},
        {"tool": "flip", "args": {}},  # reads img2, which OCR would have made
        {"tool": "flip", "args": {}, "input": "img1"},
    ], declared=["OCR"])
    assert result.ok and result.final == "img4"
    assert [(s.tool, s.output, s.skipped) for s in result.steps] == [
        ("rotate", "img1", None),
        ("OCR", "img2", "declared, not run here"),
        ("flip", "img3", "not run: its input img2 comes from step 2 (OCR), which is not run here"),
        ("flip", "img4", None),
    ]
    assert set(result.images) == {"img0", "img1", "img4"}
    # Without the declaration the same chain stops at OCR, as before.
    assert run_chain(image, [{"tool": "ocr", "args": {}}]).error == 'step 1: unknown tool "ocr"'


def test_the_verifier_page_shows_a_declared_step_as_not_run_here(declaring, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=declaring)
    html = run_on_page(people["ann1"], assignment, [
        {"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1", "verdict": "unchecked"},
        {"tool": "OCR", "args": {"image": "img1"}, "input": "img1", "output": "img2"},
        {"tool": "zoom_in", "args": {"bbox": [0, 0, 50, 50]}, "input": "img1", "output": "img3"},
    ])
    assert 'data-ok="true"' in html
    assert "The chain ran: 3 steps, 1 not run here." in html
    assert '2. img2 = OCR(img1) <span class="skipped-note">declared, not run here</span>' in html
    assert "3. img3 = zoom_in(img1)" in html
    assert html.count("data:image/png;base64,") == 3  # img0, img1 and img3; nothing for OCR


def test_the_item_page_offers_the_declared_tools(declaring, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=declaring)
    html = client_for(people["ann1"]).get(reverse("annotation:item", args=[assignment.pk])).content.decode()
    tools = json.loads(html.split('<script id="tools-data" type="application/json">')[1].split("</script>")[0])
    ocr = next(t for t in tools if t["name"] == "OCR")
    assert ocr["declared"] and ocr["module"] == "declared (not run here)" and ocr["schema"] == OCR["args_schema"]


def test_a_name_only_chain_is_shown_as_names_and_never_run(bench, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=bench)
    html = run_on_page(people["ann1"], assignment, [{"tool": "Crop", "verdict": "unchecked", "note": ""},
                                                     {"tool": "Histogram Eq"}])
    assert 'data-name-only="true"' in html and "it is never run" in html
    assert "<li>crop <span class=\"muted\">(name only, not run)</span></li>" in html
    assert "<li>histogram_eq" in html
    assert "data:image/png" not in html


def test_saving_checks_declared_calls_and_keeps_name_only_chains(declaring, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=declaring)
    bad = save(assignment, people["ann1"], payload(toolchain=[{"tool": "OCR", "args": {"img": "img0"}}]))
    assert bad.held == ["toolchain"]  # the chain kept as stored, the rest saved
    assert bad.errors == ['toolchain[1].args: OCR: argument "image" is missing (it is required)']
    assert not ReferenceToolCall.objects.filter(annotation=assignment.annotation).exists()
    names = [{"tool": "Crop", "verdict": "valid", "note": "ok"}, {"tool": "OCR", "verdict": "unchecked", "note": ""}]
    assert save(assignment, people["ann1"], payload(toolchain=names)).ok
    rows = list(ReferenceToolCall.objects.filter(annotation=assignment.annotation).order_by("position"))
    assert [(r.tool, r.name_only, r.verdict, r.note) for r in rows] == [("crop", True, "valid", "ok"),
                                                                      ("OCR", True, "unchecked", "")]
    with pytest.raises(ChainNotVerified, match="tool names only .* it is never run"):
        annotation_chain_verify(annotation_id=assignment.annotation_id)


def test_a_chain_with_a_declared_step_is_verified_when_the_rest_runs(declaring, people) -> None:
    assignment = assignment_claim_next(user=people["ann1"], benchmark=declaring)
    chain = [{"tool": "rotate", "args": {"angle": 90}, "verdict": "valid"},
             {"tool": "OCR", "args": {"image": "img1"}, "verdict": "valid"}]
    assert save(assignment, people["ann1"], payload(toolchain=chain)).ok
    assert annotation_chain_verify(annotation_id=assignment.annotation_id).chain_verified
