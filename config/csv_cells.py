"""Spreadsheet formula injection: a CSV cell of text that begins with ``=``, ``+``, ``-``, ``@``, a tab
or a carriage return is run as a formula when a spreadsheet opens the file. Such a cell gets a
leading single quote (OWASP's "CSV Injection" advice), so the spreadsheet shows it as text.

Only text is escaped: a number written as a number (``-0.5``, an MCC) is not a formula, and must
stay a number for the scripts that read the file. So a writer escapes its cells *before* it
formats its numbers as strings. Every CSV a visitor downloads (docs/security.md) goes through here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` if it is text a spreadsheet would run; anything else as given."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text_row(values: Iterable[Any]) -> list[Any]:
    return [csv_text_cell(v) for v in values]
