"""The authors' rules of evaluation/metrics/author_figures.py, one row per quirk kept on purpose
(docs/metrics.md, "HR-Bench, TreeBench and TIR-Bench"), and the profiles' verdicts built on them."""

from __future__ import annotations

import pytest

from evaluation.metrics.author_figures import (
    NOT_EXTRACTED,
    hrbench_cycles,
    tirbench_credit,
    treebench_boxes,
    treebench_iou,
    treebench_letter,
    treebench_rating,
)
from evaluation.metrics.profiles import OPEN, RIGHT, WRONG, author_answer, author_verdict, compile_author_gold
from evaluation.metrics.types import Sample

# (prediction, letter TreeBench reads)
TREE_LETTERS = [
    ("<answer>b</answer>", "B"),  # t01 the tag's content is upper-cased
    ("b", "B"),  # t02 no tag: no capital, but "b" is inside "(b)"
    ("", "A"),  # t03 the empty text is inside "(a)"
    ("Because it is red", "B"),  # t04 the first capital A-E anywhere
    ("The answer is C", "C"),  # t05 the answer prefixes are deleted first
    ("it is the red one on the left of the picture near the small tree", ""),  # t06 over ten words, no A-E
    ("none", ""),  # t07 a short text in no "(x)"
    ("<answer>see above</answer> A", "E"),  # t08 the tag wins, upper-cased: "SEE ABOVE" has E first
]


@pytest.mark.parametrize(("prediction", "letter"), TREE_LETTERS)
def test_treebench_letter(prediction: str, letter: str) -> None:
    assert treebench_letter(prediction) == letter


def test_treebench_boxes_need_integers_without_spaces_and_come_from_the_think_part() -> None:
    text = ("<think><box>[1,2,30,40]</box> <box>[1, 2, 30, 40]</box> <box>[1.5,2,30,40]</box> <box>[9,9,3,3]</box>"
            "</think> after: <box>[0,0,5,5]</box>")
    assert treebench_boxes(text) == [(1, 2, 30, 40)]
    assert treebench_boxes("<box>[0,0,5,5] the cat</box>") == [(0, 0, 5, 5)]  # re.match: text after the box is fine


def test_treebench_iou_is_the_mean_over_targets_of_the_best_box() -> None:
    targets = [[0, 0, 10, 10], [20, 20, 30, 30]]
    assert treebench_iou("<box>[0,0,10,10]</box><box>[0,0,5,10]</box>", targets) == 0.5
    assert treebench_iou("no boxes", targets) == 0.0
    assert treebench_iou("<box>[0,0,1,1]</box>", []) == 1.0  # boxes, no targets: their len(all_boxes) > 0
    rating = treebench_rating([("perception", "ocr", 1.0, 0.5), ("perception", "ocr", 0.0, 0.0),
                               ("reasoning", "ordering", 1.0, 1.0)])
    assert rating == {"perception": {"ocr": 0.5}, "reasoning": {"ordering": 1.0}, "Overall": 2 / 3, "mIoU": 0.5}


def test_hrbench_averages_cycles_not_rows() -> None:
    rows = [("single", "c1", 1), ("single", "c1", 1), ("single", "c1", 1), ("cross", "c1", 0),
            ("cross", "c2", 0)]
    figures = hrbench_cycles(rows)
    assert figures["cycles"] == {"c1": {"all": 0.75, "cross": 0.0, "single": 1.0}, "c2": {"all": 0.0, "cross": 0.0}}
    # 3 of 5 rows are right, but the cycles weigh the same: (0.75 + 0) / 2; single, only in c1, is halved.
    assert figures["average"] == {"all": 0.375, "cross": 0.0, "single": 0.5}


PROMPT = "Which value is closest?\nA. 10%\nB. 20%\nC: 30%"
# (task, gold, extracted answer, credit)
TIR_ROWS = [
    ("math", "B", "B", 1.0),  # r01 a letter
    ("math", "B", "20%", 1.0),  # r02 "B. 20%" is in the prompt: B
    ("math", "C", "30%", 0.0),  # r03 "C: 30%" is none of their spellings: the nearest letter, A
    ("math", "AC", "CA", 1.0),  # r04 several letters: sorted
    ("math", "b", "b", 0.0),  # r05 a lower-case gold is not in their letter list
    ("symbolic", "7", "7 edges", 1.0),  # r06 letters and spaces are deleted before int()
    ("symbolic", "7", "7.0", 1.0),  # r07 math_verify's fallback: 7.0 is 7
    ("symbolic", "7", "7/1", 1.0),  # r08 ... and a fraction
    ("symbolic", "7", "8", 0.0),  # r09
    ("symbolic", "7", "\\sqrt{49}", None),  # r10 only math_verify's symbolic parser reads it: undecided
    ("instrument", "2.5", "2.50 V", 1.0),  # r11 a float gold
    ("jigsaw", "[2, 1, 4, 3]", "2, 1, 3, 4", 0.5),  # r12 places right out of n*n
    ("jigsaw", "[2, 1, 4, 3]", "2, 1", 0.0),  # r13 no run of n*n numbers
    ("spot_difference", "1, 4, 6", "4, 6, 9", 0.5),  # r14 the sets' IoU
    ("spot_difference", "3", "3", 1.0),  # r15 an int gold is judge_int
    ("word_search", "2, 05", "row 2, column 5", 0.0),  # r16 "row 2, column 5" has no "d, d" pair
    ("word_search", "2, 05", "2,5", 1.0),  # r17 compared as ints
    ("ocr", "mobi", "it says mobile", 1.0),  # r18 a substring of the reply
    ("ocr", "Mobi", "it says mobile", 0.0),  # r19 case-sensitive
    ("maze", "3", NOT_EXTRACTED + "I went left", None),  # r20 no LLM extraction: undecided
    ("maze", "x-1", "x-1", 0.0),  # r21 a gold neither letters nor a number: their "answer is wrong", 0
]


@pytest.mark.parametrize(("task", "gold", "extracted", "credit"), TIR_ROWS)
def test_tirbench_credit(task: str, gold: str, extracted: str, credit: float | None) -> None:
    assert tirbench_credit(task, gold, extracted, PROMPT) == credit


def test_the_profiles_verdicts_and_the_text_they_read() -> None:
    tree = compile_author_gold(Sample(uid="t", answer="B", options={"A": "x", "B": "y"}), "treebench")
    assert tree is not None and author_verdict(tree, "<answer>b</answer>") == RIGHT
    assert author_verdict(tree, "Dunno") == WRONG  # a letter other than the gold's: final, as in their code
    assert author_answer("treebench", "", "") == "nan"  # the spreadsheet step: an empty prediction reads "nan"
    tir = compile_author_gold(Sample(uid="j", answer="[2, 1, 4, 3]", category="jigsaw"), "tirbench")
    assert tir is not None and author_verdict(tir, "2, 1, 3, 4") == WRONG  # partial credit is not right
    assert author_verdict(tir, "2 1 4 3") == RIGHT
    assert author_verdict(tir, author_answer("tirbench", "", "my reply", "jigsaw") or "") == OPEN
    assert author_answer("tirbench", "garden", "the sign says garden", "ocr") == "the sign says garden"
    hr = compile_author_gold(Sample(uid="h", answer="A", options={"A": "stop", "B": "go"}), "hrbench")
    assert hr is not None and author_verdict(hr, "B") == WRONG and author_verdict(hr, "(A)") == RIGHT
