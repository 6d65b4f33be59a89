"""The workbench's demo (annotation/workbench/demo.py): an item needs as many annotations as the demo has
annotators, so the demo's items can complete (with the default of 3 and two demo annotators none ever did)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.tests.workbench_helpers import make_benchmark
from annotation.workbench.demo import DEMO_ROLES, demo_workbench_ensure


@pytest.mark.django_db
def test_the_demo_needs_as_many_annotators_per_item_as_it_has(client, tmp_path) -> None:
    benchmark = make_benchmark(tmp_path, slug="adaptmm-demo", per_item=3)
    for name in DEMO_ROLES:
        get_user_model().objects.create_user(name, password="pw-demo-1")
    demo_workbench_ensure()
    benchmark.refresh_from_db()
    assert benchmark.annotators_per_item == 2  # annotator1 and annotator2
    client.force_login(get_user_model().objects.get(username="annotator1"))
    assert "2 annotators per item" in client.get("/annotate/").content.decode()
