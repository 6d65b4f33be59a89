"""What the readers share: converting one cell with a line-and-field message, options as
letter columns, choice answers, cells kept in `meta`."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from annotation.releases.encoded import EMPTY_SPELLINGS, Unreadable, is_blank

LETTER_COLUMN = re.compile(r"^[A-Z]$")


def convert(
    errors: list[tuple[str, str]], field: str, parse: Callable[[Any], Any], value: Any, *, quote: bool = True
) -> Any:
    """`parse(value)`, or None after noting (field, what was wrong and the start of the value).

    `quote=False` for media, whose message names the file itself (a cell of bytes says nothing)."""
    try:
        return parse(value)
    except Unreadable as exc:
        errors.append((field, f"cannot read {preview(value)}: {exc}" if quote else str(exc)))
        return None


def preview(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def text(value: Any) -> str | None:
    """A cell as text: None for an empty cell; 3.0 read back from a table as '3'."""
    if is_blank(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def empty_word_errors(row: dict, fields: dict[str, str]) -> list[tuple[str, str]]:
    """A required cell that reads `None`, `null` or `NaN` (pandas and Python write an empty value so) is
    empty to every reader of these tables: say so, rather than only "missing". Spelled otherwise (`Nan`,
    a name) it is text, as it is to pandas. `fields`: column -> our field."""
    found = []
    for column, ours in fields.items():
        value = row.get(column)
        if isinstance(value, str) and value.strip() in EMPTY_SPELLINGS:
            message = f"the cell reads {value.strip()!r}, which is read as empty; {ours} is required (write the value itself)"
            found.append((column, message))
    return found


def letter_columns(row: dict, columns: list[str]) -> dict[str, str] | None:
    """Options as columns A, B, C, ...: an empty or NaN cell is an absent option."""
    options = {c: str(row[c]).strip() for c in sorted(c for c in columns if LETTER_COLUMN.match(c)) if not is_blank(row.get(c))}
    return options or None


def choice_answer(answer: str | None, options: dict[str, str] | None) -> str | None:
    """A choice answer written as the option's text, or as "(B)" / "B.", becomes its letter."""
    if answer is None or not options:
        return answer
    stripped = answer.strip().strip("().:").strip()
    if stripped.upper() in options and len(stripped) == 1:
        return stripped.upper()
    for letter, option in options.items():
        if option.strip().casefold() == answer.strip().casefold():
            return letter
    return answer


def json_safe(value: Any) -> Any:
    """A cell for `meta`: NaN becomes null, bytes are left out (they are media)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, bytes):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
