"""leaderboard/exports.py, the public leaderboard.csv: text a spreadsheet would run as a formula is
escaped (config/csv_cells.py), numbers stay numbers (docs/security.md, "Downloaded files")."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.cache import cache

from evaluation.models import Submission
from leaderboard.tests import helpers

pytestmark = pytest.mark.django_db
EVIL = '=HYPERLINK("http://evil.example","x")'
# Right in text where the adaptive run calls tools, and the other way round: a mode-selection MCC below 0.
CONTRARY = helpers.ModelSpec(EVIL, {"text": ("s2", "s4", "s5", "s6", "s8"), "adaptive": ("s2", "s5")},
                             tools=("s2", "s4", "s5", "s6", "s8"))


def test_a_formula_in_a_name_or_organisation_is_text_and_a_negative_figure_a_number(client, tmp_path) -> None:
    cache.clear()
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    sub = helpers.submit(benchmark, CONTRARY)
    Submission.objects.filter(pk=sub.pk).update(organisation="+cmd")
    helpers.submit(benchmark, helpers.BETA)  # a later result: the stored board is built again, "+cmd" and all

    rows = list(csv.DictReader(io.StringIO(client.get("/b/hand/leaderboard.csv").content.decode())))
    evil = next(r for r in rows if "HYPERLINK" in r["model"])
    assert evil["model"] == "'" + EVIL and evil["organisation"] == "'+cmd"
    assert next(r for r in rows if r["model"] == "Beta")["organisation"] == "Beta Lab"  # plain text untouched
    assert evil["mcc"].startswith("-") and float(evil["mcc"]) < 0  # a number, not escaped
    assert not any(cell.startswith(("=", "+", "@")) for r in rows for cell in r.values())
