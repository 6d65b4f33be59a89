"""Figures that single-line bugs used to change without any test noticing (issue 13).

Each test names the bug it catches; every expected value is computed by hand in the comments.
"""

from __future__ import annotations

import pytest

from evaluation.judges import OfflineJudge
from evaluation.metrics import (
    Point,
    bootstrap_mcc,
    normalized_edit_distance,
    pareto_frontier,
    routing_baselines,
    score_submission,
)

KEYS = ["Rotate the image upright", "Read the street sign"]
ROTATE_STEP = {"thought": "Rotate the image upright.", "tool": {"name": "rotate", "args": {"angle": 90}}}
READ_STEP = {"thought": "Read the street sign."}


def _adaptive(uid: str, steps: list[dict], answer: str = "x") -> dict:
    return {"sample_id": uid, "mode": "adaptive", "answer": answer, "steps": steps}


def _zoom(box: list[int]) -> dict:
    return {"thought": "Zoom in.", "tool": {"name": "zoom_in", "args": {"bbox": box}}}


# ------------------------------------------------------------------ reasoning process figures

def test_aux_line_samples_stay_out_of_key_step_coverage() -> None:
    """Bug: aux-line samples counted in key-step coverage."""
    samples = [{"uid": "k1", "answer": "x", "key_steps": KEYS},
               {"uid": "k2", "answer": "x", "key_steps": KEYS, "aux_line": True}]
    report = score_submission(samples, [_adaptive("k1", [ROTATE_STEP]),           # 1 of 2 key steps
                                        _adaptive("k2", [ROTATE_STEP, READ_STEP])],  # 2 of 2
                              judge=OfflineJudge())
    kcov = report.modes["adaptive"].process.kcov
    # Only k1: 1/2. With k2 counted it would be (0.5 + 1) / 2 = 0.75 over 2 samples.
    assert (kcov.value, kcov.n) == (0.5, 1)
    by = {r.sample_id: r for r in report.records}
    assert by["k2"].kcov == 1.0  # the aux sample's own record keeps its figure


def test_tool_effectiveness_per_sample_is_a_mean_of_per_sample_ratios() -> None:
    """Bug: per-sample tool effectiveness replaced by the pooled ratio."""
    samples = [{"uid": "t1", "answer": "x"}, {"uid": "t2", "answer": "x"}]
    blur = {"thought": "Blur.", "tool": {"name": "blur", "args": {}}}
    report = score_submission(
        samples, [_adaptive("t1", [_zoom([0, 0, 9, 9])]), _adaptive("t2", [blur, blur, blur])],
        judge=OfflineJudge(), tool_validator=lambda name, args: ["ksize is required"] if name == "blur" else [])
    process = report.modes["adaptive"].process
    # t1: 1 valid of 1; t2: 0 valid of 3. Pooled: 1/4 = 25 %; per sample: (1 + 0) / 2 = 50 %.
    assert (process.tool_eff.count, process.tool_eff.n, process.tool_eff.percent) == (1, 4, 25.0)
    assert (process.tool_eff_per_sample.value, process.tool_eff_per_sample.n) == (0.5, 2)


def test_a_zoom_with_iou_exactly_one_half_is_a_grounding_hit() -> None:
    """Bug: the grounding threshold changed from IoU >= 0.5 to > 0.5."""
    samples = [{"uid": "g1", "answer": "x", "regions": [[0, 0, 100, 100]]},
               {"uid": "g2", "answer": "x", "regions": [[0, 0, 100, 100]]}]
    report = score_submission(samples, [_adaptive("g1", [_zoom([0, 0, 100, 50])]),   # IoU 5000/10000
                                        _adaptive("g2", [_zoom([0, 0, 100, 49])])],  # IoU 4900/10000
                              judge=OfflineJudge())
    process = report.modes["adaptive"].process
    assert [r.iou for r in report.records] == [0.5, 0.49]
    assert (process.grounding_hit.count, process.grounding_hit.n) == (1, 2)
    assert process.grounding_iou.value == pytest.approx(0.495)


# ----------------------------------------------------------------------------- toolchains

def test_edit_distance_is_divided_by_the_longer_chain() -> None:
    """Bug: the edit distance normalised by the prediction's, the reference's or the shorter length."""
    assert normalized_edit_distance(["rotate"], ["rotate", "zoom_in"]) == 0.5  # 1 edit / 2
    assert normalized_edit_distance(["rotate", "zoom_in", "blur"], ["rotate"]) == pytest.approx(2 / 3)
    rot = {"tool": "rotate", "args": {"angle": 90}}
    zoom = {"tool": "zoom_in", "args": {"bbox": [0, 0, 9, 9]}}
    samples = [{"uid": "e1", "answer": "x", "toolchain": [rot, zoom]},
               {"uid": "e2", "answer": "x", "toolchain": [rot]}]
    blur = {"thought": "Blur.", "tool": {"name": "blur", "args": {"ksize": 3}}}
    report = score_submission(samples, [_adaptive("e1", [ROTATE_STEP]),
                                        _adaptive("e2", [ROTATE_STEP, _zoom([0, 0, 9, 9]), blur])],
                              judge=OfflineJudge())
    by = {r.sample_id: r for r in report.records}
    assert by["e1"].edit_distance == 0.5 and by["e2"].edit_distance == pytest.approx(2 / 3)
    # Mean (1/2 + 2/3) / 2 = 7/12. By the prediction's length: (1 + 2/3) / 2; by the reference's:
    # (1/2 + 2) / 2; by the shorter: (1 + 2) / 2.
    edit = report.modes["adaptive"].toolchain.edit_distance
    assert (edit.value, edit.n) == (pytest.approx(7 / 12), 2)


# ---------------------------------------------------------------------- cost and routing

def test_strongest_baseline_breaks_a_tie_by_the_first_name() -> None:
    """Bug: the Strongest baseline's tie-break reversed."""
    correct = {"Baker": [False, True, True], "Able": [True, True, False], "Carol": [True, False, False]}
    costs = {"Baker": [1.0, 1.0, 1.0], "Able": [3.0, 3.0, 3.0], "Carol": [0.5, 0.5, 0.5]}
    got = routing_baselines(correct, costs)
    # Able and Baker are both right on 2 of 3: the tie goes to the first name in sorted order.
    assert got["Strongest"] == Point("Strongest (Able)", 2 / 3, 3.0, 3)
    assert got["Cheapest"] == Point("Cheapest (Carol)", 1 / 3, 0.5, 3)
    # Oracle: sample 0 Carol (0.5, right), 1 Baker (1.0, cheaper right than Able), 2 Baker (1.0).
    assert got["Oracle"] == Point("Oracle", 1.0, pytest.approx(2.5 / 3), 3)


def test_pareto_frontier_drops_a_dearer_point_of_equal_accuracy() -> None:
    """Bug: a frontier that keeps a dearer point of equal accuracy."""
    points = [Point("dear", 0.6, 2.0), Point("cheap", 0.6, 1.0), Point("best", 0.8, 5.0),
              Point("worse", 0.5, 3.0)]
    assert [p.name for p in pareto_frontier(points)] == ["cheap", "best"]


# -------------------------------------------------------------------------- the MCC interval

def _mcc_file(n: int) -> tuple[list[dict], list[dict]]:
    """n samples; text right on every third; adaptive calls a tool on every other one."""
    samples = [{"uid": f"m{i}", "answer": "7", "answer_type": "number"} for i in range(n)]
    preds = []
    for i in range(n):
        preds.append({"sample_id": f"m{i}", "mode": "text", "answer": "7" if i % 3 == 0 else "8"})
        preds.append({"sample_id": f"m{i}", "mode": "adaptive", "answer": "7",
                      "steps": [_zoom([0, 0, 9, 9])] if i % 2 == 0 else []})
    return samples, preds


def test_mcc_interval_is_fixed_by_its_seed() -> None:
    """Bugs: the bootstrap unseeded, or the scorer's seed not passed down to the MCC interval."""
    samples, preds = _mcc_file(30)
    first = score_submission(samples, preds, judge=OfflineJudge()).mode_selection
    again = score_submission(samples, preds, judge=OfflineJudge()).mode_selection
    # Hand counts: Required = text wrong (i % 3 != 0), invoked = i % 2 == 0 over i < 30:
    # TP = even and not a multiple of 3 = 10, FN = 10, TN = odd multiples of 3 = 5, FP = 5.
    assert (first.tp, first.fn, first.tn, first.fp) == (10, 10, 5, 5)
    assert first.interval is not None and first.interval == again.interval
    iv = first.interval
    assert (iv.seed, iv.resamples, iv.level) == (20260101, 1000, 0.95)  # the documented fixed seed
    assert iv == bootstrap_mcc(10, 5, 5, 10, seed=20260101)
    other = score_submission(samples, preds, judge=OfflineJudge(), seed=7).mode_selection.interval
    assert other.seed == 7 and other == bootstrap_mcc(10, 5, 5, 10, seed=7)
    assert (other.low, other.high) != (iv.low, iv.high)


# ------------------------------------------------------------------- the pipeline's stage claim

@pytest.mark.django_db
def test_a_stage_delivered_again_after_the_submission_finished_changes_nothing(tmp_path) -> None:
    """Bug: the claim's conditional update without its status condition (a late or repeated
    delivery of a stage re-runs it on a finished submission)."""
    from django.contrib.auth import get_user_model

    from evaluation import pipeline, services
    from evaluation.models import PredictionResult, Submission
    from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

    owner = get_user_model().objects.create_user("claims", "c@example.org", "pw")
    sub = services.submission_create(benchmark=make_benchmark(tmp_path), owner=owner, file=upload(good_file()),
                                     model_name="m1", enforce_limits=False, enqueue=False)
    sub = pipeline.submission_process_sync(submission=sub)
    assert sub.status == "done"
    fields = ("status", "heartbeat_at", "started_at", "finished_at", "scored_at", "results", "progress_done",
              "progress_total", "failure_reason")
    before = Submission.objects.values(*fields).get(pk=sub.pk)
    rows = sorted(PredictionResult.objects.filter(submission=sub).values_list("pk", flat=True))
    assert before["results"]["modes"]["text"]["accuracy"]["overall"]["count"] == 4  # s2, s5 wrong of 6
    pipeline.submission_validate(submission_id=sub.pk)  # "not claimed": the status is done
    pipeline.submission_score(submission_id=sub.pk)
    assert Submission.objects.values(*fields).get(pk=sub.pk) == before
    assert sorted(PredictionResult.objects.filter(submission=sub).values_list("pk", flat=True)) == rows


@pytest.mark.django_db
def test_a_second_claim_of_a_held_stage_is_refused_and_changes_nothing(tmp_path) -> None:
    """Bug: the claim's conditional update taking a stage another live delivery holds."""
    from django.contrib.auth import get_user_model

    from evaluation import pipeline, services
    from evaluation.models import Submission
    from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

    owner = get_user_model().objects.create_user("claims", "c@example.org", "pw")
    sub = services.submission_create(benchmark=make_benchmark(tmp_path), owner=owner, file=upload(good_file()),
                                     model_name="m1", enforce_limits=False, enqueue=False)
    stage = (("queued", "validating"), "validating")
    assert pipeline._claim(sub.pk, *stage, "first-delivery")
    fields = ("status", "claim_token", "heartbeat_at", "attempts", "progress_done", "progress_total", "results")
    held = Submission.objects.values(*fields).get(pk=sub.pk)
    assert (held["status"], held["claim_token"], held["attempts"]) == ("validating", "first-delivery", 1)
    assert not pipeline._claim(sub.pk, *stage, "second-delivery")
    pipeline.submission_validate(submission_id=sub.pk)  # a whole second delivery of the stage: a no-op
    assert Submission.objects.values(*fields).get(pk=sub.pk) == held
