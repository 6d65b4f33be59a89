"""evaluation/proposal_quality.py and its page: a proposal run of the simulated model (its own process) scored
against the approved annotations, every figure equal to a hand computation, undefined ones "not available"."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Annotation, Proposal, ProposalDecision
from evaluation import proposal_runs
from evaluation.proposal_quality import proposal_quality
from evaluation.run_inputs import write_simulated_key
from evaluation.tests.harness_fixtures import simulated_model
from evaluation.tests.submission_helpers import make_benchmark

pytestmark = pytest.mark.django_db


def test_the_figures_of_a_simulated_run_equal_a_hand_computation(settings, tmp_path: Path, client) -> None:  # noqa: ANN001
    settings.RUNS_ALLOW_PRIVATE_ENDPOINTS = True
    settings.RUNS_CACHE_PATH = tmp_path / "cache.sqlite3"
    benchmark = make_benchmark(tmp_path / "bench")
    staff = get_user_model().objects.create_user("staff", password="pw", is_staff=True)
    key = write_simulated_key(benchmark, tmp_path / "key.jsonl")
    with simulated_model(key, tmp_path / "log.jsonl") as url:
        run = proposal_runs.proposal_run_create(benchmark=benchmark, owner=staff, endpoint=url, model="=sim-a",
                                                split="dev")
        proposal_runs.proposal_run_execute(run_id=run.pk)
    # Two annotators decided on a proposed transform: one accepted it, one rejected it.
    proposals = list(Proposal.objects.filter(run=run).order_by("sample__uid"))
    for proposal, action in zip(proposals, ("accepted", "rejected"), strict=False):
        annotation = Annotation.objects.create(sample=proposal.sample, annotator=staff)
        ProposalDecision.objects.create(annotation=annotation, proposal=proposal, part="transform", action=action)
    by_run, by_model = proposal_quality(benchmark)
    assert by_run.label == f"run #{run.pk}" and by_model.label == "=sim-a" and by_run.items == 3
    f = by_run.figures
    # Each approved box [10, 10, 60, 40] against the proposed [15, 10, 65, 40]: 45 x 30 / (1500 + 1500 - 1350).
    assert f["box_iou_mean"].value == pytest.approx(1350 / 1650) and f["box_iou_mean"].n == 3
    assert f["box_iou_share_over_half"].value == 1.0
    assert f["transform_accepted_unchanged"].value == 0.5 and f["transform_accepted_unchanged"].n == 2
    # Approved steps ["Rotate the image upright.", "Count the squares."]; proposed: the first alone.
    assert f["kcov"].value == 0.5 and f["kcov_any"].value == 0.5
    assert f["chain_edit_distance"].value == 0.0  # the approved chain itself
    assert f["minutes_with_proposals"].value is None and "submitted" in f["minutes_with_proposals"].reason
    assert by_model.figures["box_iou_mean"].value == f["box_iou_mean"].value
    client.force_login(staff)
    page = client.get(f"/runs/proposals/{benchmark.slug}/quality/").content.decode()
    assert "0.818" in page and "not available" in page and "no annotation that used these proposals" in page
    rows = list(csv.DictReader(io.StringIO(client.get(f"/runs/proposals/{benchmark.slug}/quality.csv").content.decode())))
    assert rows[0]["model"] == "'=sim-a"  # a spreadsheet would run it: quoted (config/csv_cells.py)
    assert rows[0]["box_iou_mean"] == "0.8182" and rows[0]["minutes_with_proposals"] == ""
    assert rows[0]["minutes_with_proposals_not_available"]
    data = client.get(f"/runs/proposals/{benchmark.slug}/quality.json").json()
    assert data["rows"][0]["kcov"] == {"value": 0.5, "n": 3}
    assert data["rows"][0]["minutes_without_proposals"]["value"] is None


def test_no_run_and_no_gold_say_not_available_never_zero(tmp_path: Path) -> None:
    from annotation.models import ProposalRun

    benchmark = make_benchmark(tmp_path / "bench")
    assert proposal_quality(benchmark) == []
    owner = get_user_model().objects.create_user("o")
    run = ProposalRun.objects.create(benchmark=benchmark, owner=owner, endpoint="http://x/v1", model="m",
                                     prompt_version="proposals_v1")
    Proposal.objects.create(run=run, sample=benchmark.samples.first(), model="m", prompt_version="proposals_v1",
                            errors={"reply": "the reply holds no JSON object"})
    row = proposal_quality(benchmark)[0]
    assert all(fig.value is None and fig.reason for fig in row.figures.values())
