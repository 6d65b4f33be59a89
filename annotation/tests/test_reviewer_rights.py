"""A reviewer sees the test gold of the items under review, one page at a time; exports of test
answers are for staff and the benchmark's admins (docs/security.md)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation, AnnotationStatus, Benchmark, Role, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from annotation.tests.workbench_helpers import make_user
from tests.confidential import gold_in, mark_test_gold

SPLITS = {"d0": "dev", "t1": "test", "t2": "test"}


@pytest.fixture
def bench(db, tmp_path) -> Benchmark:
    lines = [sample_line(uid, split=split, answer=f"{i + 1}") for i, (uid, split) in enumerate(SPLITS.items())]
    benchmark_import(path=write_benchmark(tmp_path, lines), slug="rights")
    benchmark = Benchmark.objects.get(slug="rights")
    mark_test_gold(benchmark)
    return benchmark


@pytest.fixture
def clients(bench) -> dict[str, Client]:
    users = {"ann": make_user("ann", bench, Role.ANNOTATOR), "rev": make_user("rev", bench, Role.REVIEWER),
             "admin": make_user("badmin", bench, Role.ADMIN), "staff": make_user("staffer")}
    users["staff"].is_staff = users["staff"].is_superuser = True
    users["staff"].save()
    out = {}
    for name, user in users.items():
        out[name] = Client()
        out[name].force_login(user)
    return out


def _sample(uid: str) -> Sample:
    return Sample.objects.get(benchmark__slug="rights", uid=uid)


def _zip_uids(response) -> list[str]:  # noqa: ANN001
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as zf:
        return [json.loads(line)["uid"] for line in zf.read("benchmark.jsonl").decode().splitlines()]


def test_a_reviewers_exports_hold_the_dev_split_only(clients) -> None:
    zip_url, coco_url = reverse("annotation:export_zip", args=["rights"]), reverse("annotation:export_coco", args=["rights"])
    reviewer = clients["rev"].get(zip_url)
    assert reviewer.status_code == 200 and "rights-dev.zip" in reviewer["Content-Disposition"]
    assert _zip_uids(reviewer) == ["d0"]
    coco = clients["rev"].get(coco_url).json()
    assert [i["uid"] for i in coco["images"]] == ["d0"]
    for who in ("admin", "staff"):
        assert _zip_uids(clients[who].get(zip_url)) == ["d0", "t1", "t2"], who
        assert [i["uid"] for i in clients[who].get(coco_url).json()["images"]] == ["d0", "t1", "t2"], who
    page = clients["rev"].get(reverse("annotation:review_list", args=["rights"])).content.decode()
    assert 'id="dev-only-exports"' in page


def test_a_test_sample_nobody_annotated_is_closed_to_a_reviewer(clients) -> None:
    t1 = _sample("t1")
    url, image = reverse("annotation:review_sample", args=[t1.pk]), reverse("annotation:preview", args=[t1.pk])
    refused = clients["rev"].get(url)
    assert refused.status_code == 404 and gold_in(refused.content.decode()) == []
    assert clients["rev"].get(image).status_code == 403
    for who in ("admin", "staff"):
        page = clients[who].get(url)
        assert page.status_code == 200 and "GOLD-ANSWER-t1" in gold_in(page.content.decode()), who
    d0 = _sample("d0")  # dev samples are public with their answers
    assert clients["rev"].get(reverse("annotation:review_sample", args=[d0.pk])).status_code == 200


def test_a_reviewer_sees_the_gold_of_a_test_item_under_review(clients, bench) -> None:
    from django.contrib.auth import get_user_model

    t1 = _sample("t1")
    Annotation.objects.create(sample=t1, annotator=get_user_model().objects.get(username="ann"),
                              status=AnnotationStatus.SUBMITTED, answer="7")
    page = clients["rev"].get(reverse("annotation:review_sample", args=[t1.pk]))
    assert page.status_code == 200 and "GOLD-ANSWER-t1" in gold_in(page.content.decode())  # the imported column
    assert clients["rev"].get(reverse("annotation:preview", args=[t1.pk])).status_code == 200
    # Still not the other test sample, nor t2's gold anywhere on this page.
    assert clients["rev"].get(reverse("annotation:review_sample", args=[_sample("t2").pk])).status_code == 404
    assert not [g for g in gold_in(page.content.decode()) if "t2" in g]
