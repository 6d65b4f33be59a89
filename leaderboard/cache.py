"""Per-benchmark caching of the leaderboard's pages, fragments and rows.

Keys carry the benchmark's ``results_version`` (a counter in the database, moved in the same
transaction as every change to its public results: ``evaluation.services.benchmark_results_bump``)
and its ``updated_at``, both read with the benchmark in the one query a cached request makes. So a
page is never served stale, and a cached request costs the same with ten or ten thousand
submissions (it used to aggregate every submission of the benchmark for a fingerprint).

The overview's computed page (its rows sorted, paged and tested: ``tabs.overview_page``) and the tabs the
navigation offers are keyed by the builds they come from instead (``versioned=False``), so a read just after
a change finds them; what must hold at once is applied to the page's rows when it is rendered
(``selectors.overview_now``: one query).

Only fragments that are the same for every visitor are cached: the page around them (header
with the signed-in user, CSRF token) is rendered per request, or, for visitors without a session,
cached with a slot for the token (leaderboard.views).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

import orjson
from django.core.cache import cache
from django.db import connections, router

from annotation.models import Benchmark
from evaluation.derived import KINDS, derived_read
from evaluation.models import DerivedState

TIMEOUT = 15 * 60  # a safety net; the version does the real work
T = TypeVar("T")


@lru_cache(maxsize=1)
def _benchmark_sql() -> str:
    """The benchmark's columns, then each derived kind's last build (version, built_at), then the board build's
    counts, in one statement."""
    from leaderboard.models import BoardCounts

    cols = ", ".join(f'b."{f.column}"' for f in Benchmark._meta.concrete_fields)
    state = DerivedState._meta.db_table
    builds = ", ".join(f'(SELECT "{c}" FROM "{state}" WHERE "benchmark_id" = b."id" AND "kind" = \'{kind}\')'
                       for kind in KINDS for c in ("version", "built_at"))
    counts = f'(SELECT "counts" FROM "{BoardCounts._meta.db_table}" WHERE "benchmark_id" = b."id")'
    return f'SELECT {cols}, {builds}, {counts} FROM "{Benchmark._meta.db_table}" b WHERE b."slug" = %s'


_converters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _benchmark_converters(conn: Any) -> list[tuple[Any, list]]:
    """Each Benchmark column's database converters on ``conn``, as the ORM's compiler applies them."""
    found = _converters.get(conn)
    if found is None:
        table = Benchmark._meta.db_table
        found = []
        for f in Benchmark._meta.concrete_fields:
            col = f.get_col(table)
            found.append((col, conn.ops.get_db_converters(col) + f.get_db_converters(conn)))
        _converters[conn] = found
    return found


def benchmark_for_page(slug: str) -> Benchmark | None:
    """The benchmark by its slug, with its ``results_version`` and, as ``page_builds``, each derived kind's
    last build as {kind: (version, built_at as the database gives it)}: the one query of a cached request. With
    them, as ``board_counts``, the board build's counts (``BoardCounts``; None if none), which an uncached page
    reads twice (the tabs offered, the overview's stored page: ``selectors.figures_present_built``).

    Read with a cursor and ``Model.from_db``: a QuerySet's per-query set-up cost as much as the
    query on this path, which every cached request takes.
    """
    conn = connections[router.db_for_read(Benchmark)]
    with conn.cursor() as cursor:
        cursor.execute(_benchmark_sql(), [slug])
        row = cursor.fetchone()
    if row is None:
        return None
    values = []
    fields = Benchmark._meta.concrete_fields
    for value, (col, funcs) in zip(row[:len(fields)], _benchmark_converters(conn)):
        for func in funcs:
            value = func(value, col, conn)
        values.append(value)
    benchmark = Benchmark.from_db(conn.alias, [f.attname for f in fields], values)
    rest = row[len(fields):]
    benchmark.page_builds = {kind: (rest[2 * i], rest[2 * i + 1]) for i, kind in enumerate(KINDS)}
    counts = rest[2 * len(KINDS)]  # JSON as text on SQLite, decoded by the driver on PostgreSQL
    benchmark.board_counts = orjson.loads(counts) if isinstance(counts, str | bytes) else counts
    return benchmark


def updating(benchmark: Benchmark, kind: str) -> bool:
    """Whether ``kind``'s last build is behind the results (from ``benchmark_for_page``'s one query)."""
    version, built_at = benchmark.page_builds[kind]
    return version is None or built_at is None or version < benchmark.results_version


def build_of(benchmark: Benchmark, kind: str) -> tuple[Any, Any]:
    """``kind``'s last build as (version, built_at): from ``benchmark_for_page``'s one query when the benchmark
    came from it, else read (one query)."""
    builds = getattr(benchmark, "page_builds", None)
    if builds is not None:
        return builds[kind]
    build = derived_read(benchmark, kind, payload=False)
    return build.version, build.built_at


def key(benchmark: Benchmark, *parts: Any, versioned: bool = True) -> str:
    """The cache key of ``parts`` on this benchmark. ``versioned``: it moves with the ``results_version``
    (every change to the public results); without, the parts must name the builds the value is made from."""
    raw = "|".join(str(p) for p in parts)
    digest = hashlib.sha1(raw.encode()).hexdigest()[:20]
    # updated_at too: an edit of the benchmark itself (name, cost bounds) shows at once
    stamp = benchmark.updated_at.timestamp() if benchmark.updated_at else 0
    version = benchmark.results_version if versioned else "build"
    return f"lb:{benchmark.pk}:{version}:{stamp}:{digest}"


def cached(benchmark: Benchmark, parts: tuple, build: Callable[[], T], *, versioned: bool = True) -> T:
    k = key(benchmark, *parts, versioned=versioned)
    value = cache.get(k)
    if value is None:
        value = build()
        cache.set(k, value, TIMEOUT)
    return value
