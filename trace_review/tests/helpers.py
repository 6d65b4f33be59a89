"""Fixtures for trace review: the leaderboard's hand-made benchmark scored through the real pipeline,
and people with roles on it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from annotation.models import Benchmark, Role
from annotation.workbench.access import role_grant
from evaluation.models import Submission
from leaderboard.tests import helpers as lb

PASSWORD = "pw-for-tests-1"


def make_user(username: str, benchmark: Benchmark | None = None, *roles: str, **extra: object):
    user = get_user_model().objects.create_user(username, password=PASSWORD, **extra)
    for role in roles:
        role_grant(benchmark=benchmark, user=user, role=role)
    return user


@dataclass
class World:
    benchmark: Benchmark
    alpha: Submission  # tools on s1, s3, s6, s7, s8 in the adaptive mode
    beta: Submission  # tools on s1, s4


def make_world(folder: Path) -> World:
    benchmark = lb.make_benchmark(folder)
    return World(benchmark, lb.submit(benchmark, lb.ALPHA), lb.submit(benchmark, lb.BETA))


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world(db, tmp_path) -> World:
    return make_world(tmp_path / "bench")


@pytest.fixture
def people(world):
    b = world.benchmark
    return {
        "a1": make_user("a1", b, Role.ANNOTATOR), "a2": make_user("a2", b, Role.ANNOTATOR),
        "a3": make_user("a3", b, Role.ANNOTATOR), "rev": make_user("rev", b, Role.REVIEWER),
        "admin": make_user("badmin", b, Role.ADMIN), "outsider": make_user("outsider"),
        "staff": make_user("staffer", None, is_staff=True),
    }
