"""The routing library's figures, computed by hand on a 4-sample, 2-model pool."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from evaluation.metrics import routing
from evaluation.metrics.routing_knn import knn_probs

Q = {"A": {"s0": True, "s1": True}, "B": {"s0": True, "s2": True}}
C = {"A": dict.fromkeys(["s0", "s1", "s2", "s3"], 0.01), "B": {"s0": 0.001, "s1": 0.002, "s2": 0.003, "s3": 0.004}}
POOL = routing.Pool.build(["B", "A"], ["s0", "s1", "s2", "s3"], Q, C)
ROWS = [0, 1, 2, 3]
BOUNDS = routing.pool_bounds(POOL, ROWS)


def test_pool_is_q_and_c_by_sorted_model():
    assert POOL.models == ("A", "B")
    assert POOL.correct.tolist() == [[1, 1], [1, 0], [0, 1], [0, 0]]
    assert BOUNDS == (pytest.approx(0.0025), pytest.approx(0.01))  # B's mean, A's mean


def test_one_pick_per_sample():
    probs = routing.probs_matrix(POOL, [{"A": 1}, {"A": 1}, {"B": 1}, {"B": 1}])
    f = routing.score(POOL, ROWS, probs, bounds=BOUNDS)
    assert f.accuracy.value == pytest.approx(3 / 4)
    assert f.cost_per_sample_usd.value == pytest.approx((0.01 + 0.01 + 0.003 + 0.004) / 4)
    assert f.cost_per_10k_usd == pytest.approx(67.5)
    c = math.log(0.01 / 0.00675) / math.log(0.01 / 0.0025)
    assert f.rank_score == pytest.approx(1.1 * 0.75 * c / (0.1 * 0.75 + c))
    # Oracle: s0 -> B (both right, B cheaper), s1 -> A, s2 -> B, s3 -> B (none right: the cheapest).
    assert f.oracle_gap["accuracy"] == pytest.approx(0.0)
    assert f.oracle_gap["cost_usd"] == pytest.approx(0.00675 - (0.001 + 0.01 + 0.003 + 0.004) / 4)
    assert f.share == {"A": 0.5, "B": 0.5}
    assert 0 <= f.accuracy.low <= 0.75 <= f.accuracy.high <= 1


def test_probabilities_are_scored_as_expected_accuracy_and_cost():
    probs = routing.probs_matrix(POOL, [{"A": 0.5, "B": 0.5}, {"A": 1}, {"A": 1, "B": 3}, {"B": 2}])
    f = routing.score(POOL, ROWS, probs, bounds=BOUNDS)
    assert f.accuracy.value == pytest.approx((1 + 1 + 0.75 + 0) / 4)
    assert f.cost_per_sample_usd.value == pytest.approx((0.0055 + 0.01 + (0.25 * 0.01 + 0.75 * 0.003) + 0.004) / 4)
    assert f.share["A"] == pytest.approx((0.5 + 1 + 0.25 + 0) / 4)


def test_baselines_choose_on_train_and_score_on_test():
    # On train (s0, s1) A is right twice, B once; B is cheaper. On test (s2, s3) only B is ever right.
    out = routing.baselines(POOL, [0, 1], [2, 3], bounds=BOUNDS)
    assert out["strongest"][0] == "Strongest on train (A)" and out["strongest"][1].accuracy.value == 0
    assert out["cheapest"][0] == "Cheapest on train (B)" and out["cheapest"][1].accuracy.value == pytest.approx(0.5)
    assert out["oracle"][1].accuracy.value == pytest.approx(0.5)
    assert out["oracle"][1].cost_per_sample_usd.value == pytest.approx((0.003 + 0.004) / 2)
    assert out["random"][1].accuracy.value == pytest.approx(0.25)
    assert out["random"][1].cost_per_sample_usd.value == pytest.approx((0.01 + 0.003 + 0.01 + 0.004) / 4)


def test_knn_router_follows_the_nearest_train_questions():
    uids = [f"s{i}" for i in range(6)]
    questions = ["count the apples", "count the red apples", "read the chart value", "read the chart axis",
                 "count apples here", "read this chart"]
    q = {"A": {"s0": True, "s1": True, "s4": True}, "B": {"s2": True, "s3": True, "s5": True}}
    pool = routing.Pool.build(["A", "B"], uids, q, {"A": dict.fromkeys(uids, 1.0), "B": dict.fromkeys(uids, 1.0)})
    probs = knn_probs(pool, questions, [0, 1, 2, 3], [4, 5], k=2)
    assert probs.tolist() == [[1, 0], [0, 1]]


def test_library_imports_no_django():
    code = ("import sys, evaluation.metrics.routing, evaluation.metrics.routing_knn;"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('django','celery','annotation','leaderboard','routers')];"
            "print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_per_domain_shares_and_per_sample_outcomes():
    probs = routing.probs_matrix(POOL, [{"A": 1}, {"B": 1}, {"A": 1, "B": 1}, {"B": 1}])
    f = routing.score(POOL, ROWS, probs, bounds=BOUNDS, domains=["x", "x", "y", "y"])
    assert f.share_by_domain == {"x": {"A": 0.5, "B": 0.5}, "y": {"A": 0.25, "B": 0.75}}
    assert f.accuracy_by_domain == {"x": 0.5, "y": 0.25}
    assert f.per_sample == [1.0, 0.0, 0.5, 0.0]


def test_paired_tests():
    # One pick each: exact McNemar on the discordant samples (3 right only for A, 0 only for B).
    t = routing.paired_test([1, 1, 1, 0, 1], [0, 0, 0, 0, 1])
    assert t.discordant == (3, 0) and t.p_value == pytest.approx(2 / 8) and not t.significant
    # Probabilities: a paired bootstrap of the mean difference.
    better = [0.9] * 40
    worse = [0.1] * 40
    t = routing.paired_test(better, worse)
    assert t.statistic == pytest.approx(0.8) and t.significant and t.p_value == 0
    t = routing.paired_test([0.5, 0.6, 0.4, 0.5], [0.5, 0.4, 0.6, 0.5])
    assert not t.significant and t.interval.low < 0 < t.interval.high


def _random_pool(n_samples: int, n_models: int, seed: int) -> routing.Pool:
    """Costs drawn from a few values, so that equal costs among correct models (ties) are common."""
    import random

    rng = random.Random(seed)
    models = [f"m{j:02d}" for j in range(n_models)]
    samples = [f"s{i}" for i in range(n_samples)]
    correct = {m: {s: rng.random() < 0.4 for s in samples} for m in models}
    cost = {m: {s: rng.choice([0.001, 0.002, 0.004]) for s in samples} for m in models}
    return routing.Pool.build(models, samples, correct, cost)


def _oracle_by_sorting(pool: routing.Pool, rows: list[int]) -> list[int]:
    """The Oracle's rule read literally: correct first, then the cheaper, then the first name."""
    return [min(range(len(pool.models)), key=lambda j: (-pool.correct[i, j], pool.cost[i, j], j)) for i in rows]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_oracle_is_the_cheapest_correct_model_with_ties_to_the_first_name(seed):
    pool = _random_pool(60, 7, seed)
    rows = list(range(5, 60))
    assert routing.oracle_probs(pool, rows).argmax(axis=1).tolist() == _oracle_by_sorting(pool, rows)
    assert routing.oracle_probs(pool, []).shape == (0, 7)


@pytest.mark.parametrize("seed", [1, 2])
def test_each_model_alone_scores_as_the_general_scorer_routed_to_it(seed):
    """The pool's build scores each model alone in linear time (single_model_scores): every figure equals the
    general scorer's with all picks on that model, the zero shares left out (as the build stores them)."""
    pool = _random_pool(40, 6, seed)
    rows = list(range(10, 40))
    domains = [("art", "maps", "text")[i % 3] for i in rows]
    bounds = routing.pool_bounds(pool, rows)
    fast = routing.single_model_scores(pool, rows, bounds=bounds, domains=domains)
    assert list(fast) == list(pool.models)
    for m in pool.models:
        slow = routing.score(pool, rows, routing.single_model_probs(pool, m, len(rows)), bounds=bounds,
                             domains=domains).as_dict()
        slow["share"] = {k: v for k, v in slow["share"].items() if v}
        slow["share_by_domain"] = {d: {k: v for k, v in s.items() if v} for d, s in slow["share_by_domain"].items()}
        assert fast[m].as_dict() == slow, m
