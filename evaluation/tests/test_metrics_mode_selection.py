import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.metrics import confusion, mcc
from evaluation.metrics.mode_selection import FN, FP, TN, TP, cell

# AdaptMMBench Table 1 (seed 000): TP, FP, TN, FN and the MCC printed to two decimals.
TABLE_1 = [
    ("PixelReasoner", 280, 196, 434, 390, "0.11"),
    ("Deepeyes", 662, 638, 0, 0, "0.00"),
    ("Thyme", 20, 20, 655, 605, "0.01"),
    ("PyVision", 540, 405, 231, 124, "0.20"),
    ("Deepeyes v2", 623, 676, 1, 0, "0.03"),
    ("AdaptVision", 385, 279, 375, 261, "0.17"),
    ("Qwen3-vl-8B-Instruct", 328, 381, 351, 240, "0.06"),
    ("Qwen3-vl-32B-Instruct", 348, 646, 245, 61, "0.14"),
    ("Qwen3-vl-235B-Instruct", 286, 437, 487, 90, "0.26"),
    ("GPT-5", 482, 392, 376, 50, "0.41"),
    ("Gemini-3-Pro", 284, 703, 296, 17, "0.24"),
]


@pytest.mark.parametrize("model,tp,fp,tn,fn,printed", TABLE_1)
def test_table_1_mcc_reproduced_to_printed_precision(model: str, tp: int, fp: int, tn: int,
                                                     fn: int, printed: str) -> None:
    assert f"{mcc(tp, fp, tn, fn):.2f}" == printed


def test_gpt5_row_to_three_decimals_as_the_spec_checks() -> None:
    assert f"{mcc(482, 392, 376, 50):.3f}" == "0.414"


def test_no_tool_calls_anywhere_is_not_available_with_the_reason() -> None:
    """An empty column of the matrix: MCC is undefined, not 0.00 [0.00, 0.00] (metrics.md section 14)."""
    cells = [cell(text_correct=c, invoked=False) for c in (True, False, True)]
    conf = confusion(cells)
    assert (conf.tp, conf.fp, conf.tn, conf.fn) == (0, 0, 2, 1)
    assert conf.mcc is None and conf.interval is None
    assert conf.reason == "MCC is undefined: the model never called a tool in adaptive mode"
    assert not math.isnan(mcc(0, 0, 2, 1))  # the bare formula, used inside the bootstrap, stays a number


@pytest.mark.parametrize(("cells", "why"), [
    ([TP, FP], "called a tool on every sample"),
    ([TN, FP], "right on every sample"),
    ([TP, FN], "wrong on every sample"),
])
def test_every_empty_margin_is_not_available(cells: list[int], why: str) -> None:
    conf = confusion(cells)
    assert conf.mcc is None and conf.reason is not None and why in conf.reason


def test_cells_follow_the_labels() -> None:
    assert cell(False, True) == TP and cell(False, False) == FN
    assert cell(True, False) == TN and cell(True, True) == FP
    assert confusion([TP, TN]).mcc == pytest.approx(1.0)
    assert confusion([FP, FN]).mcc == pytest.approx(-1.0)


counts = st.integers(min_value=0, max_value=10_000)


@given(counts, counts, counts, counts)
def test_mcc_bounded_and_symmetric_under_fp_fn_swap(tp: int, fp: int, tn: int, fn: int) -> None:
    value = mcc(tp, fp, tn, fn)
    assert -1.0 <= value <= 1.0
    assert value == mcc(tp, fn, tn, fp)
