import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evaluation.metrics import Point, pareto_frontier, prediction_cost, rank_score, routing_baselines
from evaluation.metrics.cost import cost_bounds, normalized_cost


def test_routerarena_listed_score_reproduced() -> None:
    # RouterArena lists accuracy 79.69 % at $0.27 per 1K queries as 77.63, bounds 0.0044 and
    # 200 ($/1K), b = 0.1. The printed inputs are rounded: taken literally they give 77.6197
    # (0.0103 from 77.63), and the listed 77.63 lies inside the scores reachable from the
    # inputs' rounding intervals (e.g. $0.2675 -> 77.632).
    literal = 100 * rank_score(0.7969, 0.27, 0.0044, 200.0, b=0.1)
    assert round(literal, 2) == 77.62 and abs(literal - 77.63) < 0.0104
    lowest = 100 * rank_score(0.79685, 0.275, 0.0044, 200.0)
    highest = 100 * rank_score(0.79695, 0.265, 0.0044, 200.0)
    assert lowest < 77.63 < highest
    assert abs(100 * rank_score(0.7969, 0.2675, 0.0044, 200.0) - 77.63) < 0.01


def test_cost_from_tokens_and_prices_unless_given() -> None:
    assert prediction_cost(None, 1_000_000, 500_000, (2.0, 8.0)) == pytest.approx(6.0)
    assert prediction_cost(0.25, 1_000_000, 0, (2.0, 8.0)) == 0.25
    assert prediction_cost(None, 10, 10, None) is None
    assert prediction_cost(None, None, None, (1.0, 1.0)) is None


def test_one_priced_entry_has_cmin_equal_cmax_and_a_finite_score() -> None:
    cmin, cmax = cost_bounds([0.003])  # type: ignore[misc]
    assert cmin == cmax == 0.003
    assert normalized_cost(0.003, cmin, cmax) == 1.0
    assert rank_score(0.6, 0.003, cmin, cmax) == pytest.approx(1.1 * 0.6 / (0.06 + 1.0))
    assert normalized_cost(0.004, cmin, cmax) == 0.0
    assert cost_bounds([]) is None


def test_normalised_cost_clipped_and_endpoints() -> None:
    assert normalized_cost(1.0, 1.0, 100.0) == 0.0 + 1.0  # cheapest -> 1
    assert normalized_cost(100.0, 1.0, 100.0) == 0.0
    assert normalized_cost(10.0, 1.0, 100.0) == pytest.approx(0.5)
    assert normalized_cost(1000.0, 1.0, 100.0) == 0.0
    assert normalized_cost(0.01, 1.0, 100.0) == 1.0


acc = st.floats(min_value=0.0, max_value=1.0)
cost = st.floats(min_value=1e-4, max_value=1e3)


@given(acc, cost)
def test_rank_score_in_unit_interval(a: float, c: float) -> None:
    assert 0.0 <= rank_score(a, c, 0.0044, 200.0) <= 1.0


@given(acc, acc, cost)
def test_rank_score_rises_with_accuracy(a1: float, a2: float, c: float) -> None:
    lo, hi = sorted((a1, a2))
    assert rank_score(lo, c, 0.0044, 200.0) <= rank_score(hi, c, 0.0044, 200.0) + 1e-12


@given(acc, cost, cost)
def test_rank_score_falls_with_cost(a: float, c1: float, c2: float) -> None:
    cheap, dear = sorted((c1, c2))
    assume(not math.isclose(cheap, dear))
    assert rank_score(a, dear, 0.0044, 200.0) <= rank_score(a, cheap, 0.0044, 200.0) + 1e-12


def test_routing_baselines_hand_computed() -> None:
    correct = {"big": [True, True, False, True], "small": [True, False, False, False]}
    costs = {"big": [1.0, 1.0, 1.0, 1.0], "small": [0.1, 0.1, 0.1, 0.1]}
    out = routing_baselines(correct, costs)
    # Oracle: small on 0, big on 1 and 3, cheapest (small) on 2 where none is right.
    assert out["Oracle"].accuracy == 0.75
    assert out["Oracle"].cost == pytest.approx((0.1 + 1.0 + 0.1 + 1.0) / 4)
    assert out["Strongest"].name == "Strongest (big)" and out["Strongest"].accuracy == 0.75
    assert out["Cheapest"].name == "Cheapest (small)" and out["Cheapest"].cost == pytest.approx(0.1)


def test_pareto_frontier_drops_dominated_points() -> None:
    pts = [Point("a", 0.5, 1.0), Point("b", 0.6, 2.0), Point("c", 0.55, 3.0),
           Point("d", 0.7, 5.0), Point("e", 0.4, 0.5)]
    assert [p.name for p in pareto_frontier(pts)] == ["e", "a", "b", "d"]
