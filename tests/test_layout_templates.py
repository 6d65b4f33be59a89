"""Every table of the product sits in a .table-wrap (docs/layout.md): the box that scrolls it sideways
on a narrow screen, so the page never does, and that keeps its header row and first column in view.
The browser test (tests/test_layout_browser.py) checks the pages it walks; this checks every template,
so a table added to a page the walk does not reach is caught too."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WRAP = re.compile(r'<div class="table-wrap[^"]*"[^>]*>\s*$')


def outermost_tables(text: str) -> list[int]:
    """Where each table that is not inside another table starts."""
    starts, depth = [], 0
    for tag in re.finditer(r"<table\b|</table>", text):
        if tag.group() == "</table>":
            depth -= 1
        else:
            if depth == 0:
                starts.append(tag.start())
            depth += 1
    return starts


def test_every_table_in_every_template_is_in_a_table_wrap() -> None:
    templates = [p for p in ROOT.glob("**/templates/**/*.html") if ".venv" not in p.parts]
    assert len(templates) > 30
    bare = []
    n = 0
    for path in templates:
        text = path.read_text(encoding="utf-8")
        for start in outermost_tables(text):
            n += 1
            if not WRAP.search(text[:start]):
                bare.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, start) + 1}")
    assert n >= 40
    assert not bare, "tables outside a <div class=\"table-wrap\">: " + ", ".join(bare)


def test_the_checker_sees_a_bare_table_and_leaves_a_nested_one_alone() -> None:
    page = '<div class="table-wrap">\n<table><tr><td><table class="inner"></table></td></tr></table>\n</div><table></table>'
    starts = outermost_tables(page)
    assert len(starts) == 2
    assert WRAP.search(page[:starts[0]]) and not WRAP.search(page[:starts[1]])
