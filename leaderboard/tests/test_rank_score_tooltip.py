"""A rank score of 0.0 says why in its tooltip (docs/metrics.md, section 7): the most accurate model is
often the dearest, whose cost sits at the upper bound of the cost range, so its normalised cost is 0."""

from __future__ import annotations

import re

import pytest

from evaluation.metrics import rank_score
from leaderboard import selectors

pytestmark = pytest.mark.django_db


def _rank_cells(html: str) -> dict[str, tuple[str, str]]:
    """model name -> (the rank cell's title, its text), from the overview's rows."""
    out = {}
    for tr in re.findall(r'<tr class="[^"]*" id="row-s\d+".*?</tr>', html, re.S):
        name = re.search(r'<th scope="row" class="model"><a [^>]*>([^<]+)</a>', tr).group(1)
        cell = re.findall(r'<td class="num"( title="[^"]*")?>([^<]*)</td>', tr)[-1]
        out[name] = (cell[0], cell[1])
    return out


def test_a_zero_rank_score_explains_itself_and_others_do_not(client, hand) -> None:
    rows = {r.model_name: r for r in selectors.board_rows(hand.benchmark)}
    priced = {n: r for n, r in rows.items() if r.cost is not None and r.rank_score is not None}
    dearest = max(priced.values(), key=lambda r: r.cost)
    assert dearest.headline.value > 0 and dearest.rank_score == 0  # accurate, but at the upper cost bound
    assert rank_score(dearest.headline.value / 100, dearest.cost, dearest.cost / 2, dearest.cost) == 0

    cells = _rank_cells(client.get("/b/hand/").content.decode())
    title, text = cells[dearest.model_name]
    assert text == "0.0"
    assert "upper bound of the cost range" in title and "whatever its accuracy" in title
    others = [n for n, r in priced.items() if r.rank_score and round(r.rank_score, 1) > 0]
    assert others and all(cells[n][0] == "" for n in others)  # a real score needs no excuse


def test_the_rank_score_header_says_when_it_is_zero(client, hand) -> None:
    html = client.get("/b/hand/").content.decode()
    header = re.search(r'<th scope="col"[^>]*title="([^"]*)">\s*<a [^>]*data-sort="rank"', html).group(1)
    assert "0 for a row whose cost is at the upper bound" in header
