"""How far a judge agrees with people, and people with each other. Plain Python, no Django import.

A *unit* is one question a judge answers about one trace: the answer (correct or not), one gold key
step (matched or not), one tool call (valid or not) or one reasoning step (1, 0.5 or 0). Each unit
holds the human labels (one per person who judged the trace) and the judge's label.

Conventions (docs/trace_review.md says the same):

- **Human majority**: the label given by more than half of the people; no strict majority (a 1-1
  split, or 1/0.5/0 from three people) leaves the unit *tied*, and a tied unit is left out of the
  judge's comparison (it is counted, so a reader sees how many).
- **Cohen's kappa** between the judge and the human majority, unweighted, over the categories
  seen. When the expected agreement p_e is 1 the formula is 0/0. p_e = 1 only happens when both
  sides give one and the same label to every unit, so they agree on every unit: kappa is then
  reported as 1.0 and flagged ``degenerate`` (scikit-learn returns NaN here; a page cannot sort or
  average NaN, and "agreed on everything, nothing to tell chance from skill" is what the flag says).
  A judge that is constant while people vary is *not* degenerate: p_e < 1 and kappa is usually 0
  or below, which is the honest figure for a judge that says "yes" to everything.
- **Krippendorff's alpha** among the humans (the ceiling a judge can hope for): nominal distance
  for the yes/no kinds, **interval** distance ((a - b)^2) for the 1/0.5/0 step scores, because the
  three scores are equally spaced numbers and half credit is nearer full credit than nothing is
  (with three equally spaced values ordinal alpha would rank them the same way, but interval keeps
  the arithmetic checkable by hand). Units with fewer than two human labels are not pairable and
  are left out. No variation at all (D_e = 0) gives 1.0, flagged ``degenerate``, as for kappa.
- **Bootstrap intervals**: percentile 95 % intervals over 1,000 resamples of *traces* (not units:
  the key steps of one trace are judged together and are not independent), with a fixed seed, so
  the same verdicts always print the same interval.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

Label = Hashable  # True/False for the yes/no kinds, 1.0/0.5/0.0 for step scores

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20240601
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Unit:
    trace: str  # the cluster the bootstrap resamples
    humans: tuple[Label, ...]
    judge: Label | None = None  # None: the judge gave no verdict on this unit


@dataclass(frozen=True, slots=True)
class Kappa:
    kappa: float | None  # None only when there is nothing to compare
    p_o: float | None
    p_e: float | None
    n: int
    degenerate: bool = False


@dataclass(frozen=True, slots=True)
class Alpha:
    alpha: float | None
    n_units: int  # pairable units (two or more labels)
    n_values: int
    degenerate: bool = False


@dataclass
class KindAgreement:
    """One judge on one kind of question, against the people."""

    n_units: int  # units with a judge verdict and a human majority
    n_traces: int
    n_tied: int  # units with a judge verdict but no human majority
    raw: float | None
    raw_interval: tuple[float, float] | None
    kappa: Kappa
    kappa_interval: tuple[float, float] | None
    categories: list[Label]
    confusion: list[list[int]]  # rows: human majority, columns: judge, in ``categories`` order
    human_alpha: Alpha  # among the people, on the same units (ties included)
    metric: str
    per_trace: dict[str, int] = field(default_factory=dict)

    @property
    def category_labels(self) -> list[str]:
        return [label_text(c) for c in self.categories]

    @property
    def confusion_rows(self) -> list[tuple[str, list[int]]]:
        return list(zip(self.category_labels, self.confusion))

    @property
    def raw_percent(self) -> float | None:
        return None if self.raw is None else 100.0 * self.raw

    @property
    def raw_interval_percent(self) -> tuple[float, float] | None:
        return None if self.raw_interval is None else (100.0 * self.raw_interval[0], 100.0 * self.raw_interval[1])


def label_text(label: Label) -> str:
    """yes / no for the binary kinds, 1 / 0.5 / 0 for step scores."""
    if isinstance(label, bool):
        return "yes" if label else "no"
    if isinstance(label, float):
        return f"{label:g}"
    return str(label)


def majority(labels: Sequence[Label]) -> Label | None:
    """The label more than half of the people gave, else None (a tie)."""
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if count * 2 > len(labels) else None


def cohen_kappa(pairs: Sequence[tuple[Label, Label]]) -> Kappa:
    """Unweighted Cohen's kappa of (a, b) label pairs; see the module docstring for p_e = 1."""
    n = len(pairs)
    if n == 0:
        return Kappa(None, None, None, 0)
    p_o = sum(1 for a, b in pairs if a == b) / n
    count_a = Counter(a for a, _ in pairs)
    count_b = Counter(b for _, b in pairs)
    p_e = sum(count_a[c] * count_b.get(c, 0) for c in count_a) / (n * n)
    if p_e >= 1.0 - 1e-12:
        return Kappa(1.0, p_o, p_e, n, degenerate=True)
    return Kappa((p_o - p_e) / (1.0 - p_e), p_o, p_e, n)


def _nominal(a: Label, b: Label) -> float:
    return 0.0 if a == b else 1.0


def _interval(a: Label, b: Label) -> float:
    return (float(a) - float(b)) ** 2  # type: ignore[arg-type]


METRICS: dict[str, Callable[[Label, Label], float]] = {"nominal": _nominal, "interval": _interval}


def krippendorff_alpha(units: Sequence[Sequence[Label]], metric: str = "nominal") -> Alpha:
    """Krippendorff's alpha from the coincidence matrix: 1 - D_o / D_e.

    Each unit's labels (one per person, any number of people) add 1/(m_u - 1) to o[c][k] for every
    ordered pair of two different people's labels c, k.
    """
    delta = METRICS[metric]
    pairable = [list(u) for u in units if len(u) >= 2]
    coincidence: Counter[tuple[Label, Label]] = Counter()
    for labels in pairable:
        weight = 1.0 / (len(labels) - 1)
        for i, c in enumerate(labels):
            for j, k in enumerate(labels):
                if i != j:
                    coincidence[(c, k)] += weight
    totals: Counter[Label] = Counter()
    for (c, _k), value in coincidence.items():
        totals[c] += value
    n = sum(totals.values())
    if n <= 1:
        return Alpha(None, len(pairable), round(n))
    d_o = sum(value * delta(c, k) for (c, k), value in coincidence.items()) / n
    d_e = sum(totals[c] * totals[k] * delta(c, k) for c in totals for k in totals) / (n * (n - 1))
    if d_e <= 1e-12:
        return Alpha(1.0, len(pairable), round(n), degenerate=True)
    return Alpha(1.0 - d_o / d_e, len(pairable), round(n))


def confusion_table(pairs: Sequence[tuple[Label, Label]], categories: Sequence[Label]) -> list[list[int]]:
    """Counts with rows = the first label (human majority), columns = the second (judge)."""
    index = {c: i for i, c in enumerate(categories)}
    table = [[0] * len(categories) for _ in categories]
    for a, b in pairs:
        table[index[a]][index[b]] += 1
    return table


def bootstrap_interval(
    clusters: Sequence[Sequence[tuple[Label, Label]]],
    statistic: Callable[[Sequence[tuple[Label, Label]]], float | None],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile interval of ``statistic`` over resamples of whole clusters (traces)."""
    if not clusters:
        return None
    rng = random.Random(seed)
    k = len(clusters)
    values = []
    for _ in range(resamples):
        pooled: list[tuple[Label, Label]] = []
        for _ in range(k):
            pooled.extend(clusters[rng.randrange(k)])
        value = statistic(pooled)
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    tail = (1.0 - CONFIDENCE) / 2
    lo = values[int(tail * (len(values) - 1))]
    hi = values[round((1.0 - tail) * (len(values) - 1))]
    return (lo, hi)


def raw_agreement(pairs: Sequence[tuple[Label, Label]]) -> float | None:
    return sum(1 for a, b in pairs if a == b) / len(pairs) if pairs else None


def kind_agreement(units: Sequence[Unit], *, categories: Sequence[Label], metric: str = "nominal",
                   resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> KindAgreement:
    """A judge against the human majority on one kind of question, with the humans' own alpha."""
    judged = [u for u in units if u.judge is not None]
    by_trace: dict[str, list[tuple[Label, Label]]] = {}
    tied = 0
    for u in judged:
        m = majority(u.humans)
        if m is None:
            tied += 1
            continue
        by_trace.setdefault(u.trace, []).append((m, u.judge))
    pairs = [p for ps in by_trace.values() for p in ps]
    seen = set(categories) | {x for p in pairs for x in p}
    cats = list(categories) + sorted((c for c in seen if c not in categories), key=repr)
    clusters = list(by_trace.values())
    return KindAgreement(
        n_units=len(pairs), n_traces=len(by_trace), n_tied=tied,
        raw=raw_agreement(pairs),
        raw_interval=bootstrap_interval(clusters, raw_agreement, resamples=resamples, seed=seed),
        kappa=cohen_kappa(pairs),
        kappa_interval=bootstrap_interval(clusters, lambda ps: cohen_kappa(ps).kappa, resamples=resamples,
                                          seed=seed),
        categories=cats, confusion=confusion_table(pairs, cats),
        human_alpha=krippendorff_alpha([u.humans for u in judged], metric), metric=metric,
        per_trace={t: len(ps) for t, ps in by_trace.items()},
    )
