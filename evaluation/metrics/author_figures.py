"""The figures the "thinking with images" benchmarks report, computed as their authors' code does
(docs/metrics.md, "HR-Bench, TreeBench and TIR-Bench"). Plain Python: no Django import.

Each rule was written from reading the released code; the quirks it keeps are listed in
docs/metrics.md, each with a row in evaluation/tests/test_author_figures.py.

- ``hrbench``: VLMEvalKit's ``report_acc_hrbench`` (``vlmeval/dataset/utils/hrbench.py``; the same
  combination in HR-Bench's own ``hrbench/vlmeval/dataset/image_mcq.py``): the rows grouped by
  ``cycle_category``, each cycle's accuracy overall and per ``category``, then each figure averaged
  over the cycles.
- ``treebench``: VLMEvalKit's ``TreeBench.evaluate``: the letter read by ``extract_characters_regex``
  from the ``<answer>`` tag (or the whole prediction), and the mean IoU of the ``<box>[x1,y1,x2,y2]</box>``
  boxes of the reasoning against the ``target_instances``.
- ``tirbench``: TIR-Bench's ``calculate_score.py`` and ``tools.py``: a credit in [0, 1] per row (jigsaw and
  spot-the-difference give partial credit), the score its sum over all rows, and per task.

``Collector`` gathers what each figure needs while the scorer reads a submission (scoring.py), and gives
the figures per mode at the end.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

HRBENCH = "hrbench"
TREEBENCH = "treebench"
TIRBENCH = "tirbench"
FIGURE_PROFILES = frozenset({HRBENCH, TREEBENCH, TIRBENCH})

# ---- HR-Bench --------------------------------------------------------------------------------


def hrbench_cycles(rows: Iterable[tuple[str, str, float]]) -> dict[str, Any]:
    """(category, cycle_category, hit) per row -> {"cycles": {cycle: {"all": acc, category: acc}},
    "average": {"all": acc, category: acc}}, as ``report_acc_hrbench`` computes it.

    Kept on purpose: the average of a category divides by the number of *all* cycles, so a category
    missing from one cycle is averaged as if it scored 0 there; cycles are in sorted order (pandas'
    groupby); each cycle's "all" is over its own rows, so cycles of unequal size weigh the same."""
    by_cycle: dict[str, list[tuple[str, float]]] = {}
    for category, cycle, hit in rows:
        by_cycle.setdefault(cycle, []).append((category, hit))
    cycles: dict[str, dict[str, float]] = {}
    totals: dict[str, float] = {}
    for cycle in sorted(by_cycle):
        items = by_cycle[cycle]
        figures = {"all": sum(h for _, h in items) / len(items)}
        for category in sorted({c for c, _ in items}):
            hits = [h for c, h in items if c == category]
            figures[category] = sum(hits) / len(hits)
        cycles[cycle] = figures
        for key, value in figures.items():
            totals[key] = totals.get(key, 0.0) + value
    average = {key: value / len(cycles) for key, value in totals.items()} if cycles else {}
    return {"cycles": cycles, "average": average}


# ---- TreeBench -------------------------------------------------------------------------------

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S)
_THINK_TAG = re.compile(r"<think>(.*?)</think>", re.S)
_BOX_TAG = re.compile(r"<box>(.*?)</box>", re.S)
_BOX_COORDS = re.compile(r"\[(\d+),(\d+),(\d+),(\d+)\]")
_ANSWER_PREFIXES = ("The best answer is", "The correct answer is", "The answer is", "The answer",
                    "The best option is", "The correct option is", "Best answer:", "Best option:")
_CHOICES = ("(A)", "(B)", "(C)", "(D)", "(E)")


def treebench_letter(prediction: str) -> str:
    """The option letter TreeBench reads from a prediction ("" when none): the first ``<answer>`` tag's
    content upper-cased (else the prediction as written), then VLMEvalKit's ``extract_characters_regex``:
    the answer prefixes deleted, the first capital A-E anywhere ("Because ..." reads as B), else a text
    contained in "(a)".."(e)" ("b" and "(c" read as B and C; the empty text reads as A)."""
    found = _ANSWER_TAG.search(prediction)
    s = found.group(1).strip().upper() if found else prediction
    s = s.strip()
    for prefix in _ANSWER_PREFIXES:
        s = s.replace(prefix, "")
    if len(s.split()) > 10 and not re.search("[ABCDE]", s):
        return ""
    letter = re.search("[ABCDE]", s)
    if letter is None:
        for choice in _CHOICES:
            if s.lower() in choice.lower():
                return choice[1]
        return ""
    return letter[0]


def treebench_boxes(text: str) -> list[tuple[int, int, int, int]]:
    """The boxes TreeBench reads: ``<box>[x1,y1,x2,y2]</box>`` with integers and no spaces, from the
    ``<think>`` part when there is one; a box with x1 >= x2 or y1 >= y2 is dropped."""
    think = _THINK_TAG.search(text)
    cot = think.group(1).strip() if think else text
    boxes = []
    for inner in _BOX_TAG.findall(cot):
        m = _BOX_COORDS.match(inner.strip())
        if m:
            x1, y1, x2, y2 = map(int, m.groups())
            if x1 < x2 and y1 < y2:
                boxes.append((x1, y1, x2, y2))
    return boxes


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def treebench_iou(text: str, targets: Sequence[Sequence[float]]) -> float:
    """TreeBench's ``evaluate_box_iou``: for each target instance the best IoU of any box read, averaged
    over the targets. No box read: 0. Boxes but no targets: 1 (their ``len(all_boxes) > 0``)."""
    boxes = treebench_boxes(text)
    if not boxes:
        return 0.0
    if not targets:
        return 1.0
    return sum(max(_iou(t, b) for b in boxes) for t in targets) / len(targets)


def treebench_rating(rows: Iterable[tuple[str, str, float, float]]) -> dict[str, Any]:
    """(task, subtask, score, iou) per row -> TreeBench's ``get_dimension_rating``: accuracy per task and
    subtask, "Overall" (every row) and "mIoU" (the mean IoU of every row, 0 for a row without boxes)."""
    tasks: dict[str, dict[str, list[float]]] = {}
    scores: list[float] = []
    ious: list[float] = []
    for task, subtask, score, iou in rows:
        tasks.setdefault(task, {}).setdefault(subtask, []).append(score)
        scores.append(score)
        ious.append(iou)
    out: dict[str, Any] = {task: {sub: sum(v) / len(v) for sub, v in sorted(subs.items())}
                           for task, subs in sorted(tasks.items())}
    out["Overall"] = sum(scores) / len(scores) if scores else None
    out["mIoU"] = sum(ious) / len(ious) if ious else None
    return out


# ---- TIR-Bench -------------------------------------------------------------------------------

NOT_EXTRACTED = "(not extracted) "  # an answer the authors' LLM extraction has not produced
_TIR_CHOICES = ("A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "H")  # their list, H twice
_LETTERS_SPACES = re.compile(r"[A-Za-z*:\s]+")


def tir_kind(answer: str) -> int:
    """Their ``classify_string``: 1 letters only, 2 an int as Python reads one, 3 a float, 4 anything else."""
    if answer.isalpha():
        return 1
    for kind, parse in ((2, int), (3, float)):
        try:
            parse(answer)
            return kind
        except ValueError:
            pass
    return 4


def _number(text: str) -> Fraction | None:
    """A plain number or a fraction a/b: the part of math_verify's fallback reproduced here."""
    text = text.strip()
    try:
        if "/" in text:
            a, b = text.split("/", 1)
            return Fraction(int(a), int(b))
        value = float(text)
        return Fraction(value) if math.isfinite(value) else None
    except (ValueError, ZeroDivisionError):
        return None


def _judge_number(extracted: str, answer: str, parse: type) -> float | None:
    """``judge_int`` / ``judge_float``: the extraction without letters, ``*``, ``:`` and spaces, equal to the
    gold as an int (a float). Their fallback, math_verify, is reproduced for plain numbers and fractions
    (``3.0`` is ``3``, ``1/2`` is ``0.5``); what only its symbolic parser reads is undecided (None)."""
    cleaned = _LETTERS_SPACES.sub("", extracted.replace("Extracted answer:", "").strip()).strip()
    try:
        if parse(cleaned) == parse(answer):
            return 1.0
    except ValueError:
        pass
    mine, gold = _number(cleaned), _number(answer)
    if gold is None:
        return 0.0
    if mine is None:
        return None if cleaned else 0.0
    return 1.0 if mine == gold else 0.0


def _levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _judge_choice(extracted: str, answer: str, prompt: str) -> float:
    """``judge_choice``: a one-letter gold against the extraction, or, when the extraction is not a letter,
    the option whose "X. text" / "X.text" / "X text" / "Xtext" the prompt holds (the last one found), and
    then the letter nearest by edit distance (the first on a tie: "65%" reads as A). Several letters:
    equal once both are sorted."""
    if len(answer) != 1:
        return 1.0 if "".join(sorted(answer)) == "".join(sorted(extracted)) else 0.0
    if answer not in _TIR_CHOICES:
        return 0.0
    extraction = extracted.replace("Extracted answer:", "").strip()
    if extraction not in _TIR_CHOICES:
        for x in _TIR_CHOICES:
            if any(f"{x}{sep}{extraction}" in prompt for sep in (". ", ".", " ", "")):
                extraction = x
        distances = [_levenshtein(extraction, c) for c in _TIR_CHOICES]
        extraction = _TIR_CHOICES[distances.index(min(distances))]
    return 1.0 if extraction == answer else 0.0


def _integers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def _n_squared(text: str, n: int) -> list[int] | None:
    """``extract_consecutive_n_squared``: the first run of digits, commas and spaces holding n*n numbers."""
    for run in re.findall(r"[\d\s,，]+", text):
        numbers = re.findall(r"\d+", run)
        if len(numbers) == n * n:
            return [int(x) for x in numbers]
    return None


def tirbench_credit(task: str, answer: str, extracted: str, prompt: str = "") -> float | None:
    """The credit TIR-Bench's ``calculate_score.py`` gives one row, in [0, 1]; None when it cannot be
    decided here (no extraction by their LLM, or a number only math_verify's symbolic parser reads).

    ``extracted`` is their ``extracted_answer`` (for ``ocr``, the model's whole response, which they read
    instead); ``answer`` the gold as text. Jigsaw's n is the square root of the gold's count of numbers
    (their ``meta_data.difficulty``, which equals it)."""
    if task == "ocr":
        return 1.0 if answer in extracted else 0.0
    if extracted.startswith(NOT_EXTRACTED):
        return None
    extracted = extracted.replace("*", "").strip()
    kind = tir_kind(answer)
    if task == "word_search":
        if kind == 2:
            return _judge_number(extracted, answer, int)
        pair = re.compile(r"\b(\d+)\s*,\s*(\d+)\b")
        a, r = pair.search(answer), pair.search(extracted)
        return 1.0 if a and r and tuple(map(int, a.groups())) == tuple(map(int, r.groups())) else 0.0
    if task == "spot_difference":
        if kind == 2:
            return _judge_number(extracted, answer, int)
        mine, gold = set(_integers(extracted)), set(_integers(answer))
        union = mine | gold
        return len(mine & gold) / len(union) if union else 1.0
    if task == "jigsaw":
        count = len(_integers(answer))
        n = math.isqrt(count)
        gold_order, mine_order = _n_squared(answer, n), _n_squared(extracted, n)
        if n == 0 or n * n != count or gold_order is None or mine_order is None:
            return 0.0
        return sum(1 for g, m in zip(gold_order, mine_order) if g == m) / len(gold_order)
    if kind == 1:
        return _judge_choice(extracted, answer, prompt)
    if kind == 2:
        return _judge_number(extracted, answer, int)
    if kind == 3:
        return _judge_number(extracted, answer, float)
    return 0.0  # their "answer is wrong": printed, scored 0


def tirbench_score(rows: Iterable[tuple[str, float]]) -> dict[str, Any]:
    """(task, credit) per row -> {"score": sum / rows, "tasks": {task: mean}}, as they print them."""
    tasks: dict[str, list[float]] = {}
    total, n = 0.0, 0
    for task, credit in rows:
        tasks.setdefault(task, []).append(credit)
        total += credit
        n += 1
    return {"score": total / n if n else None,
            "tasks": {t: sum(v) / len(v) for t, v in sorted(tasks.items())}}


# ---- gathering them while a submission is scored ----------------------------------------------


@dataclass(slots=True)
class Collector:
    """Per (sample, mode) slot what the profile's figure needs; ``report`` gives the figures per mode.

    A sample without a line in a mode counts as a wrong row without boxes (the platform's rule for a
    missing line: their code only sees the rows of the file). A row the rules leave undecided makes the
    figure not available, with the count."""

    profile: str
    values: dict[int, float] = field(default_factory=dict)  # slot -> IoU (treebench) or credit (tirbench)
    hits: dict[int, tuple[bool, bool]] = field(default_factory=dict)  # slot -> (correct, undecided)
    modes: set[str] = field(default_factory=set)

    def read(self, slot: int, mode: str, regions: Sequence[Sequence[float]], category: str, gold: str,
             question: str, extracted: str, text: str, failed: bool) -> None:
        self.modes.add(mode)
        if self.profile == TREEBENCH:
            self.values[slot] = 0.0 if failed else treebench_iou(text, regions)
        elif self.profile == TIRBENCH:
            credit = 0.0 if failed else tirbench_credit(category, gold, extracted, question)
            if credit is not None:
                self.values[slot] = credit

    def decided(self, slot: int, correct: bool, undecided: bool) -> None:
        self.hits[slot] = (bool(correct), undecided)

    def report(self, samples: Sequence[Any], n_modes: int, mode_index: Mapping[str, int]) -> dict[str, Any]:
        """``samples``: the benchmark's samples in order (``.domain``, ``.category``, ``.aux_line``)."""
        out: dict[str, Any] = {"profile": self.profile}
        for mode in sorted(self.modes, key=lambda m: mode_index[m]):
            mi = mode_index[mode]
            undecided = 0
            rows: list[tuple[Any, int]] = []
            for i, s in enumerate(samples):
                slot = n_modes * i + mi
                hit = self.hits.get(slot, (False, False))
                if hit[1] or (self.profile == TIRBENCH and slot in self.hits and slot not in self.values):
                    undecided += 1
                rows.append((s, slot))
            if undecided:
                out[mode] = {"not_available": True,
                             "reason": f"{undecided} of {len(rows)} rows need an LLM judge (the authors' extraction)"}
                continue
            if self.profile == HRBENCH:
                out[mode] = hrbench_cycles((s.domain, s.category, 1.0 if self.hits.get(slot, (False,))[0] else 0.0)
                                           for s, slot in rows)
            elif self.profile == TREEBENCH:
                out[mode] = treebench_rating((s.domain, s.category, 1.0 if self.hits.get(slot, (False,))[0] else 0.0,
                                              self.values.get(slot, 0.0)) for s, slot in rows)
            else:
                out[mode] = tirbench_score((s.category, self.values.get(slot, 0.0)) for s, slot in rows)
            out[mode]["n"] = len(rows)
        return out
