"""Fixtures for the workbench tests: a small imported benchmark, people with roles."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Benchmark, Role, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from annotation.workbench.access import role_grant

PASSWORD = "pw-for-tests-1"


def make_benchmark(folder: Path, *, n: int = 3, size: tuple[int, int] = (200, 100), slug: str = "wb",
                   per_item: int = 2) -> Benchmark:
    lines = [sample_line(f"s{i}", transform=[], regions=[[10, 10, 60, 40]], toolchain=[]) for i in range(n)]
    benchmark_import(path=write_benchmark(folder, lines, size=size), slug=slug)
    benchmark = Benchmark.objects.get(slug=slug)
    benchmark.annotators_per_item = per_item
    benchmark.save(update_fields=["annotators_per_item"])
    return benchmark


def make_user(username: str, benchmark: Benchmark | None = None, *roles: str):  # noqa: ANN201
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    for role in roles:
        role_grant(benchmark=benchmark, user=user, role=role)
    return user


@pytest.fixture
def bench(tmp_path: Path) -> Benchmark:
    return make_benchmark(tmp_path)


@pytest.fixture
def people(bench: Benchmark) -> dict:
    return {
        "ann1": make_user("ann1", bench, Role.ANNOTATOR),
        "ann2": make_user("ann2", bench, Role.ANNOTATOR),
        "ann3": make_user("ann3", bench, Role.ANNOTATOR),
        "rev": make_user("rev", bench, Role.REVIEWER),
        "outsider": make_user("outsider"),
    }


def payload(**overrides: object) -> dict:
    data = {
        "question": "How many squares?", "options": None, "answer": "3", "answer_type": "number",
        "transform": [], "regions": [{"box": [10, 20, 50, 60], "label": ""}],
        "key_steps": [{"text": "Count the squares.", "origin": "human", "verified": True, "note": ""}],
        "toolchain": [],
    }  # fmt: skip
    data.update(overrides)
    return data


def first_sample(bench: Benchmark) -> Sample:
    return Sample.objects.filter(benchmark=bench).order_by("position").first()
