import pytest

from evaluation.metrics import Sample, compile_gold, extract_answer, parse_number, rule_match


def _choice(gold: str = "B") -> Sample:
    return Sample(uid="c", answer=gold, answer_type="choice",
                  options={"A": "a red cat", "B": "The blue dog", "C": "green"})


def test_extract_takes_last_answer_tag_then_response_then_whole_field() -> None:
    assert extract_answer("<answer>A</answer> then <answer> B </answer>") == "B"
    assert extract_answer("no tags", "thinking <ANSWER>7</ANSWER>") == "7"
    assert extract_answer("  plain  ", "") == "plain"


@pytest.mark.parametrize("pred", ["B", "b", "B.", "B)", "(B)", "B: the dog", "B - dog",
                                  "Answer: B", "answer B", "blue dog", "THE BLUE DOG!"])
def test_choice_accepts_the_gold_letter_forms_and_option_text(pred: str) -> None:
    assert rule_match(compile_gold(_choice()), pred)


@pytest.mark.parametrize("pred", ["A", "(C)", "Bx", "red cat", "", "Blue"])
def test_choice_rejects_other_letters_and_texts(pred: str) -> None:
    assert not rule_match(compile_gold(_choice()), pred)


@pytest.mark.parametrize("text,value", [("26,000", 26000.0), ("-3.5 m", -3.5), ("1e3", 1000.0),
                                        ("about 45%", 45.0), ("x", None)])
def test_parse_number_forms(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_number_uses_absolute_tolerance_or_a_tight_default() -> None:
    tol = compile_gold(Sample(uid="n", answer="10", answer_type="number", tolerance=0.5))
    assert rule_match(tol, "10.5 cm") and not rule_match(tol, "10.6")
    exact = compile_gold(Sample(uid="n", answer="26000", answer_type="number"))
    assert rule_match(exact, "26,000 people")
    assert not rule_match(exact, "26001")
    assert not rule_match(exact, "no number")


def test_text_normalises_and_finds_short_gold_in_short_prediction() -> None:
    gold = compile_gold(Sample(uid="t", answer="New York", answer_type="text"))
    assert rule_match(gold, "new  york.")
    assert rule_match(gold, "It is the city of New York")  # <= 10 words
    assert not rule_match(gold, "York New")
    long = "I think after a very careful look at everything that it is New York"
    assert not rule_match(gold, long)  # more than ten words: no containment rule
    assert rule_match(compile_gold(Sample(uid="t", answer="ＡＢＣ")), "abc")  # NFKC
    assert rule_match(compile_gold(Sample(uid="t", answer="the 831K")), "831K")
