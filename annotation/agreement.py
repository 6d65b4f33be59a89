"""Inter-annotator agreement: boxes, answers and key steps. Plain Python, no Django import.

- Boxes: one-to-one matching that maximises the total IoU (the Hungarian algorithm), then the
  mean IoU of the matched pairs and F1 at IoU >= 0.5, as CVAT's quality control reports them.
- Answers: exact agreement after normalising case, spaces and number formatting.
- Key steps: a global alignment (Needleman-Wunsch with free gaps) of the two step lists, with a
  word-overlap similarity per pair; one inserted step costs only its own share, instead of
  shifting every later step out of line as a position-by-position comparison would.

For N annotators every figure is the mean over the N(N-1)/2 pairs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations

Box = Sequence[float]
IOU_THRESHOLD = 0.5


def iou(a: Box, b: Box) -> float:
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def hungarian(cost: list[list[float]]) -> list[tuple[int, int]]:
    """Minimum-cost assignment for a rectangular matrix (rows <= or > columns both fine):
    the O(n^2 m) shortest augmenting path form of Kuhn-Munkres. Returns (row, column) pairs,
    min(rows, columns) of them."""
    if not cost or not cost[0]:
        return []
    transposed = len(cost) > len(cost[0])
    if transposed:  # the algorithm below needs rows <= columns
        cost = [list(col) for col in zip(*cost)]
    n, m = len(cost), len(cost[0])
    u, v = [0.0] * (n + 1), [0.0] * (m + 1)
    match = [0] * (m + 1)  # match[j] = row (1-based) assigned to column j
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        minv = [math.inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = match[j0], math.inf, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[match[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            match[j0] = match[j1]
            j0 = j1
    pairs = [(match[j] - 1, j - 1) for j in range(1, m + 1) if match[j]]
    if transposed:
        pairs = [(c, r) for r, c in pairs]
    return sorted(pairs)


@dataclass(frozen=True)
class BoxAgreement:
    mean_iou: float  # over matched pairs (pairs with no overlap count as 0); 1.0 when both are empty
    f1: float  # at IoU >= 0.5
    precision: float
    recall: float
    matches: list[tuple[int, int, float]] = field(default_factory=list)  # (index in a, index in b, IoU)


def box_agreement(a: Sequence[Box], b: Sequence[Box], *, threshold: float = IOU_THRESHOLD) -> BoxAgreement:
    if not a and not b:
        return BoxAgreement(1.0, 1.0, 1.0, 1.0)
    if not a or not b:
        return BoxAgreement(0.0, 0.0, 0.0, 0.0)
    ious = [[iou(x, y) for y in b] for x in a]
    pairs = hungarian([[-value for value in row] for row in ious])
    matches = [(i, j, ious[i][j]) for i, j in pairs]
    # Unmatched boxes on either side count as 0, so an extra box lowers the mean.
    mean = sum(m[2] for m in matches) / max(len(a), len(b))
    hits = sum(1 for m in matches if m[2] >= threshold)
    precision, recall = hits / len(b), hits / len(a)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return BoxAgreement(mean, f1, precision, recall, matches)


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def normalise_answer(answer: str) -> str:
    text = " ".join(str(answer).split()).casefold().rstrip(".")
    plain = text.replace(",", "")
    if _NUMBER.match(plain):
        value = float(plain)
        return str(int(value)) if value.is_integer() else repr(value)
    return text


def answers_agree(a: str, b: str) -> bool:
    return normalise_answer(a) == normalise_answer(b)


_WORD = re.compile(r"\w+")


def step_similarity(a: str, b: str) -> float:
    """Jaccard overlap of the two steps' word sets (case-insensitive)."""
    wa, wb = set(_WORD.findall(a.casefold())), set(_WORD.findall(b.casefold()))
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def steps_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """2 * (best alignment score) / (len(a) + len(b)); gaps score 0, a pair its word overlap.

    Identical lists give 1.0; one inserted step in a list of n gives 2n / (2n + 1)."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    n, m = len(a), len(b)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            score[i][j] = max(score[i - 1][j], score[i][j - 1],
                              score[i - 1][j - 1] + step_similarity(a[i - 1], b[j - 1]))
    return 2 * score[n][m] / (n + m)


@dataclass(frozen=True)
class AnnotationView:
    """What agreement needs of one annotation."""

    boxes: list[Box]
    answer: str
    steps: list[str]


@dataclass(frozen=True)
class Agreement:
    annotators: int
    box_mean_iou: float | None  # None with fewer than two annotations
    box_f1: float | None
    answer_agreement: float | None  # share of pairs giving the same answer
    majority_answer: str | None
    steps_similarity: float | None
    pairs: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def agreement(views: Sequence[AnnotationView]) -> Agreement:
    pairs = []
    for (i, x), (j, y) in combinations(enumerate(views), 2):
        boxes = box_agreement(x.boxes, y.boxes)
        pairs.append({"a": i, "b": j, "mean_iou": boxes.mean_iou, "f1": boxes.f1,
                      "answer": answers_agree(x.answer, y.answer),
                      "steps": steps_similarity(x.steps, y.steps)})
    counts: dict[str, int] = {}
    for view in views:
        if view.answer.strip():
            key = normalise_answer(view.answer)
            counts[key] = counts.get(key, 0) + 1
    majority = max(counts, key=lambda k: counts[k]) if counts else None
    if majority is not None and counts[majority] * 2 <= len(views):
        majority = None  # no strict majority

    def mean(key: str) -> float | None:
        return sum(float(p[key]) for p in pairs) / len(pairs) if pairs else None

    return Agreement(len(views), mean("mean_iou"), mean("f1"), mean("answer"), majority, mean("steps"), pairs)
