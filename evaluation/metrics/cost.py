"""Cost, rank score, routing baselines and the Pareto frontier (metrics.md section 7)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RANK_B = 0.1


def prediction_cost(cost_usd: float | None, input_tokens: int | None, output_tokens: int | None,
                    prices: tuple[float, float] | None) -> float | None:
    """``cost_usd`` when given, else tokens x prices ($ per million tokens); None if unknown."""
    if cost_usd is not None:
        return float(cost_usd)
    if prices is None or (input_tokens is None and output_tokens is None):
        return None
    return ((input_tokens or 0) * prices[0] + (output_tokens or 0) * prices[1]) / 1e6


def cost_bounds(costs: Sequence[float]) -> tuple[float, float] | None:
    """(cmin, cmax) over the priced entries' average per-sample costs; None if none priced."""
    priced = [c for c in costs if c is not None]
    if not priced:
        return None
    return min(priced), max(priced)


def normalized_cost(cost: float, cmin: float, cmax: float) -> float:
    """C = log(cmax / c) / log(cmax / cmin), clipped to [0, 1].

    With one priced entry (cmin == cmax) the range is empty; C is 1 for a cost at or below it
    (that entry is as cheap as anything seen) and 0 above it. A zero cost is the cheapest
    possible and gets C = 1.
    """
    if cost <= 0:
        return 1.0
    if cmax <= cmin or cmin <= 0:
        return 1.0 if cost <= cmax else 0.0
    c = math.log(cmax / cost) / math.log(cmax / cmin)
    return min(1.0, max(0.0, c))


def rank_score(accuracy: float, cost: float, cmin: float, cmax: float, b: float = RANK_B) -> float:
    """S = (1 + b) A C / (b A + C) with A in [0, 1]; 0 when A and C are both 0."""
    c = normalized_cost(cost, cmin, cmax)
    denom = b * accuracy + c
    return (1.0 + b) * accuracy * c / denom if denom > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Point:
    name: str
    accuracy: float  # share in [0, 1]
    cost: float  # average $ per sample
    n: int = 0


def routing_baselines(correct: Mapping[str, Sequence[bool]], costs: Mapping[str, Sequence[float]]
                      ) -> dict[str, Point]:
    """Oracle, Strongest and Cheapest over submissions scored on the same ordered samples.

    ``correct[name][i]`` and ``costs[name][i]`` are submission ``name``'s outcome and cost on
    sample i. Ties go to the first name in sorted order, so the result is deterministic.
    """
    names = sorted(correct)
    if not names:
        return {}
    position = {k: i for i, k in enumerate(names)}  # the tie-break (names.index was a scan per comparison)
    n = len(correct[names[0]])
    if any(len(correct[k]) != n or len(costs[k]) != n for k in names):
        raise ValueError("every submission must cover the same samples")
    mean_acc = {k: sum(correct[k]) / n if n else 0.0 for k in names}
    mean_cost = {k: sum(costs[k]) / n if n else 0.0 for k in names}
    hits = 0
    spent = 0.0
    for i in range(n):
        right = [k for k in names if correct[k][i]]
        pool = right or names
        pick = min(pool, key=lambda k: (costs[k][i], position[k]))
        hits += bool(right)
        spent += costs[pick][i]
    strongest = max(names, key=lambda k: (mean_acc[k], -position[k]))
    cheapest = min(names, key=lambda k: (mean_cost[k], position[k]))
    return {
        "Oracle": Point("Oracle", hits / n if n else 0.0, spent / n if n else 0.0, n),
        "Strongest": Point(f"Strongest ({strongest})", mean_acc[strongest], mean_cost[strongest], n),
        "Cheapest": Point(f"Cheapest ({cheapest})", mean_acc[cheapest], mean_cost[cheapest], n),
    }


def pareto_frontier(points: Sequence[Point]) -> list[Point]:
    """Points not dominated in (lower cost, higher accuracy), by ascending cost.

    A point is dominated when another costs no more and is at least as accurate, strictly
    better in one of the two; of exact duplicates the first by name is kept.
    """
    ordered = sorted(points, key=lambda p: (p.cost, -p.accuracy, p.name))
    frontier: list[Point] = []
    best = -math.inf
    for p in ordered:
        if p.accuracy > best:
            frontier.append(p)
            best = p.accuracy
    return frontier
