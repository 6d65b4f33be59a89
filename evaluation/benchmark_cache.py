"""The prepared benchmarks of a worker process, and their warm-up when the worker starts.

Scoring a submission needs its benchmark digested into the scorer's shape (``PreparedBenchmark``),
plus the samples' primary keys and uids: for a 30,540-sample benchmark reading and digesting takes
a few seconds, which the first submission after a worker start used to pay. ``prepared_benchmarks``
keeps them per process; ``warm`` builds the ones recently submitted to. A starting worker sends
itself one ``benchmark_cache_warm`` task per pool process (``evaluation/tasks.py``), so the warm-up
runs like any task, in a pool process's main thread, and a submission that arrives meanwhile
waits for it in the queue instead of building the same benchmark a second time. (A background
thread did the same but cost 12-14 MB more peak memory while scoring: glibc gave the thread an
arena of its own.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from annotation.selectors import benchmark_holding
from evaluation import selectors
from evaluation.metrics import PreparedBenchmark

log = logging.getLogger(__name__)


def tool_hooks(benchmark: Any = None) -> tuple[Callable[[str], str | None] | None,
                                              Callable[[str, dict], list[str]] | None]:
    """The registry's name resolver and argument validator (annotation.imagetools), with the
    benchmark's declared tools (validated by their argument schemas, never run) when given."""
    try:
        from annotation.benchmark_fields import default_registry_view
        from annotation.declared_tools import declared_from_dicts
    except ImportError:  # the registry is optional for scoring: names are then folded, args unchecked
        log.warning("annotation.imagetools is not importable; tool arguments are not validated")
        return None, None
    view = default_registry_view(declared_from_dicts(getattr(benchmark, "declared_tools", None) or ()))
    return view.resolve, view.validate_args


def other_benchmark_of(benchmark: Any) -> Callable[[Sequence[str]], str | None]:
    """The lookup the validation and the converters use to name the benchmark a file's ids belong to."""
    return lambda uids: benchmark_holding(uids, besides=benchmark)


def benchmark_tool_set(benchmark: Any, resolve: Callable[[str], str | None] | None) -> frozenset[str] | None:
    """The tool names a prediction may call, canonical; None when the whole registry is allowed
    (an empty `tools`: then the declared tools are allowed too)."""
    if not benchmark.tools:
        return None
    names = frozenset((resolve(t) if resolve else None) or t for t in benchmark.tools)
    return names | frozenset(d["name"] for d in benchmark.declared_tools or ())


class _BenchmarkCache:
    """The prepared benchmark (samples digested into the scorer's shape), its sample primary keys
    and uids, per worker process: a second submission to a benchmark does not read its samples
    again. Keyed by ``selectors.benchmark_content_version`` (three small aggregate queries), so
    any change to the samples, their approved annotations or the categories misses the cache.
    Bounded by samples, not entries: a 30k-sample benchmark takes about 100 MB, so the cache
    keeps the most recent benchmarks up to ``MAX_SAMPLES`` in all (always the last one used),
    and evicts before it builds, so a worker holds at most one large benchmark at a time.
    One lock, for a thread pool: a lookup waits while another thread builds."""

    MAX_SAMPLES = 40_000

    def __init__(self) -> None:
        self.entries: OrderedDict[int, tuple[tuple, PreparedBenchmark, dict[str, int], list[str]]] = OrderedDict()
        self.hits = self.misses = 0
        self.lock = threading.Lock()

    def get(self, benchmark: Any) -> tuple[PreparedBenchmark, dict[str, int], list[str]]:
        with self.lock:
            return self._get(benchmark)

    def _get(self, benchmark: Any) -> tuple[PreparedBenchmark, dict[str, int], list[str]]:
        # The profile decides the gold keys: a change of profile is a new prepared benchmark.
        version = (selectors.benchmark_content_version(benchmark=benchmark), benchmark.scoring)
        entry = self.entries.get(benchmark.pk)
        if entry is not None and entry[0] == version:
            self.hits += 1
            self.entries.move_to_end(benchmark.pk)
            log.info("benchmark %s: prepared samples from the cache", benchmark.slug)
            return entry[1], entry[2], entry[3]
        self.misses += 1
        started = time.perf_counter()
        entry = None
        self.entries.pop(benchmark.pk, None)  # free the stale one before building the new one
        need = dict(version[0][2])["n"]
        while self.entries and sum(len(e[3]) for e in self.entries.values()) + need > self.MAX_SAMPLES:
            self.entries.popitem(last=False)
        resolve, _ = tool_hooks(benchmark)
        pks: dict[str, int] = {}
        # A generator: the samples' dicts are digested one by one, never all held at once.
        prepared = PreparedBenchmark(selectors.iter_scoring_samples(benchmark=benchmark, pks=pks), resolve,
                                     scoring=benchmark.scoring)
        uids = [info.sample.uid for info in prepared.order]
        self.entries[benchmark.pk] = (version, prepared, pks, uids)
        log.info("benchmark %s: prepared %d samples in %.2f s", benchmark.slug, len(uids),
                 time.perf_counter() - started)
        return prepared, pks, uids

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


prepared_benchmarks = _BenchmarkCache()


def warm(*, days: int | None = None) -> list[str]:
    """Prepare the benchmarks submitted to in the last ``days`` days (the most recent first), as
    many as the cache holds. Returns their slugs. A failure is logged, not raised: the
    benchmarks are then prepared on first use, as without a warm-up."""
    days = settings.SCORING_WARMUP_DAYS if days is None else days
    warmed: list[str] = []
    try:
        room = prepared_benchmarks.MAX_SAMPLES
        for benchmark in selectors.recently_submitted_benchmarks(since=timezone.now() - timedelta(days=days)):
            if benchmark.n_samples > room:
                continue  # would evict one warmed before it, which was submitted to more recently
            started = time.perf_counter()
            prepared_benchmarks.get(benchmark)
            room -= benchmark.n_samples
            warmed.append(benchmark.slug)
            log.info("benchmark cache warmed: %s (%d samples) in %.2f s", benchmark.slug, benchmark.n_samples,
                     time.perf_counter() - started)
    except Exception:  # a warm-up is an optimisation: the first submission then builds it instead
        log.exception("benchmark cache warm-up failed; benchmarks will be prepared on first use")
    return warmed

