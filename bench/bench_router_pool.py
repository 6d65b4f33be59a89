"""The router pool's per-model rows (issue 37, item 3): each candidate model routed to alone, at a pool of M models.

The pool's build (``routers.services.pool_build``) scores every model of the pool alone on the test split. It used
the general scorer with a one-hot pick matrix per model (``routing.score`` with ``single_model_probs``): each call
was O(samples x models) and computed the Oracle again, so the build was quadratic in the pool. It now calls
``routing.single_model_scores`` (the Oracle once, each model's column once). This times both on the same synthetic
pool (the library alone: no database), --repeat times each, and checks that they give the same figures.

    .venv/bin/python bench/bench_router_pool.py --models 100,1000,10000 [--samples 500] [--repeat 3]

Not part of the test suite. The figures are recorded in docs/performance.md ("The router pool's build").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.metrics import routing  # noqa: E402

DOMAINS = ("charts", "documents", "maps", "natural", "text")


def pool_of(models: int, samples: int, seed: int = 7) -> routing.Pool:
    rng = np.random.default_rng(seed)
    names = tuple(f"model-{j:05d}" for j in range(models))
    uids = tuple(f"s{i}" for i in range(samples))
    skill = rng.uniform(0.2, 0.9, size=models)
    correct = (rng.random((samples, models)) < skill).astype(float)
    cost = rng.choice([0.0001, 0.0003, 0.001, 0.003], size=(samples, models)) * rng.uniform(0.5, 2, size=models)
    return routing.Pool(names, uids, correct, cost)


def old_way(pool: routing.Pool, rows: list[int], bounds, domains: list[str]) -> dict:  # noqa: ANN001
    return {m: routing.score(pool, rows, routing.single_model_probs(pool, m, len(rows)), bounds=bounds,
                             domains=domains) for m in pool.models}


def timed(fn, repeat: int) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        out.append(time.process_time() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="100,1000,10000")
    parser.add_argument("--samples", type=int, default=500, help="samples in the pool (80 %% of them the test split)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--old-max", type=int, default=2000, help="time the old way only up to this many models")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.samples} samples; CPU seconds, median of {args.repeat}")
    for m in (int(x) for x in args.models.split(",")):
        print(measure(m, args), flush=True)


def measure(m: int, args: argparse.Namespace) -> str:
    pool = pool_of(m, args.samples)
    test = list(range(args.samples // 5, args.samples))
    domains = [DOMAINS[i % len(DOMAINS)] for i in test]
    bounds = routing.pool_bounds(pool, test)
    new = timed(lambda: routing.single_model_scores(pool, test, bounds=bounds, domains=domains), args.repeat)
    line = f"{m:>6} models: single_model_scores {statistics.median(new):8.2f} s"
    if m <= args.old_max:
        old = timed(lambda: old_way(pool, test, bounds, domains), 1)
        fast = routing.single_model_scores(pool, test, bounds=bounds, domains=domains)
        slow = old_way(pool, test, bounds, domains)
        same = all(fast[k].accuracy == slow[k].accuracy and fast[k].per_sample == slow[k].per_sample
                   and fast[k].oracle_gap == slow[k].oracle_gap for k in pool.models)
        line += f"; score per model (before) {old[0]:8.2f} s; same figures: {same}"
    return line

if __name__ == "__main__":
    main()
