"""Honest ranks: bootstrap rank intervals, neighbour McNemar tests and tie groups (metrics.md section 8)."""

import random

import numpy as np

from evaluation.metrics import (
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


def test_identical_models_share_the_best_rank_in_every_resample() -> None:
    row = [True, False] * 20
    assert [(r.low, r.high) for r in rank_intervals([row, row, [False] * 40])] == [(1, 1), (1, 1), (3, 3)]


def test_rank_intervals_are_the_central_95_percent_of_an_index_bootstrap() -> None:
    board = _board()
    got = rank_intervals(board)
    # The same thing by brute force: draw the samples' counts with the same generator, rank each resample.
    n = len(board[0])
    draws = np.random.default_rng(20260101).multinomial(n, np.full(n, 1.0 / n), size=1000)
    acc = draws @ np.array(board, dtype=float).T
    ranks = np.array([[1 + int((row > v).sum()) for v in row] for row in acc])
    want = [(int(np.percentile(ranks[:, i], 2.5, method="lower")), int(np.percentile(ranks[:, i], 97.5, method="higher")))
            for i in range(len(board))]
    assert [(r.low, r.high) for r in got] == want
    assert got == rank_intervals(board)  # seeded: the same on every run
    assert all(r.low <= r.high and r.resamples == 1000 for r in got)


def test_rank_intervals_by_mcc_put_a_perfect_selector_first() -> None:
    perfect = [TP, TN] * 20  # tools exactly when needed
    backwards = [FN, FP] * 20
    mixed = [TP, FP, TN, FN] * 10
    got = rank_intervals_mcc([mixed, perfect, backwards])
    assert (got[1].low, got[1].high) == (1, 1) and (got[2].low, got[2].high) == (3, 3)
    assert rank_intervals_mcc([perfect, [-1] * 40])[1].low == 2  # no known sample: MCC 0, below


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
    whole = (rank_intervals(board), rank_intervals_mcc(cells), neighbour_mcnemar(board))
    monkeypatch.setattr(ranks, "ENTRY_BLOCK", 4)  # 11 entries: blocks of 4, 4 and 3
    assert (rank_intervals(strings), rank_intervals_mcc(cells), neighbour_mcnemar(strings)) == whole
    assert rank_intervals(board) == whole[0]
    assert len({(r.low, r.high) for r in whole[0]}) > 3  # a board whose entries' intervals differ
