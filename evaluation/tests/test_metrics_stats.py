import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import (
    bootstrap_mcc,
    bootstrap_mean,
    bootstrap_rate,
    mcnemar_exact,
    paired_bootstrap_mcc,
)


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1, max_value=5000), st.data(), st.integers(0, 2**31))
def test_bootstrap_rate_reproducible_and_contains_estimate(n: int, data: st.DataObject,
                                                           seed: int) -> None:
    k = data.draw(st.integers(min_value=0, max_value=n))
    a = bootstrap_rate(k, n, seed=seed)
    b = bootstrap_rate(k, n, seed=seed)
    assert a == b
    assert a is not None and a.low <= k / n <= a.high


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=200))
def test_bootstrap_mean_reproducible_and_contains_estimate(values: list[float]) -> None:
    a, b = bootstrap_mean(values, seed=3), bootstrap_mean(values, seed=3)
    assert a == b
    mean = sum(values) / len(values)
    assert a is not None and a.low - 1e-12 <= mean <= a.high + 1e-12


def test_bootstrap_mean_of_few_values_is_the_index_bootstrap() -> None:
    # Key-step coverage of 600 samples with 3 key steps: 0, 1/3, 2/3 or 1 each. Drawing the
    # counts of the four values must give the distribution index resampling gives.
    values = [0.0] * 150 + [1 / 3] * 90 + [2 / 3] * 60 + [1.0] * 300
    counts = bootstrap_mean(values, seed=5)
    rng = np.random.default_rng(11)
    arr = np.asarray(values)
    by_index = np.percentile(arr[rng.integers(0, arr.size, size=(20_000, arr.size))].mean(axis=1), [2.5, 97.5])
    assert counts is not None and counts.resamples == 1000 and counts.seed == 5
    assert counts.low == pytest.approx(by_index[0], abs=0.006)
    assert counts.high == pytest.approx(by_index[1], abs=0.006)
    assert counts.low < sum(values) / len(values) < counts.high


def test_bootstrap_mean_of_many_distinct_values() -> None:
    values = [i / 999 for i in range(1000)]  # more distinct values than the multinomial path takes
    ci = bootstrap_mean(values, seed=2)
    assert ci is not None and ci.low < 0.5 < ci.high and 0.45 < ci.low and ci.high < 0.55
    assert ci == bootstrap_mean(values, seed=2)
    assert bootstrap_mean(values, seed=2, resample_indices=False) is None  # the scorer's time bound
    one = bootstrap_mean([0.25] * 7)
    assert one is not None and (one.low, one.high) == (0.25, 0.25)


def test_bootstrap_of_nothing_is_none_and_seed_changes_draws() -> None:
    assert bootstrap_rate(0, 0) is None and bootstrap_mcc(0, 0, 0, 0) is None
    assert bootstrap_rate(37, 100, seed=1) != bootstrap_rate(37, 100, seed=2)
    ci = bootstrap_mcc(482, 392, 376, 50)
    assert ci is not None and ci.low < 0.414 < ci.high and ci.resamples == 1000


def test_mcnemar_exact_hand_computed() -> None:
    # 5 discordant pairs: A right/B wrong 5 times, never the reverse: p = 2 * 0.5**5.
    a = [True] * 5 + [True, False]
    b = [False] * 5 + [True, False]
    test = mcnemar_exact(a, b)
    assert test.discordant == (5, 0)
    assert test.p_value == 2 * 0.5**5 and not test.significant  # 0.0625
    a6, b6 = [True] * 6, [False] * 6
    assert mcnemar_exact(a6, b6).p_value == 2 * 0.5**6 and mcnemar_exact(a6, b6).significant
    assert mcnemar_exact(a, a).p_value == 1.0


def test_mcnemar_large_counts_do_not_underflow() -> None:
    a = [True] * 3000 + [False] * 2900
    b = [False] * 3000 + [True] * 2900
    p = mcnemar_exact(a, b).p_value
    assert 0.0 < p < 1.0


def test_paired_bootstrap_mcc_identical_submissions_not_significant() -> None:
    cells = [0] * 30 + [1] * 10 + [2] * 40 + [3] * 20
    same = paired_bootstrap_mcc(cells, cells)
    assert same.statistic == 0.0 and not same.significant
    better = [0] * 50 + [2] * 50  # perfect selection
    diff = paired_bootstrap_mcc(better, cells)
    assert diff.statistic > 0.5 and diff.significant
    assert diff == paired_bootstrap_mcc(better, cells)  # fixed seed: same answer
