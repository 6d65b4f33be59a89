"""routers/exports.py, the public routers.csv and the pool's matrices: text a spreadsheet would run as
a formula is escaped (config/csv_cells.py), in the cells and in the header a model's name heads; a
negative figure stays a number."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.base import ContentFile

from evaluation.metrics.routing import split_samples
from routers.services import router_submission_create, router_submission_score
from routers.tests import helpers

pytestmark = pytest.mark.django_db
EVIL = '=HYPERLINK("http://evil.example","x")'
TEST = sorted(u for u, s in split_samples(helpers.UIDS).items() if s == "test")


def test_a_formula_in_a_model_or_router_name_is_text(client, benchmark, django_capture_on_commit_callbacks) -> None:
    helpers.add_model(benchmark, EVIL, 0.001, set(helpers.UIDS[::3]))
    lines = "\n".join(f'{{"sample_id": "{u}", "model": "Mid"}}' for u in TEST)
    sub = router_submission_create(benchmark=benchmark, owner=helpers.user(), name="+cmd", is_public=True,
                                   file=ContentFile(lines.encode(), name="r.jsonl"), enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):  # the pool's refresh; the reference router's task
        helpers.refreshed(benchmark)
    router_submission_score(submission_id=sub.pk)

    rows = list(csv.DictReader(io.StringIO(client.get(f"/b/{helpers.SLUG}/routers.csv").content.decode())))
    names = {r["name"] for r in rows}
    assert "'" + EVIL in names and "'+cmd" in names and "Mid" in names
    assert not any(cell.startswith(("=", "+", "@")) for r in rows for cell in r.values())
    gap = next(r for r in rows if r["name"] == "Small")["oracle_gap_cost_usd"]  # cheaper than the oracle
    assert float(gap) < 0 and gap.startswith("-")  # a number, not escaped

    header = next(csv.reader(io.StringIO(client.get(f"/b/{helpers.SLUG}/routers/matrix/train.csv").content.decode())))
    assert f"'{EVIL}:correct" in header and f"{EVIL}:correct" not in header
