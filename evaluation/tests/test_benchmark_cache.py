"""The worker's benchmark cache warm-up (evaluation/benchmark_cache.py), in this process."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from evaluation import benchmark_cache, services
from evaluation.models import Submission
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

pytestmark = pytest.mark.django_db


def _submit(bench, owner, *, days_ago: float) -> None:
    sub = services.submission_create(benchmark=bench, owner=owner, file=upload(good_file()), model_name="m",
                                     enforce_limits=False)
    Submission.objects.filter(pk=sub.pk).update(created_at=timezone.now() - timedelta(days=days_ago))


@pytest.fixture
def cache():
    benchmark_cache.prepared_benchmarks.clear()
    yield benchmark_cache.prepared_benchmarks
    benchmark_cache.prepared_benchmarks.clear()


def test_warm_prepares_recently_submitted_benchmarks_most_recent_first(tmp_path, cache, settings) -> None:
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    recent = make_benchmark(tmp_path / "a", slug="recent")
    older = make_benchmark(tmp_path / "b", slug="older")
    stale = make_benchmark(tmp_path / "c", slug="stale")
    make_benchmark(tmp_path / "d", slug="never")
    _submit(older, owner, days_ago=3)
    _submit(recent, owner, days_ago=1)
    _submit(stale, owner, days_ago=40)
    settings.SCORING_WARMUP_DAYS = 30
    assert benchmark_cache.warm() == ["recent", "older"]
    assert set(cache.entries) == {recent.pk, older.pk}
    hits = cache.hits
    cache.get(recent)
    assert cache.hits == hits + 1  # the first submission after the warm-up reads nothing again


def test_warm_stops_at_what_the_cache_holds(tmp_path, cache, monkeypatch) -> None:
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    first = make_benchmark(tmp_path / "a", slug="first")
    second = make_benchmark(tmp_path / "b", slug="second")
    _submit(second, owner, days_ago=2)
    _submit(first, owner, days_ago=1)
    n = first.samples.count()
    monkeypatch.setattr(cache, "MAX_SAMPLES", n)  # room for one: the most recently used
    assert benchmark_cache.warm(days=30) == ["first"]
    assert list(cache.entries) == [first.pk]


def test_a_failed_warm_up_is_logged_and_leaves_the_cache_to_first_use(tmp_path, cache, monkeypatch, caplog) -> None:
    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    bench = make_benchmark(tmp_path / "a", slug="broken")
    _submit(bench, owner, days_ago=1)

    def fail(**_: object) -> None:
        raise RuntimeError("database went away")

    monkeypatch.setattr(benchmark_cache.selectors, "iter_scoring_samples", fail)
    assert benchmark_cache.warm(days=30) == []
    assert "warm-up failed" in caplog.text and not cache.entries


def test_a_ready_worker_sends_one_warm_up_per_pool_process_when_enabled(settings, monkeypatch) -> None:
    from evaluation import tasks

    sent = []
    monkeypatch.setattr(tasks.benchmark_cache_warm, "apply_async", lambda **kw: sent.append(kw))
    consumer = SimpleNamespace(controller=SimpleNamespace(concurrency=2))
    settings.SCORING_WARMUP = False
    tasks._warm_benchmark_cache(sender=consumer)
    assert sent == []
    settings.SCORING_WARMUP = True
    settings.SUBMISSIONS_QUEUE = "q1"
    tasks._warm_benchmark_cache(sender=consumer)
    assert sent == [{"queue": "q1"}, {"queue": "q1"}]


def test_the_warm_up_task_fills_this_process_cache(tmp_path, cache) -> None:
    from evaluation import tasks

    owner = get_user_model().objects.create_user("ada", "ada@example.org", "pw")
    bench = make_benchmark(tmp_path / "a", slug="tasked")
    _submit(bench, owner, days_ago=0)
    tasks.benchmark_cache_warm.delay()  # eager in the unit tests
    assert list(cache.entries) == [bench.pk]
