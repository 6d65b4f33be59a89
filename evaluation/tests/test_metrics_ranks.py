"""Honest ranks: rank intervals from each entry's own bootstrap interval, neighbour McNemar tests and tie groups
(metrics.md section 8)."""

import random

import numpy as np

from evaluation.metrics import (
    Bounds,
    entry_bounds,
    entry_bounds_mcc,
    intervals_from_bounds,
    mcnemar_exact,
    neighbour_mcnemar,
    rank_intervals,
    rank_intervals_mcc,
    shared_ranks,
)
from evaluation.metrics.mode_selection import FN, FP, TN, TP


def _board(seed: int = 5, m: int = 12, n: int = 60) -> list[list[bool]]:
    rng = random.Random(seed)
    return [[rng.random() < 0.2 + 0.6 * i / m for _ in range(n)] for i in range(m)][::-1]  # best first


def test_a_model_right_everywhere_ranks_first_in_every_resample() -> None:
    board = [[True] * 40, [True] * 20 + [False] * 20, [False] * 40]
    got = rank_intervals(board)
    assert [(r.low, r.high) for r in got] == [(1, 1), (2, 2), (3, 3)]


def test_identical_models_share_a_rank_interval_that_reaches_both_places() -> None:
    row = [True, False] * 20
    assert [(r.low, r.high) for r in rank_intervals([row, row, [False] * 40])] == [(1, 2), (1, 2), (3, 3)]


def test_rank_intervals_are_counted_from_hand_made_bounds_with_ties_and_an_entry_without_one() -> None:
    """low = 1 + entries whose lower bound is strictly above this upper bound; high = entries (itself too)
    whose upper bound is not below this lower bound; an entry without bounds is neither ranked nor counted."""
    bounds = [Bounds(0.80, 0.90), Bounds(0.70, 0.85), Bounds(0.70, 0.85), None, Bounds(0.60, 0.70),
              Bounds(0.10, 0.20)]
    got = intervals_from_bounds(bounds)
    assert got[3] is None  # not available, never a rank of 0
    assert [(r.low, r.high) for r in got if r is not None] == [
        (1, 3),  # nobody lies above 0.90; 0.90, 0.85 and 0.85 reach 0.80
        (1, 4),  # 0.80 is not above 0.85; four upper bounds reach 0.70 (0.70 itself: "not below")
        (1, 4),  # a tie: the same interval, the same rank interval
        (2, 4),  # 0.80 > 0.70, and 0.70 = 0.70 is not strictly above; four reach 0.60
        (5, 5),  # all four above; only itself reaches 0.10
    ]
    assert intervals_from_bounds([]) == []


def test_an_entrys_own_interval_is_the_central_95_percent_of_its_statistic_over_the_seeded_resamples() -> None:
    board = _board()
    got = entry_bounds(board)
    n = len(board[0])
    draws = np.random.default_rng(20260101).multinomial(n, np.full(n, 1.0 / n), size=1000)
    acc = draws @ np.array(board, dtype=float).T
    want = [(np.percentile(acc[:, i], 2.5, method="lower") / n, np.percentile(acc[:, i], 97.5, method="higher") / n)
            for i in range(len(board))]
    assert [(b.low, b.high) for b in got] == want
    # It depends on the entry alone: the same computed on its own, or on a board of other entries.
    assert [entry_bounds([row])[0] for row in board] == got
    assert entry_bounds(board[3:5]) == got[3:5]
    # ... and the rank intervals are the counts over those bounds.
    lows, highs = [b.low for b in got], [b.high for b in got]
    ivs = rank_intervals(board)
    assert [(r.low, r.high) for r in ivs] == [(1 + sum(lo > h for lo in lows), sum(hi >= lo for hi in highs))
                                               for lo, h in zip(lows, highs)]
    assert all(r.low <= r.high and r.resamples == 1000 for r in ivs)


def test_rank_intervals_by_mcc_put_a_perfect_selector_first() -> None:
    perfect = [TP, TN] * 20  # tools exactly when needed
    backwards = [FN, FP] * 20
    mixed = [TP, FP, TN, FN] * 10
    got = rank_intervals_mcc([mixed, perfect, backwards])
    assert (got[1].low, got[1].high) == (1, 1) and (got[2].low, got[2].high) == (3, 3)
    assert rank_intervals_mcc([perfect, [-1] * 40])[1].low == 2  # no known sample: MCC 0, below
    assert entry_bounds_mcc([perfect])[0] == Bounds(1.0, 1.0) and entry_bounds_mcc([mixed, perfect])[1] == Bounds(1.0, 1.0)


def test_neighbour_mcnemar_is_the_pairwise_exact_test() -> None:
    board = _board(m=8)
    got = neighbour_mcnemar(board)
    assert got[0] is None
    for i in range(1, len(board)):
        assert got[i] == mcnemar_exact(board[i - 1], board[i])


def test_shared_ranks_start_a_group_at_each_significant_step() -> None:
    assert shared_ranks([None, False, True, False, None, True]) == [1, 1, 3, 3, 3, 6]
    assert shared_ranks([]) == []


def test_the_boards_stored_strings_and_entry_blocks_give_the_same_ranks(monkeypatch) -> None:
    """The board passes its stored "0"/"1" strings (one byte a cell) and the statistics are widened a
    block of entries at a time: neither may change a rank, whatever the block size."""
    from evaluation.metrics import ranks

    board = _board(m=11)
    strings = ["".join("1" if c else "0" for c in row) for row in board]
    rng = random.Random(3)
    cells = [[rng.choice((TP, FP, TN, FN, -1)) for _ in range(60)] for _ in range(11)]
    whole = (rank_intervals(board), rank_intervals_mcc(cells), neighbour_mcnemar(board), entry_bounds_mcc(cells))
    monkeypatch.setattr(ranks, "ENTRY_BLOCK", 4)  # 11 entries: blocks of 4, 4 and 3
    assert (rank_intervals(strings), rank_intervals_mcc(cells), neighbour_mcnemar(strings),
            entry_bounds_mcc(cells)) == whole
    assert rank_intervals(board) == whole[0]
    assert len({(r.low, r.high) for r in whole[0]}) > 3  # a board whose entries' intervals differ
