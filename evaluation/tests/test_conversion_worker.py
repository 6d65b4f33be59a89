"""Author-format files converted by a REAL worker process (PostgreSQL and Redis in CI): the
upload answers before any conversion, the worker converts and scores, or fails with the rows."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from evaluation import services
from evaluation.models import PredictionResult, Submission
from evaluation.tests import author_shapes as shapes
from evaluation.tests.submission_helpers import UIDS, answer_of, make_benchmark, upload
from evaluation.tests.test_worker_integration import start_worker, status_of, wait_for  # noqa: F401 (fixture)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_converts_vtcbench_results_and_scores_them_and_fails_a_bad_agentx_file_with_its_items(
        tmp_path, start_worker) -> None:  # noqa: F811
    bench = make_benchmark(tmp_path)
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    preds = shapes.generate(UIDS, {u: answer_of(u) for u in UIDS}, seed=3)
    good = services.submission_create(benchmark=bench, owner=owner, model_name="agent", enforce_limits=False,
                                      file=upload(shapes.vtcbench_results(preds), "results_1.jsonl"),
                                      file_format="vtcbench")
    bad = services.submission_create(benchmark=bench, owner=owner, model_name="x", enforce_limits=False,
                                     file=upload(b'[{"s1": {"reasoning_steps": 7}}]', "outputs.json"),
                                     file_format="agentx")
    assert status_of(good) == status_of(bad) == "queued" and not good.file  # nothing converted in the request
    worker = start_worker()
    wait_for(lambda: status_of(good) == "done" and status_of(bad) == "failed", worker, "done and failed")
    good.refresh_from_db()
    bad.refresh_from_db()
    assert good.file.name.endswith(".jsonl") and good.file.name != good.source_file.name
    assert PredictionResult.objects.filter(submission=good, mode="adaptive").count() == len(UIDS)
    right = sum(p.answer == answer_of(p.uid) for p in preds)
    assert good.results["modes"]["adaptive"]["accuracy"]["overall"]["count"] == right
    assert [(e["where"], e["field"]) for e in bad.errors] == [("item 1", "s1.reasoning_steps")]
    assert Submission.objects.filter(status="failed").count() == 1
