"""Paging of the public tables: 50 rows a page and a window of page links, so that no page grows with
the board (the overview pages in SQL, ``selectors.overview``; the wide tabs page their computed rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

from leaderboard.board import PAGE_SIZE

T = TypeVar("T")


def page_number(params: Any) -> int:
    """The ``page`` parameter as a number from 1 (anything else: 1)."""
    try:
        return max(1, int(params.get("page", 1)))
    except (TypeError, ValueError):
        return 1


def page_window(current: int, pages: int, around: int = 2) -> list[int]:
    """Page links to show: the first, the last and ``around`` either side of the current one, 0 for a gap.

    A link per page made the page (cached or not) grow with the board: 200 links at 10,000 entries."""
    keep = sorted({1, pages, *range(max(1, current - around), min(pages, current + around) + 1)})
    out: list[int] = []
    for n in keep:
        if out and n > out[-1] + 1:
            out.append(0)
        out.append(n)
    return out


def page_rows(rows: Sequence[T], params: Any, base: str, size: int = PAGE_SIZE) -> tuple[list[T], dict[str, Any]]:
    """One page of a wide tab's rows (``size`` a page, as on the overview) and its pager's context
    (``pages``: the links, ``shown``: which rows of how many; the template ``tabs/_pager.html``).

    The whole table is computed (its marks of the best per column and its tests are the whole board's),
    then only the page's rows are rendered: the page's size is the same with 100 or 10,000 entries.
    ``params`` are the tab's known parameters; the page links keep the others (a sort, a unit)."""
    start, pager = page_of(len(rows), params, base, size)
    return list(rows[start:start + size]), pager


def page_of(total: int, params: Any, base: str, size: int = PAGE_SIZE) -> tuple[int, dict[str, Any]]:
    """Where the page ``params`` asks for starts among ``total`` rows, and its pager's context (``page_rows``
    for rows read a page at a time: the Cost & Pareto tab's stored points)."""
    pages = max(1, -(-total // size))
    number = min(page_number(params), pages)
    start = (number - 1) * size
    kept = {k: v for k, v in params.items() if k != "page"}

    def url(n: int) -> str:
        query = {**kept, **({"page": str(n)} if n > 1 else {})}
        return f"{base}?{urlencode(query)}" if query else base

    links = [{"number": n, "url": url(n), "current": n == number} if n else {"gap": True}
             for n in page_window(number, pages)] if pages > 1 else []
    shown = {"first": start + 1, "last": min(start + size, total), "total": total} if pages > 1 else None
    return start, {"pages": links, "shown": shown}
