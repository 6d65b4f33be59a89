"""A hand-built pool: 20 samples, three priced public models whose right answers and costs are set
by hand per sample, plus models that must stay out of the pool (private, unpriced, failed)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.utils import timezone

from annotation.models import Benchmark, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from evaluation.models import PredictionResult, Submission

SLUG = "routed"
UIDS = [f"q{i:02d}" for i in range(20)]
# Questions in two families, so a nearest-neighbour router can tell them apart by words.
QUESTIONS = {u: (f"How many red apples are on the table in picture {u}?" if i % 2 == 0
                 else f"What number is written on the chart axis label {u}?") for i, u in enumerate(UIDS)}
# model: (cost per sample, samples it answers right). Apples (even) are Big's and Small's, charts Mid's.
MODELS = {
    "Big": (0.010, {u for i, u in enumerate(UIDS) if i % 2 == 0 or i % 3 == 0 or i % 5 == 0}),
    "Mid": (0.002, {u for i, u in enumerate(UIDS) if i % 2 == 1}),
    "Small": (0.0005, {u for i, u in enumerate(UIDS) if i % 2 == 0 and i % 4 == 0}),
}


def make_benchmark(folder: Path, slug: str = SLUG) -> Benchmark:
    lines = [sample_line(u, question=QUESTIONS[u], domain="real_world" if i % 2 == 0 else "ocr",
                         category="counting" if i % 2 == 0 else "chart")
             for i, u in enumerate(UIDS)]
    benchmark_import(path=write_benchmark(folder, lines), slug=slug)
    return Benchmark.objects.get(slug=slug)


def user(name: str = "rita", **extra: object):  # noqa: ANN201
    return get_user_model().objects.create_user(name, password="pw-routers-1", **extra)


def add_model(benchmark: Benchmark, name: str, cost: float | None, right: set[str], *, owner=None,  # noqa: ANN001
              public: bool = True, status: str = "done", mode: str = "text") -> Submission:
    sub = Submission.objects.create(
        benchmark=benchmark, owner=owner or get_user_model().objects.get_or_create(username="modeller")[0],
        model_name=name, is_public=public, status=status, file=ContentFile(b"{}", name="p.jsonl"),
        results={"modes": {}}, finished_at=timezone.now(), scored_at=timezone.now())
    PredictionResult.objects.bulk_create([
        PredictionResult(submission=sub, sample=s, mode=mode, correct=s.uid in right, decided_by="rule", cost_usd=cost)
        for s in Sample.objects.filter(benchmark=benchmark, aux_line=False)])
    return sub


def make_pool(folder: Path) -> Benchmark:
    benchmark = make_benchmark(folder)
    for name, (cost, right) in MODELS.items():
        add_model(benchmark, name, cost, right)
    add_model(benchmark, "Hidden", 0.0001, set(UIDS), public=False)  # private: not in the pool
    add_model(benchmark, "Unpriced", None, set(UIDS))  # no cost: not in the pool
    add_model(benchmark, "Broken", 0.0001, set(UIDS), status="failed")
    return refreshed(benchmark)


def trained(benchmark: Benchmark) -> Benchmark:
    """The pool's refresh, then the reference router's training as the worker runs it when its message
    arrives (a test's transaction never reaches the on-commit send): its row joins the board."""
    from routers.models import RouterReference
    from routers.services import router_reference_compute

    refreshed(benchmark)
    for pk in RouterReference.objects.filter(track__benchmark=benchmark, status="queued").values_list("pk", flat=True):
        router_reference_compute(reference_id=pk)
    return benchmark


def sends(callbacks: list) -> list:
    """The on-commit callbacks that send a router task: those of the results' bump (``refreshed``) left out."""
    return [c for c in callbacks if "benchmark_results_bump" not in c.__qualname__]


def refreshed(benchmark: Benchmark) -> Benchmark:
    """A change to the public results, then what the worker does on its commit: every derived kind's refresh
    (the router pool's among them). Pages only read what it built."""
    from evaluation.queueing import results_changed_run
    from evaluation.services import benchmark_results_bump

    benchmark_results_bump(benchmark_id=benchmark.pk)
    benchmark.refresh_from_db(fields=["results_version"])
    results_changed_run(benchmark_id=benchmark.pk)
    return benchmark
