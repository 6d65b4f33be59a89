"""Scoring profiles: a benchmark's answers judged by its authors' released rules (metrics.md section 13).

A profile replaces the rule step of section 1 (which answer counts as correct), nothing else. Each
rule here was written from reading the authors' released evaluation code; docs/metrics.md lists
every quirk it keeps on purpose, with the row that shows it (evaluation/tests/test_metrics_profiles.py).

- ``generic``: section 1 as written (``answers.rule_match``); not handled here.
- ``vtcbench``: VTC-Bench's rule pass (the ``VTCBenchDataset`` of its bundled VLMEvalKit).
- ``vlmevalkit``: VLMEvalKit's multiple-choice answer inference (option letters, then option texts),
  exact match for anything else.
- ``mmreason``: VLMEvalKit's MMReason evaluation: the extracted answer equal to the gold, else the judge.
- ``hrbench``: VLMEvalKit's ``HRBenchDataset``: its matching per row (as ``vlmevalkit``), and the
  cycle combination of ``report_acc_hrbench`` as the authors' figure (author_figures.py).
- ``treebench``: VLMEvalKit's ``TreeBench``: the letter of ``extract_characters_regex`` per row, and the
  mean IoU of the reasoning's boxes as the authors' figure.
- ``tirbench``: TIR-Bench's ``calculate_score.py``: per task, on their LLM's extracted answer (a row with
  only a reply is left to a judge); a row is right when its credit is 1, and the credit (partial for
  jigsaw and spot-the-difference) makes the authors' score.

A verdict is 1 (right), 0 (wrong, and a judge may still decide) or 2 (wrong, and final: the
authors' code asks no judge about it).

Which text a profile reads is the authors' too (``author_answer``): VTC-Bench scores ``agent_answer``,
which its harness cut from the first ``<answer>`` tag of the reply; VLMEvalKit matches the whole
``prediction`` cell, tags and all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .author_figures import NOT_EXTRACTED, tirbench_credit, treebench_letter
from .types import Sample

GENERIC = "generic"
VTCBENCH = "vtcbench"
VLMEVALKIT = "vlmevalkit"
MMREASON = "mmreason"
HRBENCH = "hrbench"
TREEBENCH = "treebench"
TIRBENCH = "tirbench"
PROFILES: tuple[str, ...] = (GENERIC, VTCBENCH, VLMEVALKIT, MMREASON, HRBENCH, TREEBENCH, TIRBENCH)
PROFILE_LABELS: dict[str, str] = {
    GENERIC: "platform rules",
    VTCBENCH: "VTC-Bench's rules",
    VLMEVALKIT: "VLMEvalKit's rules",
    MMREASON: "MMReason's rules",
    HRBENCH: "HR-Bench's rules (VLMEvalKit)",
    TREEBENCH: "TreeBench's rules (VLMEvalKit)",
    TIRBENCH: "TIR-Bench's rules",
}
# What a reader of the board must know about a profile's rule beyond its name (shown in the board's header).
PROFILE_NOTES: dict[str, str] = {
    VLMEVALKIT: ("VLMEvalKit has no judge-free rule for free-text rows (it scores them only with its LLM judge); "
                 "the platform uses its nearest judge-free rule instead: the answer equal to the gold once both "
                 "are stripped, ignoring case (its process_line 'accuracy')."),
    HRBENCH: ("Accuracy per row is VLMEvalKit's matching; HR-Bench's own figure averages the accuracy of each "
              "cycle_category (results['author_figures'])."),
    TREEBENCH: ("The letter is read as TreeBench's code reads it; its mean IoU of the <box>[x1,y1,x2,y2]</box> "
                "boxes against the target instances is in results['author_figures']."),
    TIRBENCH: ("A row is right when TIR-Bench's credit is 1; the authors' score (partial credit for jigsaw and "
               "spot-the-difference) is in results['author_figures']. Their answers are extracted by an LLM: "
               "a row with only a reply needs one."),
}

RIGHT, OPEN, WRONG = 1, 0, 2
# A row the authors' rule leaves to their LLM judge, when no such judge is configured: counted neither
# right nor wrong (its record's ``decided_by``; metrics.md section 13).
UNDECIDED = "undecided"
# Profiles whose authors always ask their judge about what the rule leaves open (MMReason: the judge
# extracts the answer, then judges equivalence). The others ask it only in their full pipeline.
JUDGED_PROFILES = frozenset({MMREASON, TIRBENCH})


NEEDS_JUDGE = "need an LLM judge"  # in every such reason: pages show it in full, not only as a tooltip


def undecided_reason(undecided: int, n: int, count: int) -> str:
    """Why an accuracy is not available, with the decided share beside it."""
    decided = n - undecided
    share = f"{count} right of the {decided} decided ({100.0 * count / decided:.1f}%)" if decided else "none decided"
    return f"{undecided} of {n} rows {NEEDS_JUDGE}; {share}"

ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
# VTC-Bench reads the option columns A-G only; an option H or beyond is invisible to its rules.
_VTC_LETTERS = "abcdefg"
# VLMEvalKit turns these into spaces before looking for a lone option letter.
_VLM_SEPARATORS = str.maketrans(dict.fromkeys(".()[],:;!*#{}", " "))
_VLM_REFUSALS = (
    "Sorry, I can't help with images of people yet.", "I can't process this file.",
    "I'm sorry, but without the image provided", "Cannot determine the answer",
)


@dataclass(frozen=True, slots=True)
class AuthorGold:
    """What an author's rule reads of a sample: the gold as text and the options in order."""

    profile: str
    answer: str
    options: tuple[tuple[str, str], ...]  # (upper-case letter, option text as written)
    category: str = ""  # TIR-Bench's task
    question: str = ""  # TIR-Bench's prompt (its choice rule looks options up in it)


# The cells pandas' ``read_excel`` reads back as empty (its default NA spellings, exactly as written).
# Both authors' pipelines pass predictions through an .xlsx and read them back so, and an empty cell
# becomes the text "nan" (``str(NaN)``): reproduced (docs/metrics.md, "The authors' spreadsheet step").
PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def spreadsheet_read_back(text: str) -> str:
    """A prediction as the authors' code reads it back from their spreadsheet: an NA spelling is "nan".
    (Their two other accidents are not reproduced: a cell cut at 32,767 characters, and a prediction
    starting with ``=`` written as a formula that reads back as 0; docs/metrics.md says why.)"""
    return "nan" if text in PANDAS_NA else text


def author_answer(profile: str, answer: str, response: str, category: str = "") -> str | None:
    """The text the authors' code scores for one line, or None when section 1's extraction applies.
    ``category``: the sample's (TIR-Bench reads another text for its ``ocr`` task)."""
    if profile in (HRBENCH, TREEBENCH):  # VLMEvalKit's ``prediction`` cell, as written
        return spreadsheet_read_back(answer if answer.strip() else response)
    if profile == TIRBENCH:
        if category == "ocr":  # their ``model_response``: the whole reply
            return response if response.strip() else answer
        if answer.strip() or not response.strip():
            return answer  # their ``extracted_answer``
        return NOT_EXTRACTED + response[:200]
    if profile == VTCBENCH:
        if answer.strip():
            # ``agent_answer`` as given; a whole reply put in the answer field is cut as their harness cuts it.
            return spreadsheet_read_back(
                vtcbench_cut(answer) if "<answer>" in answer and "</answer>" in answer else answer)
        return spreadsheet_read_back(vtcbench_cut(response))
    if profile == VLMEVALKIT:
        # The ``prediction`` cell as the model wrote it: VLMEvalKit extracts nothing before matching.
        return spreadsheet_read_back(answer if answer.strip() else response)
    if profile == MMREASON and answer.strip():
        # The answer field: their judge's extraction (the ``extract`` column of ``*_extract.xlsx``) or the
        # final answer; its last <answer> tag when it holds one. The reply is read only without an answer.
        found = ANSWER_TAG.findall(answer) if "<" in answer else None
        return found[-1].strip() if found else answer.strip()
    return None


def vtcbench_cut(reply: str) -> str:
    """``agent_answer`` as VTC-Bench's harness cuts it from a reply: from the first ``<answer>`` to the
    first ``</answer>`` (case-sensitive; a ``</answer>`` before the first ``<answer>`` gives nothing), or
    between the first two ``<|answer|>`` marks (InternVL's), which wins when both are there."""
    cut = ""
    if "<answer>" in reply and "</answer>" in reply:
        start = reply.find("<answer>") + len("<answer>")
        cut = reply[start:max(start, reply.find("</answer>"))].strip()
    if reply.count("<|answer|>") >= 2:
        start = reply.find("<|answer|>") + len("<|answer|>")
        cut = reply[start:reply.find("<|answer|>", start)].strip()
    return cut


def compile_author_gold(sample: Sample, profile: str) -> AuthorGold | None:
    """None for the generic profile (section 1's own rules decide)."""
    if profile == GENERIC:
        return None
    if profile not in PROFILES:
        raise ValueError(f"unknown scoring profile {profile!r} (known: {', '.join(PROFILES)})")
    options = tuple((str(k).strip().upper(), str(v)) for k, v in (sample.options or {}).items())
    if profile == TIRBENCH:  # their gold is ``str(item['answer'])``, unstripped
        return AuthorGold(profile, str(sample.answer), options, sample.category, sample.question)
    return AuthorGold(profile, str(sample.answer).strip(), options)


def author_verdict(gold: AuthorGold, prediction: str) -> int:
    """RIGHT, OPEN (a judge may decide) or WRONG (final) for one extracted answer."""
    if gold.profile == VTCBENCH:
        return RIGHT if vtcbench_rule(gold, prediction) else OPEN
    if gold.profile in (VLMEVALKIT, HRBENCH):
        return vlmevalkit_rule(gold, prediction)
    if gold.profile == TREEBENCH:
        # A letter read that is not the gold's, or none at all, scores 0 in their code: final.
        return RIGHT if treebench_letter(prediction) == gold.answer else WRONG
    if gold.profile == TIRBENCH:
        credit = tirbench_credit(gold.category, gold.answer, prediction, gold.question)
        return OPEN if credit is None else RIGHT if credit == 1 else WRONG
    # mmreason: VLMEvalKit's post_check_score, the extracted answer equal to the gold once stripped
    return RIGHT if prediction.strip() == gold.answer else OPEN


# ---- VTC-Bench ----------------------------------------------------------------------------------

def vtcbench_rule(gold: AuthorGold, prediction: str) -> bool:
    """VTC-Bench's rule pass on one row (its ``_evaluate_single_item``), quirks kept."""
    pred = prediction.strip()
    if not pred:
        # Their predictions go through a spreadsheet: an empty cell comes back as NaN, read as "nan"
        # (author_answer has already done so for a line; a bare rule call may pass "").
        pred = "nan"
    pred = pred.lower()
    answer = gold.answer.lower()
    visible = {letter.lower(): text for letter, text in gold.options if letter.lower() in _VTC_LETTERS
               and len(letter) == 1}
    # Multiple choice when any of the option columns A-G has a value, or when the gold is one of a-d.
    if visible or (len(answer) == 1 and answer in "abcd"):
        return _vtc_choice(visible, pred, answer)
    return _vtc_free_text(pred, answer)


def _vtc_choice(options: dict[str, str], pred: str, answer: str) -> bool:
    first = pred[:1]
    if len(answer) == 1 and answer in _VTC_LETTERS:
        # The gold is a letter: the prediction is that letter, alone or followed by ". ", " " or "-"
        # ("C. 6%-7%"); "(C)", "C)", "C:" and "Answer: C" are not read.
        return first == answer and (len(pred) == 1 or pred[1] in ". -")
    if first and first in _VTC_LETTERS:
        # The gold is an option's text and the prediction starts with a letter a-g: that letter is
        # taken as the chosen option, whatever the word ("cat" reads as option C).
        text = options.get(first)
        return text is not None and text.lower().strip() == answer
    # Otherwise: right when the gold option's text appears anywhere in the prediction.
    return any(text.lower().strip() in pred and text.lower().strip() == answer for text in options.values())


def _vtc_free_text(pred: str, answer: str) -> bool:
    if pred == answer:
        return True
    pred_ws = " ".join(pred.split())
    answer_ws = " ".join(answer.split())
    if pred_ws == answer_ws:
        return True
    # A gold of fewer than five words is right anywhere inside the prediction, as a plain substring
    # (so "18007" holds "1800", and an empty gold is inside everything).
    # (Their math_verify check computes a verdict and then returns 0 whatever it says: none here.)
    return len(answer_ws.split()) < 5 and answer_ws in pred_ws


# ---- VLMEvalKit ---------------------------------------------------------------------------------

def vlmevalkit_rule(gold: AuthorGold, prediction: str) -> int:
    if gold.options:
        letter = can_infer(prediction, dict(gold.options))
        if not letter:
            return OPEN  # VLMEvalKit asks its judge to read the answer (exact_matching: "Z", wrong)
        return RIGHT if letter == gold.answer.upper() else WRONG
    # VLMEvalKit has no judge-free rule for a custom free-text row (its ImageShortQADataset asks only
    # its judge); this is its nearest one, ``process_line(method='accuracy')``: equal once stripped,
    # ignoring case. What it calls wrong is left to a judge.
    return RIGHT if prediction.strip().lower() == gold.answer.lower() else OPEN


def can_infer(answer: str, choices: dict[str, str]) -> str | None:
    """VLMEvalKit's answer inference: an option letter standing alone, else one option's text."""
    return _infer_letter(answer, choices) or _infer_text(answer, choices)


def _infer_letter(answer: str, choices: dict[str, str]) -> str | None:
    if "Failed to obtain answer via API" in answer:
        return None
    if any(refusal in answer for refusal in _VLM_REFUSALS):
        return "Z"  # a refusal is read as the letter Z: wrong, and no judge is asked
    tokens = answer.translate(_VLM_SEPARATORS).split()
    named = [c for c in choices if c in tokens]
    if len(named) == 1:
        # One letter stands alone (case-sensitive: "b" is not B), and only when its first
        # appearance is among the last four words: "B is right because ..." is not read.
        letter = named[0]
        if tokens.index(letter) > len(tokens) - 5:
            return letter
    elif not named and "Z" in tokens:
        return "Z"  # a lone Z: VLMEvalKit's "none of the options"
    verbose = _verbose_answer(answer)
    if verbose is not None and verbose in choices:
        return verbose
    return None


def _verbose_answer(answer: str) -> str | None:
    """"(the correct) answer is **B**" names B; only the letters A-D, in either case."""
    lower = answer.lower()
    start = 0
    while (at := lower.find("answer", start)) >= 0:
        start = at + 1
        rest = answer[at + 6:]
        stripped = rest.lstrip()
        if len(stripped) == len(rest) or stripped[:2].lower() != "is":
            continue
        after = stripped[2:]
        letters = after.lstrip()
        if len(letters) == len(after):
            continue
        letters = letters.lstrip("*")
        if letters[:1].upper() in ("A", "B", "C", "D"):
            return letters[0].upper()
    return None


def _infer_text(answer: str, choices: dict[str, str]) -> str | None:
    lower = answer.lower()
    if len(lower) > 2 * sum(len(str(v)) for v in choices.values()):
        return None  # longer than twice all the options together: not read
    found = [k for k, v in choices.items() if str(v).lower() in lower]
    return found[0] if len(found) == 1 else None
