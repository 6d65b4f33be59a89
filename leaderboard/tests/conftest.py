from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotation.models import Benchmark
from evaluation.models import Submission
from leaderboard.tests import helpers


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@dataclass
class Board:
    benchmark: Benchmark
    alpha: Submission
    beta: Submission
    gamma: Submission
    private: Submission
    deleted: Submission


@pytest.fixture
def hand(db, tmp_path) -> Board:
    benchmark = helpers.make_benchmark(tmp_path / "bench")
    # One refresh after the last submission builds what a refresh after each would (it reads the whole board).
    alpha = helpers.submit(benchmark, helpers.ALPHA, refresh=False)
    beta = helpers.submit(benchmark, helpers.BETA, refresh=False)
    gamma = helpers.submit(benchmark, helpers.GAMMA, refresh=False)
    private = helpers.submit(benchmark, helpers.ModelSpec("Hidden", {"text": helpers.UIDS}), public=False, refresh=False)
    deleted = helpers.submit(benchmark, helpers.ModelSpec("Gone", {"text": helpers.UIDS}))
    Submission.objects.filter(pk=deleted.pk).update(deleted_at=timezone.now(), is_public=False)
    return Board(benchmark, alpha, beta, gamma, private, deleted)
