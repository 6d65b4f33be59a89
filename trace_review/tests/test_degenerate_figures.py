"""Kappa and alpha on data where every rating is one class: 0/0 by their definitions, so the page says
"undefined" instead of printing 1.000 (which reads as perfect agreement beyond chance)."""

from __future__ import annotations

import re

from django.urls import reverse

from evaluation.models import PredictionResult
from trace_review import selectors
from trace_review.models import HumanVerdict
from trace_review.tests.test_agreement_pages import _answer, judged  # noqa: F401 - the fixture

UNDEFINED = "undefined (all ratings agree on one class)"


def _answer_row(html: str) -> str:
    return re.search(r'<tr id="offline-answer".*?</tr>\s*</table></td>\s*</tr>', html, re.S).group(0)


def test_all_ratings_in_one_class_show_undefined_not_one(judged, client) -> None:  # noqa: F811
    PredictionResult.objects.update(correct=True)
    HumanVerdict.objects.update(answer_correct=True)
    a = _answer(selectors.agreement_page(everything=True))
    assert a.kappa.degenerate and a.human_alpha.degenerate  # the library's flag (its value stays 1.0)
    row = _answer_row(client.get(reverse("trace_review:agreement")).content.decode())
    kappa = re.search(r'<td class="num kappa">(.*?)</td>', row, re.S).group(1)
    assert UNDEFINED in kappa and "1.000" not in kappa and "[" not in kappa  # no number, no interval
    assert row.count(UNDEFINED) == 2  # kappa, and the people's alpha beside it
    ceiling = re.search(r'<tr data-kind="answer">.*?</tr>', client.get(reverse("trace_review:agreement"))
                        .content.decode(), re.S).group(0)
    assert UNDEFINED in ceiling and "1.000" not in ceiling


def test_ordinary_data_still_shows_the_number(judged, client) -> None:  # noqa: F811
    row = _answer_row(client.get(reverse("trace_review:agreement")).content.decode())
    assert "0.400" in row and UNDEFINED not in row
