"""Final-answer extraction and rule matching (metrics.md section 1).

Everything gold-side is compiled once per sample (``GoldKey``) so matching a prediction is a
few string operations.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from .profiles import (
    ANSWER_TAG as _ANSWER_TAG,
    GENERIC,
    RIGHT,
    WRONG,
    AuthorGold,
    author_answer,
    author_verdict,
    compile_author_gold,
)
from .types import Sample

# Letter alone, or followed by . ) : space or -, optionally wrapped "(B)" or after "Answer:".
_CHOICE = re.compile(r"^(?:answer\s*[:：]?\s*)?\(?([a-z])(?:\)|(?=[.):\s-])|$)", re.I)
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?")
_PUNCT = re.compile(r"[^\w\s]|_")
# A number inside text: an optional minus sign that starts a word, digits, and the decimal
# points or separators between digits. Its sign and decimal point are part of its value.
_TEXT_NUMBER = re.compile(r"(?<![\w.,])(?:-(?=\.?\d))?(?:\d+(?:[.,]\d+)*|\.\d+)")
_DIGIT = re.compile(r"\d")
_ARTICLES = frozenset({"a", "an", "the"})


def extract_answer(answer: str, response: str = "", profile: str = GENERIC, category: str = "") -> str:
    """The last <answer>...</answer> of ``answer``, else of ``response``, else ``answer``; under a
    scoring profile whose authors read another text, that text (``profiles.author_answer``; ``category``
    is the sample's, which TIR-Bench's rule reads)."""
    if profile != GENERIC and (author := author_answer(profile, answer, response, category)) is not None:
        return author
    if "<" in answer:
        found: list[str] = _ANSWER_TAG.findall(answer)
        if found:
            return found[-1].strip()
    if response and "<" in response:
        found = _ANSWER_TAG.findall(response)
        if found:
            return found[-1].strip()
    return answer.strip()


def _drop_punct(text: str) -> str:
    """Punctuation dropped, except a number's minus sign and decimal point (``-3.5`` is not
    ``3.5`` nor ``35``); a separator between digits goes (``26,000`` is ``26000``)."""
    out = []
    start = 0
    for m in _TEXT_NUMBER.finditer(text):
        out.append(_PUNCT.sub("", text[start:m.start()]))
        number = m.group(0).replace(",", "")
        out.append(number.replace(".", "0.", 1) if number.lstrip("-")[0] == "." else number)
        start = m.end()
    out.append(_PUNCT.sub("", text[start:]))
    return "".join(out)


def normalize_text(text: str) -> str:
    """NFKC, lower case, punctuation dropped (numbers keep their sign and decimal point),
    articles dropped, white space collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    if _DIGIT.search(text):
        text = _drop_punct(text.replace("\u2212", "-"))  # U+2212 MINUS SIGN, which NFKC keeps
    else:
        text = _PUNCT.sub("", text)
    return " ".join(w for w in text.split() if w not in _ARTICLES)


def parse_number(text: str) -> float | None:
    """The first number in ``text`` (``26,000``, ``-3.5``, ``1e3``, ``12%``, ``3 cm``)."""
    m = _NUMBER.search(text)
    if m is None:
        return None
    try:
        value = float(m.group(0).replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True, slots=True)
class GoldKey:
    """A sample's gold answer, pre-digested for every rule."""

    kind: str
    letter: str
    option_text: str
    number: float | None
    tolerance: float
    text: str
    text_words: int
    letters: str = ""  # a choice's option letters, upper case
    # A scoring profile other than generic: the authors' rule decides instead (profiles.py).
    author: AuthorGold | None = None


def compile_gold(sample: Sample, profile: str = GENERIC) -> GoldKey:
    author = compile_author_gold(sample, profile)
    kind = sample.answer_type
    gold = sample.answer.strip()
    letter = option_text = letters = ""
    number = None
    tolerance = 0.0
    if kind == "choice":
        m = _CHOICE.match(gold)
        letter = m.group(1).upper() if m else gold.upper()
        letters = "".join(str(k).upper() for k in sample.options or ())
        if sample.options and letter in sample.options:
            option_text = normalize_text(str(sample.options[letter]))
        elif not sample.options:
            kind = "text"  # a choice without options can only be matched as text
    elif kind == "number":
        number = parse_number(gold)
        if number is None:
            kind = "text"
        else:
            tolerance = (
                sample.tolerance if sample.tolerance is not None else 1e-9 * max(1.0, abs(number))
            )
    norm = normalize_text(gold)
    return GoldKey(kind, letter, option_text, number, tolerance, norm, len(norm.split()), letters, author)


def _text_match(gold_text: str, gold_words: int, pred: str) -> bool:
    norm = normalize_text(pred)
    if norm == gold_text:
        return True
    if gold_text and gold_words <= 4 and norm.count(" ") < 10:
        return f" {gold_text} " in f" {norm} "
    return False


def rule_match(gold: GoldKey, extracted: str) -> bool:
    """Rule verdict for one extracted answer; False means "not shown correct by rules"."""
    if gold.author is not None:
        return author_verdict(gold.author, extracted) == RIGHT
    kind = gold.kind
    if kind == "choice":
        m = _CHOICE.match(extracted.strip())
        if m is not None and m.group(1).upper() == gold.letter:
            return True
        return bool(gold.option_text) and normalize_text(extracted) == gold.option_text
    if kind == "number":
        value = parse_number(extracted)
        return value is not None and abs(value - gold.number) <= gold.tolerance  # type: ignore[operator]  # a number gold has both
    return _text_match(gold.text, gold.text_words, extracted)


def rule_is_final(gold: GoldKey, extracted: str) -> bool:
    """Whether the rule's "wrong" is final, so no judge is asked (metrics.md section 1.3).

    It is for a number sample when the answer holds a number (the tolerance decided), and for a
    choice sample when the answer names one of the option letters. A judge may only read what
    the rules could not: a number in words, a choice answered in other words, free text.
    Under a scoring profile the authors' code says which of its "wrong" verdicts are final.
    """
    if gold.author is not None:
        return author_verdict(gold.author, extracted) == WRONG
    kind = gold.kind
    if kind == "number":
        return parse_number(extracted) is not None
    if kind == "choice":
        m = _CHOICE.match(extracted.strip())
        return m is not None and m.group(1).upper() in gold.letters
    return False
