"""Scoring profiles (evaluation/metrics/profiles.py; metrics.md section 13, docs/metrics.md "Scoring profiles").

Every row below was written for one rule or quirk of the authors' released code; the expected
verdict is what their code gives on that row (read from VTC-Bench's ``VTCBenchDataset``, VLMEvalKit's
``can_infer`` and its MMReason evaluation), not what would be fair.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from evaluation.judges.offline import OfflineJudge
from evaluation.metrics import PreparedBenchmark, Sample, compile_gold, rule_match, score_submission

OPTS = {"A": "6%-7%", "B": "8%-9%", "C": "10%", "D": "12%"}
ANIMALS = {"A": "dog", "B": "cat", "C": "horse"}

# (id, category, gold, options, prediction, their verdict, what it shows)
VTC_ROWS: list[tuple[str, str, str, dict | None, str, bool]] = [
    ("v01", "chart", "C", OPTS, "C", True),                    # the letter alone
    ("v02", "chart", "C", OPTS, "c", True),                    # lower case
    ("v03", "chart", "C", OPTS, "C. 10%", True),               # "C. ..." prefix
    ("v04", "chart", "C", OPTS, "C 10%", True),                # letter then a space
    ("v05", "chart", "C", OPTS, "C-10%", True),                # letter then a hyphen
    ("v06", "chart", "C", OPTS, "(C)", False),                 # wrapped: not read
    ("v07", "chart", "C", OPTS, "C) 10%", False),              # letter then ")": not read
    ("v08", "chart", "C", OPTS, "Answer: C", False),           # "Answer:" prefix: not read
    ("v09", "chart", "C", OPTS, "10%", False),                 # the option's text, gold a letter: not read
    ("v10", "color", "A", OPTS, "a dog is shown", True),       # "a ..." reads as option A
    ("v11", "counting", "cat", ANIMALS, "B", True),            # gold is option text, letter chosen
    ("v12", "counting", "cat", ANIMALS, "cat", False),         # text starting a-g is read as a letter (C)
    ("v13", "counting", "horse", ANIMALS, "the horse", True),  # gold option's text inside the prediction
    ("v14", "counting", "horse", ANIMALS, "horse or dog", True),  # naming several options still counts
    ("v15", "ocr", "1800", None, "18007", True),               # substring: 18007 holds 1800
    ("v16", "ocr", "New York", None, "new york", True),        # lower-case equality
    ("v17", "ocr", "New York", None, "new   york", True),      # after collapsing white space
    # long sentence holds a short gold
    ("v18", "ocr", "Paris", None, "It is most likely the city of Paris, I think, after a long look", True),
    ("v19", "ocr", "a b c d e", None, "the answer is a b c d e", False),  # five words: no substring rule
    ("v20", "math", "22747", None, "22,747", False),           # separators are not read
    ("v21", "math", "1/2", None, "0.5", False),                # their math check always returns 0
    ("v22", "math", "26000", None, "26000.0", True),           # plain substring again
    ("v23", "ocr", "an", None, "", True),                      # an empty answer reads as "nan", which holds "an"
    ("v24", "ocr", "d", None, "D. it is D", True),             # gold a-d without options: read as a letter
    ("v25", "ocr", "北京", None, "答案是北京", True),               # Chinese: substring of a one-word gold
    ("v26", "spatial", "B", ANIMALS, "Answer is B", False),    # "A..." prefix: first character is 'a', not B
]


def _vtc_samples(rows: Sequence[tuple]) -> list[Sample]:
    return [Sample(uid=r[0], domain="All", category=r[1], answer=r[2],
                   answer_type="choice" if r[3] else "text", options=r[3]) for r in rows]


@pytest.mark.parametrize("row", VTC_ROWS, ids=[r[0] for r in VTC_ROWS])
def test_vtcbench_rule_gives_their_verdict_row_by_row(row: tuple) -> None:
    sample = _vtc_samples([row])[0]
    assert rule_match(compile_gold(sample, "vtcbench"), row[4]) is row[5]


def test_vtcbench_profile_accuracy_overall_and_per_category_is_their_rule_pass() -> None:
    rows = VTC_ROWS + [("v27", "ocr", "seven", None, "", False)]  # a row with no line: wrong
    samples = _vtc_samples(rows)
    preds = [{"sample_id": r[0], "mode": "text", "answer": r[4]} for r in VTC_ROWS]
    report = score_submission(samples, preds, judge=OfflineJudge(), scoring="vtcbench", resamples=10)
    acc = report.modes["text"].accuracy
    expected = [r[5] for r in rows]
    assert (acc.overall.count, acc.overall.n) == (sum(expected), len(rows))
    for cat in {r[1] for r in rows}:
        want = [r[5] for r in rows if r[1] == cat]
        got = acc.by_category[f"All/{cat}"] if f"All/{cat}" in acc.by_category else acc.by_category[cat]
        assert (got.count, got.n) == (sum(want), len(want)), cat
    assert report.scoring == "vtcbench"
    # The offline judge is not asked (their "exact matching" mode): every verdict is the rule's.
    assert {rec.decided_by for rec in report.records} == {"rule"}
    by_id = {rec.sample_id: rec.correct for rec in report.records}
    assert by_id == {r[0]: r[5] for r in VTC_ROWS}


class _YesJudge(OfflineJudge):
    """A judge that says yes to every answer question, to see which rows reach it."""

    name = "yes"

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def answer_equivalence(self, questions: Sequence) -> list[bool]:
        self.asked += [q.extracted for q in questions]
        return [True] * len(questions)


def test_vtcbench_asks_a_configured_judge_about_every_row_its_rules_call_wrong() -> None:
    samples = _vtc_samples(VTC_ROWS)
    preds = [{"sample_id": r[0], "mode": "text", "answer": r[4]} for r in VTC_ROWS]
    judge = _YesJudge()
    report = score_submission(samples, preds, judge=judge, scoring="vtcbench", resamples=10)
    wrong = [r for r in VTC_ROWS if not r[5]]
    # Choice rows too: their judge reads a letter out of any answer the rules did not accept.
    assert len(judge.asked) == len(wrong)
    assert report.modes["text"].accuracy.overall.count == len(VTC_ROWS)
    judged = {rec.sample_id for rec in report.records if rec.decided_by == "judge:yes"}
    assert judged == {r[0] for r in wrong}


def test_generic_profile_is_unchanged_on_the_same_rows() -> None:
    gold = compile_gold(_vtc_samples([VTC_ROWS[5]])[0])  # "(C)" against C: section 1 accepts it
    assert rule_match(gold, "(C)")
    gold = compile_gold(_vtc_samples([VTC_ROWS[14]])[0])  # 18007 against 1800: section 1 does not
    assert not rule_match(gold, "18007")


# ---- VLMEvalKit --------------------------------------------------------------------------------

# (gold, options, prediction, verdict: 1 right, 0 undecided (judge), 2 wrong and final)
VLM_ROWS: list[tuple[str, str, dict | None, str, int]] = [
    ("m01", "B", ANIMALS, "B", 1),                         # the letter alone
    ("m02", "B", ANIMALS, "(B)", 1),                       # brackets are separators
    ("m03", "B", ANIMALS, "The answer is B.", 1),          # a lone letter among the last four words
    ("m04", "B", ANIMALS, "b", 0),                         # lower case is no option letter, and no option's text: undecided
    ("m05", "B", ANIMALS, "B is right because the picture clearly shows a small animal", 0),  # letter too early: undecided
    ("m06", "B", ANIMALS, "cat", 1),                       # one option's text inside the answer
    ("m07", "B", ANIMALS, "A", 2),                         # another letter: wrong, final (no judge)
    ("m08", "B", ANIMALS, "A or B", 0),                    # two letters: undecided
    ("m09", "B", ANIMALS, "Cannot determine the answer", 2),  # a refusal reads as Z: wrong, final
    ("m10", "B", ANIMALS, "the correct answer is **B** here, as the image shows, with a cat", 1),  # "answer is **B**"
    ("m11", "B", ANIMALS, "Z", 2),                         # a lone Z: none of the options
    ("m12", "B", ANIMALS, "a cat and a dog", 0),           # two option texts: undecided
    ("m13", "1800", None, "1800", 1),                      # not a choice: exact match
    ("m14", "1800", None, "18007", 0),                     # no substring rule
    ("m15", "Paris", None, "paris", 1),                    # free text: its nearest rule ignores case
    ("m16", "Paris", None, " Paris \n", 1),                # ... and surrounding white space
    ("m17", "Paris", None, "It is Paris", 0),              # ... and nothing else: left to the judge
    ("m18", "B", ANIMALS, "<answer>B</answer>", 0),        # tags are not separators: no letter, undecided
    ("m19", "B", ANIMALS, "<answer> B </answer>", 1),      # ... unless spaces set the letter apart
    ("m20", "Paris", None, "<answer>Paris</answer>", 0),   # free text: the tags are part of the text
]


@pytest.mark.parametrize("row", VLM_ROWS, ids=[r[0] for r in VLM_ROWS])
def test_vlmevalkit_rule_row_by_row(row: tuple) -> None:
    from evaluation.metrics.answers import rule_is_final

    uid, gold_text, options, pred, verdict = row
    gold = compile_gold(Sample(uid=uid, answer=gold_text, answer_type="choice" if options else "text",
                               options=options), "vlmevalkit")
    got = 1 if rule_match(gold, pred) else 2 if rule_is_final(gold, pred) else 0
    assert got == verdict


# ---- Which text the authors' code reads ------------------------------------------------------------

TEMPLATE = "<answer>Your final answer to the user's question goes here.</answer>"
# (id, gold, answer field (VTC-Bench's agent_answer), response field (full_response), VTC-Bench's verdict)
VTC_CUT_ROWS: list[tuple[str, str, str, str, bool]] = [
    ("c01", "B", "", "<answer></answer> I looked again. <answer>B</answer>", False),  # first tag: empty
    ("c02", "B", "", f"Reply in the form {TEMPLATE}. <answer>B</answer>", False),   # their template echoed first
    ("c03", "B", "", "<answer>B</answer> wait, no: <answer>A</answer>", True),       # revised away: first counts
    ("c04", "B", "", "<answer>A</answer> wait, no: <answer>B</answer>", False),      # revised to B: first counts
    ("c05", "B", "A", "<answer>A</answer> ... <answer>B</answer>", False),           # agent_answer as given
    ("c06", "B", "B", "<answer>A</answer> ... <answer>B</answer>", True),            # ... whatever the reply says
    ("c07", "B", "", "</answer> stray, then <answer>B</answer>", False),             # a close before the open: nothing
    ("c08", "B", "", "<ANSWER>B</ANSWER>", False),                                   # their cut is case-sensitive
    ("c09", "B", "", "<|answer|>B<|answer|>", True),                                 # InternVL's marks
    ("c10", "B", "<answer>B</answer> and <answer>A</answer>", "", True),             # a reply in the answer field: cut
]


@pytest.mark.parametrize("row", VTC_CUT_ROWS, ids=[r[0] for r in VTC_CUT_ROWS])
def test_vtcbench_scores_the_answer_their_harness_cut_from_the_first_tag(row: tuple) -> None:
    uid, gold, answer, response, verdict = row
    samples = [Sample(uid=uid, category="chart", answer=gold, answer_type="choice", options=ANIMALS)]
    pred = {"sample_id": uid, "mode": "adaptive", "answer": answer, "response": response}
    report = score_submission(samples, [pred], judge=OfflineJudge(), scoring="vtcbench", resamples=10)
    assert report.records[0].correct is verdict


def test_vlmevalkit_matches_the_whole_prediction_tags_and_all() -> None:
    rows = [("t01", "B", "<answer>B</answer>", False), ("t02", "B", "The answer is B.", True),
            ("t03", "B", "", True)]  # an empty answer field: the reply is VLMEvalKit's prediction
    samples = [Sample(uid=u, answer=g, answer_type="choice", options=ANIMALS) for u, g, _, _ in rows]
    preds = [{"sample_id": u, "mode": "text", "answer": a, "response": "Final: B"} for u, _, a, _ in rows]
    report = score_submission(samples, preds, judge=OfflineJudge(), scoring="vlmevalkit", resamples=10)
    assert {r.sample_id: r.correct for r in report.records} == {u: v for u, _, _, v in rows}
    assert report.records[0].extracted == "<answer>B</answer>"


# ---- The authors' spreadsheet step (docs/metrics.md, "The authors' spreadsheet step") ---------------------

LONG = "x" * 32_767  # Excel's cell limit: their spreadsheet cuts a prediction here

# (id, profile, gold, options, answer, verdict here, their code's verdict: equal where we reproduce)
SHEET_ROWS: list[tuple[str, str, str, dict | None, str, int, int]] = [
    # reproduced: pandas reads these cells back as empty, and str(NaN) is "nan", which holds the gold "an"
    ("s01", "vtcbench", "an", None, "N/A", 1, 1),
    ("s02", "vtcbench", "an", None, "None", 1, 1),
    ("s03", "vtcbench", "an", None, "NA", 1, 1),
    ("s04", "vtcbench", "an", None, "n/a ", 0, 0),       # not an NA spelling as written (the trailing space)
    ("s05", "vlmevalkit", "B", ANIMALS, "None", 0, 0),  # VLMEvalKit reads "nan": no option named, undecided
    # departures: the cut at 32,767 characters and a leading "=" read back as 0 are file-format accidents
    ("s07", "vtcbench", "Paris", None, LONG + " Paris", 1, 0),
    ("s08", "vtcbench", "12", None, "=12", 1, 0),
    ("s09", "vtcbench", "0", None, "=12", 0, 1),
]


@pytest.mark.parametrize("row", SHEET_ROWS, ids=[r[0] for r in SHEET_ROWS])
def test_the_authors_spreadsheet_step_reproduced_or_departed_from_as_documented(row: tuple) -> None:
    uid, profile, gold, options, answer, ours, _theirs = row
    samples = [Sample(uid=uid, answer=gold, answer_type="choice" if options else "text", options=options)]
    report = score_submission(samples, [{"sample_id": uid, "mode": "text", "answer": answer}],
                              judge=OfflineJudge(), scoring=profile, resamples=10)
    assert report.records[0].correct is bool(ours)


# ---- MMReason ----------------------------------------------------------------------------------

MMR_ROWS = [
    ("r01", "-2", "-2", True),                  # equal
    ("r02", "-2", " -2 ", True),                # equal once stripped
    ("r03", "-2", "x = -2", False),             # no extraction by rule: the offline judge adds nothing
    ("r04", "3/2", "1.5", False),               # equivalent, but only a remote judge may say so
    ("r05", "B", "<answer>B</answer>", True),   # the final answer is taken from its tags first
]


def test_mmreason_with_the_offline_judge_decides_only_what_exact_match_decides() -> None:
    samples = [Sample(uid=u, domain="Math", category="Math", answer=g) for u, g, _, _ in MMR_ROWS]
    preds = [{"sample_id": u, "mode": "text", "answer": p} for u, _, p, _ in MMR_ROWS]
    report = score_submission(samples, preds, judge=OfflineJudge(), scoring="mmreason", resamples=10)
    assert {r.sample_id: r.correct for r in report.records} == {u: v for u, _, _, v in MMR_ROWS}
    # What their exact match does not accept only their judge may decide: undecided, not wrong.
    assert {r.sample_id: r.decided_by for r in report.records} == {
        u: "rule" if v else "undecided" for u, _, _, v in MMR_ROWS}
    overall = report.modes["text"].accuracy.overall
    assert overall.value is None and overall.percent is None and overall.interval is None
    assert overall.reason == "2 of 5 rows need an LLM judge; 3 right of the 3 decided (100.0%)"
    assert (overall.count, overall.n, overall.undecided, overall.decided_value) == (3, 5, 2, 1.0)
    judge = _YesJudge()
    report = score_submission(samples, preds, judge=judge, scoring="mmreason", resamples=10)
    assert sorted(judge.asked) == sorted(p for _, _, p, v in MMR_ROWS if not v)
    overall = report.modes["text"].accuracy.overall
    assert overall.reason is None and overall.value == 1.0  # a judge decided every row


def test_mode_selection_leaves_out_samples_whose_text_answer_is_undecided() -> None:
    samples = [Sample(uid=f"q{i}", domain="Math", category="Math", answer="7") for i in range(4)]
    text = ["7", "7", "It is 8", "It is 8"]  # right, right, undecided, undecided (not wrong)
    preds = [{"sample_id": f"q{i}", "mode": "text", "answer": a} for i, a in enumerate(text)]
    preds += [{"sample_id": f"q{i}", "mode": "adaptive", "answer": "7"} for i in range(4)]
    report = score_submission(samples, preds, judge=OfflineJudge(), scoring="mmreason", resamples=10)
    confusion = report.mode_selection
    assert confusion is not None and confusion.tp + confusion.fp + confusion.tn + confusion.fn == 2


def test_a_vlmevalkit_mmreason_reply_without_its_extraction_is_undecided_never_zero() -> None:
    samples = [Sample(uid=f"q{i}", domain="Math", category="Math", answer="7") for i in range(4)]
    replies = [{"sample_id": f"q{i}", "mode": "text", "answer": "Adding the two sides... The answer is 7."}
               for i in range(4)]
    overall = score_submission(samples, replies, judge=OfflineJudge(), scoring="mmreason",
                               resamples=10).modes["text"].accuracy.overall
    assert overall.value is None and overall.reason == "4 of 4 rows need an LLM judge; none decided"
    # Their extraction file: the extracted answer in the answer field, the reply as the response.
    extracted = ["7", " 7 ", "7.0", "seven"]
    preds = [dict(r, answer=e, response=r["answer"]) for r, e in zip(replies, extracted)]
    report = score_submission(samples, preds, judge=OfflineJudge(), scoring="mmreason", resamples=10)
    assert [r.correct for r in report.records] == [True, True, False, False]
    assert [r.decided_by for r in report.records] == ["rule", "rule", "undecided", "undecided"]


def test_vtcbench_and_vlmevalkit_leave_their_judges_rows_undecided_only_in_the_full_pipeline() -> None:
    samples = [Sample(uid="a", answer="B", answer_type="choice", options=ANIMALS),
               Sample(uid="b", answer="B", answer_type="choice", options=ANIMALS)]
    preds = [{"sample_id": "a", "mode": "text", "answer": "B"},
             {"sample_id": "b", "mode": "text", "answer": "A or B"}]
    for profile in ("vtcbench", "vlmevalkit"):
        exact = score_submission(samples, preds, judge=OfflineJudge(), scoring=profile, resamples=10)
        assert exact.modes["text"].accuracy.overall.value == 0.5, profile  # their exact matching: wrong
        full = score_submission(samples, preds, judge=OfflineJudge(), scoring=profile, resamples=10,
                                full_pipeline=True)
        assert full.records[1].decided_by == "undecided" and not full.records[1].correct
        assert full.modes["text"].accuracy.overall.reason == (
            "1 of 2 rows need an LLM judge; 1 right of the 1 decided (100.0%)"), profile


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scoring profile"):
        PreparedBenchmark([{"uid": "a", "answer": "x"}], scoring="paper")
