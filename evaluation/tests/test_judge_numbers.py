"""A judge never turns a wrong number or choice into a right one (metrics.md section 1.3).

Before the fix ``normalize_text`` dropped ``-`` and ``.``, so ``-3.5``, ``3.5`` and ``35`` were
one word, and the offline judge, asked about every rule-wrong answer, accepted ``3.5`` for a
gold ``-3.5`` and ``125`` for ``12.5``: the tolerance was bypassed by default.
"""

from __future__ import annotations

import json

import pytest

from evaluation.judges import OfflineJudge
from evaluation.judges.openai_judge import OpenAIJudge
from evaluation.metrics import Sample, normalize_text, score_submission
from evaluation.metrics.questions import AnswerQuestion
from evaluation.tests.test_judges_openai import server  # noqa: F401 (the fake server fixture)

NUMBER = Sample(uid="n", answer="-3.5", answer_type="number")
HALF = Sample(uid="h", answer="12.5", answer_type="number")
CHOICE = Sample(uid="c", answer="B", answer_type="choice", options={"A": "1.5", "B": "15"})
TEXT = Sample(uid="t", answer="New York", answer_type="text")


@pytest.mark.parametrize("a,b", [("-3.5", "3.5"), ("3.5", "35"), ("-3.5", "35"), ("12.5", "125"),
                                 ("1.5 m", "15 m"), ("\u22123.5", "3.5")])
def test_normalize_text_keeps_a_numbers_sign_and_decimal_point(a: str, b: str) -> None:
    assert normalize_text(a) != normalize_text(b)


@pytest.mark.parametrize("a,b", [("-3.5", "\u22123.5"), ("26,000", "26000"), ("It is 3.5.", "it is 3.5"),
                                 ("covid-19", "covid19"), ("The U.S.", "us"), ("12.5%", "12.5")])
def test_normalize_text_still_drops_punctuation_around_numbers(a: str, b: str) -> None:
    assert normalize_text(a) == normalize_text(b)


@pytest.mark.parametrize("sample,pred", [(NUMBER, "3.5"), (NUMBER, "35"), (HALF, "125"),
                                         (NUMBER, "minus three and a half"), (CHOICE, "1.5"),
                                         (CHOICE, "A"), (CHOICE, "b!")])
def test_offline_judge_never_accepts_what_the_number_or_choice_rule_refused(sample: Sample,
                                                                            pred: str) -> None:
    assert OfflineJudge().answer_equivalence([AnswerQuestion(sample, pred)]) == [False]


def test_offline_judge_compares_numbers_inside_text_answers_as_numbers() -> None:
    gold = Sample(uid="t2", answer="-3.5 metres north", answer_type="text")
    got = OfflineJudge().answer_equivalence([AnswerQuestion(gold, "north metres -3.5"),
                                             AnswerQuestion(gold, "north metres 3.5"),
                                             AnswerQuestion(TEXT, "york new")])
    assert got == [True, False, True]


# A hand-computed benchmark: five samples, a text and an adaptive prediction each.
SAMPLES = [
    {"uid": "s1", "domain": "d", "answer": "-3.5", "answer_type": "number"},
    {"uid": "s2", "domain": "d", "answer": "12.5", "answer_type": "number"},
    {"uid": "s3", "domain": "d", "answer": "7", "answer_type": "number"},
    {"uid": "s4", "domain": "d", "answer": "B", "answer_type": "choice",
     "options": {"A": "1.5", "B": "15"}},
    {"uid": "s5", "domain": "d", "answer": "New York", "answer_type": "text"},
]
ZOOM = [{"thought": "Zoom in.", "tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 9, 9]}}}]
PREDICTIONS = [
    {"sample_id": "s1", "mode": "text", "answer": "3.5"},       # wrong sign
    {"sample_id": "s2", "mode": "text", "answer": "125"},       # decimal point lost
    {"sample_id": "s3", "mode": "text", "answer": "7"},         # right
    {"sample_id": "s4", "mode": "text", "answer": "1.5"},       # option A's text, not B's "15"
    {"sample_id": "s5", "mode": "text", "answer": "York, New"},  # right in another order
    {"sample_id": "s1", "mode": "adaptive", "answer": "-3.5", "steps": ZOOM},
    {"sample_id": "s2", "mode": "adaptive", "answer": "12.5"},
    {"sample_id": "s3", "mode": "adaptive", "answer": "7"},
    {"sample_id": "s4", "mode": "adaptive", "answer": "B", "steps": ZOOM},
    {"sample_id": "s5", "mode": "adaptive", "answer": "New York"},
]


def test_hand_computed_benchmark_text_accuracy_and_mcc() -> None:
    report = score_submission(SAMPLES, PREDICTIONS, judge=OfflineJudge())
    text = report.modes["text"].accuracy.overall
    # Right in text mode: s3 (rule) and s5 (the judge: same words in another order). With the
    # bug it was 5 of 5 (s1, s2 by the judge, s4 by the option-text rule) and MCC 0.
    assert (text.count, text.n, text.percent) == (2, 5, 40.0)
    assert report.modes["adaptive"].accuracy.overall.count == 5
    ms = report.mode_selection
    # Tool-Required = text wrong: s1, s2, s4. Invoked: s1, s4. TP 2 (s1, s4), FN 1 (s2),
    # TN 2 (s3, s5), FP 0; MCC = (2*2 - 0*1) / sqrt(2*3*2*3) = 4/6.
    assert (ms.tp, ms.fp, ms.tn, ms.fn) == (2, 0, 2, 1)
    assert ms.mcc == pytest.approx(2 / 3)
    by = {(r.sample_id, r.mode): r for r in report.records}
    assert by["s1", "text"].decided_by == "rule" and by["s2", "text"].decided_by == "rule"
    assert by["s5", "text"].decided_by == "judge:offline" and by["s5", "text"].correct


class YesJudge(OfflineJudge):
    """Says "equivalent" to everything it is asked, and remembers what it was asked."""

    name = "yes"

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, str]] = []

    def answer_equivalence(self, questions):  # type: ignore[no-untyped-def]
        self.asked += [(q.sample.uid, q.extracted) for q in questions]
        return [True] * len(questions)


def test_any_judge_is_asked_only_where_the_rules_could_not_read_the_answer() -> None:
    judge = YesJudge()
    preds = PREDICTIONS + [{"sample_id": "s1", "mode": "oracle", "answer": "minus three and a half"},
                           {"sample_id": "s4", "mode": "oracle", "answer": "A"}]
    report = score_submission(SAMPLES, preds, judge=judge)
    # A parsed number and an option letter are final; "1.5" names no letter of s4, "minus
    # three and a half" holds no number, and s5 is a text answer: those the judge decides.
    assert judge.asked == [("s4", "1.5"), ("s5", "York, New"), ("s1", "minus three and a half")]
    by = {(r.sample_id, r.mode): r for r in report.records}
    assert (by["s1", "text"].correct, by["s1", "text"].decided_by) == (False, "rule")
    assert (by["s2", "text"].correct, by["s2", "text"].decided_by) == (False, "rule")
    assert (by["s4", "oracle"].correct, by["s4", "oracle"].decided_by) == (False, "rule")
    assert (by["s1", "oracle"].correct, by["s1", "oracle"].decided_by) == (True, "judge:yes")
    assert report.modes["text"].accuracy.overall.count == 3  # s3, and s4, s5 by the judge


def test_the_openai_judge_is_not_asked_about_a_number_the_rule_refused(server) -> None:  # noqa: F811
    server.script = [("content", '{"equivalent": true}')] * 10
    judge = OpenAIJudge(model="m", base_url=server.url, api_key="k", timeout=5.0, max_retries=1, batch_size=1,
                        sleep=lambda s: None)
    preds = [p for p in PREDICTIONS if p["mode"] == "text"]
    report = score_submission(SAMPLES, preds, judge=judge)
    asked = sorted(json.loads(b["messages"][1]["content"])["prediction"] for b in server.requests)
    assert asked == ["1.5", "York, New"]
    by = {r.sample_id: r for r in report.records}
    assert (by["s1"].correct, by["s1"].decided_by) == (False, "rule")
    assert (by["s2"].correct, by["s2"].decided_by) == (False, "rule")
