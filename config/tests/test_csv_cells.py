"""config/csv_cells.py: which cells a spreadsheet would run, and that numbers are left alone."""

from __future__ import annotations

import pytest

from config.csv_cells import csv_text_cell, csv_text_row


@pytest.mark.parametrize("text", ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"])
def test_text_a_spreadsheet_would_run_gets_a_quote(text: str) -> None:
    assert csv_text_cell(text) == "'" + text


def test_plain_text_and_numbers_are_left_alone() -> None:
    assert csv_text_row(["Alpha", "a=b", -0.5, -3, None, True, ""]) == ["Alpha", "a=b", -0.5, -3, None, True, ""]
