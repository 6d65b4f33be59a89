"""The admin's lists of the tables that grow with use (evaluation/admin.py ``LargeTableAdmin``): the audit
timed them at 33-45 s. A page makes as many queries with 40 rows as with 4, reads no wide column it does not
show, counts the table once, and pages the prediction results by their primary key."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Sample
from evaluation.models import PredictionResult, Submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):  # noqa: ANN201
    client.force_login(get_user_model().objects.create_user("root", is_staff=True, is_superuser=True))
    return client


def _add(bench, n: int) -> None:  # noqa: ANN001
    samples = list(Sample.objects.filter(benchmark=bench))
    for i in range(n):
        owner = get_user_model().objects.create_user(f"owner{Submission.objects.count()}")
        sub = Submission.objects.create(benchmark=bench, owner=owner, model_name=f"m{i}", status="done",
                                        file=ContentFile(b"{}", name="p.jsonl"),
                                        results={"modes": {"text": {"accuracy": {"all": [1, 2]}}}, "pad": "x" * 5000})
        PredictionResult.objects.bulk_create([PredictionResult(submission=sub, sample=s, mode="text", correct=True,
                                                               decided_by="rule", calls=[{"name": "crop"}] * 20)
                                              for s in samples])


def _page(client, url: str) -> tuple[int, list[str]]:  # noqa: ANN001
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries), [q["sql"] for q in ctx.captured_queries]


@pytest.mark.parametrize("url", ["/admin/evaluation/submission/", "/admin/evaluation/predictionresult/",
                                 "/admin/evaluation/judgeverdict/"])
def test_an_admin_list_makes_as_many_queries_with_40_rows_as_with_4(staff, bench, url) -> None:
    _add(bench, 4)
    at_4, _ = _page(staff, url)
    _add(bench, 36)
    at_40, sqls = _page(staff, url)
    assert at_40 == at_4
    assert sum("COUNT(" in q.upper() for q in sqls) <= 1  # the filtered count only, not the whole table's too


def test_the_lists_read_no_wide_column_and_page_results_by_their_key(staff, bench) -> None:
    _add(bench, 3)
    _, sqls = _page(staff, "/admin/evaluation/submission/")
    listing = next(q for q in sqls if q.startswith('SELECT "evaluation_submission"."id"'))
    assert '"results"' not in listing and '"errors"' not in listing
    _, sqls = _page(staff, "/admin/evaluation/predictionresult/")
    listing = next(q for q in sqls if q.startswith('SELECT "evaluation_predictionresult"."id"'))
    assert '"calls"' not in listing and "JOIN" not in listing.upper()
    assert 'ORDER BY "evaluation_predictionresult"."id" DESC' in listing
    # the change form still shows everything
    sub = Submission.objects.first()
    assert "x" * 100 in staff.get(f"/admin/evaluation/submission/{sub.pk}/change/").content.decode()
