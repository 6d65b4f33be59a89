"""Agreement on hand-made cases (plain Python: no database)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from annotation.agreement import (
    AnnotationView,
    agreement,
    answers_agree,
    box_agreement,
    hungarian,
    iou,
    steps_similarity,
)


def test_iou_of_hand_computed_boxes() -> None:
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0  # touching edges share no area


def test_hungarian_beats_greedy_matching() -> None:
    # Greedy takes the 0.9 pair first and is left with 0.1: total 1.0. The optimum is 0.8 + 0.8.
    cost = [[-0.9, -0.8], [-0.8, -0.1]]
    assert hungarian(cost) == [(0, 1), (1, 0)]


def test_hungarian_matches_brute_force_on_rectangular_matrices() -> None:
    import random

    rng = random.Random(7)
    for rows, cols in [(3, 5), (5, 3), (4, 4), (1, 3)]:
        cost = [[rng.random() for _ in range(cols)] for _ in range(rows)]
        pairs = hungarian(cost)
        assert len(pairs) == min(rows, cols)
        best = min(
            sum(cost[r][c] for r, c in zip(range(rows), perm)) if rows <= cols
            else sum(cost[r][c] for r, c in zip(perm, range(cols)))
            for perm in itertools.permutations(range(max(rows, cols)), min(rows, cols))
        )
        assert sum(cost[r][c] for r, c in pairs) == pytest.approx(best)


def test_box_agreement_matches_one_to_one_whatever_the_order() -> None:
    a = [[0, 0, 10, 10], [100, 100, 120, 120]]
    b = [[101, 101, 121, 121], [0, 0, 10, 10]]  # same boxes, other order, one shifted by a pixel
    result = box_agreement(a, b)
    assert {(i, j) for i, j, _ in result.matches} == {(0, 1), (1, 0)}
    assert result.f1 == 1.0
    assert result.mean_iou == pytest.approx((1 + iou(a[1], b[0])) / 2)


def test_an_extra_box_lowers_f1_and_mean_iou() -> None:
    result = box_agreement([[0, 0, 10, 10]], [[0, 0, 10, 10], [50, 50, 60, 60]])
    assert (result.precision, result.recall) == (0.5, 1.0)
    assert result.f1 == pytest.approx(2 / 3)
    assert result.mean_iou == 0.5


def test_boxes_overlapping_below_half_do_not_count_as_hits() -> None:
    result = box_agreement([[0, 0, 10, 10]], [[5, 0, 15, 10]])  # IoU 1/3
    assert result.f1 == 0.0
    assert result.mean_iou == pytest.approx(1 / 3)


def test_no_boxes_on_both_sides_is_full_agreement() -> None:
    assert box_agreement([], []).f1 == 1.0
    assert box_agreement([], [[0, 0, 1, 1]]).f1 == 0.0


def test_answers_agree_up_to_case_spacing_and_number_format() -> None:
    assert answers_agree(" Blue ", "blue")
    assert answers_agree("1,000", "1000.0")
    assert not answers_agree("12", "13")


def test_key_step_alignment_survives_one_inserted_step() -> None:
    a = ["Rotate the image upright.", "Find the last row of the table.", "Read the total: 831K."]
    b = ["Rotate the image upright.", "Zoom into the table.", "Find the last row of the table.", "Read the total: 831K."]
    aligned = steps_similarity(a, b)
    assert aligned == pytest.approx(6 / 7)
    # Position by position, the inserted step would put every later step out of line.
    from annotation.agreement import step_similarity

    positional = sum(step_similarity(x, y) for x, y in zip(a, b)) / max(len(a), len(b))
    assert positional < 0.6 < aligned
    assert steps_similarity(a, a) == 1.0
    assert steps_similarity(a, ["Something else entirely."]) < 0.2


def test_agreement_over_three_annotators() -> None:
    views = [
        AnnotationView([[0, 0, 10, 10]], "3", ["Count the squares."]),
        AnnotationView([[0, 0, 10, 10]], "3", ["Count the squares."]),
        AnnotationView([[50, 50, 60, 60]], "4", ["Count the squares."]),
    ]
    result = agreement(views)
    assert result.annotators == 3 and len(result.pairs) == 3
    assert result.box_f1 == pytest.approx(1 / 3)
    assert result.answer_agreement == pytest.approx(1 / 3)
    assert result.majority_answer == "3"
    assert result.steps_similarity == 1.0


def test_agreement_needs_two_annotations() -> None:
    assert agreement([AnnotationView([], "3", [])]).box_f1 is None


def test_agreement_imports_nothing_of_django() -> None:
    code = "import sys, annotation.agreement; print(any(m.startswith('django') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
