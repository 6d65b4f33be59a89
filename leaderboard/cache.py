"""Per-benchmark caching of the leaderboard's fragments and rows.

Keys carry a per-benchmark version token and a fingerprint of the benchmark's submissions
(count, which are public, latest pipeline heartbeat) and reported rows, so a page is never served stale even
where nobody calls ``invalidate_benchmark``; calling it (when a submission finishes, is
published, unpublished or deleted) drops every cached page of the benchmark at once, also on
backends where the fingerprint query is all that would otherwise notice.

Only fragments that are the same for every visitor are cached: the page around them (header
with the signed-in user, CSRF token) is rendered per request.
"""

from __future__ import annotations

import hashlib
import uuid
import weakref
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from django.core.cache import cache
from django.db import connections, router
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum

from annotation.models import Benchmark
from evaluation.models import Submission
from leaderboard.models import ReportedResult

TIMEOUT = 15 * 60  # a safety net; invalidation and the fingerprint do the real work
T = TypeVar("T")


def _version_key(benchmark_id: int) -> str:
    return f"lb:version:{benchmark_id}"


def invalidate_benchmark(benchmark_id: int) -> None:
    """Drop every cached leaderboard page and row list of one benchmark (call after a submission
    finishes, is re-scored, published, unpublished or deleted, and after reported results load)."""
    cache.set(_version_key(benchmark_id), uuid.uuid4().hex, None)


def _version(benchmark_id: int) -> str:
    key = _version_key(benchmark_id)
    token = cache.get(key)
    if token is None:
        cache.add(key, uuid.uuid4().hex, None)
        token = cache.get(key) or "0"
    return token


def fingerprint_annotations() -> dict[str, Any]:
    """Subqueries that change whenever a benchmark's public rows may change (for ``annotate``).

    They read only columns SQLite stores before the submission's large ``results`` document
    (visibility, status, heartbeat), through the benchmark index: the pipeline moves
    ``heartbeat_at`` at every stage, publishing flips ``is_public``, deleting sets ``deleted_at``.
    """
    subs = Submission.objects.filter(benchmark=OuterRef("pk")).order_by().values("benchmark")
    public = Q(is_public=True, deleted_at__isnull=True, status="done")
    reported = ReportedResult.objects.filter(benchmark=OuterRef("pk")).order_by().values("benchmark")
    return {
        "fp_count": Subquery(subs.annotate(c=Count("pk")).values("c")),
        "fp_public": Subquery(subs.annotate(s=Sum("pk", filter=public)).values("s")),
        "fp_heartbeat": Subquery(subs.annotate(m=Max("heartbeat_at")).values("m")),
        "fp_reported": Subquery(reported.annotate(m=Max("updated_at")).values("m")),
    }


@lru_cache(maxsize=1)
def _fingerprint_sql() -> str:
    b, sub, rep = Benchmark._meta.db_table, Submission._meta.db_table, ReportedResult._meta.db_table
    cols = ", ".join(f"b.{f.column}" for f in Benchmark._meta.concrete_fields)
    # One scan of the benchmark's submissions (through its index) for the three figures; written
    # as SQL because this runs on every cached request and the ORM's compilation alone cost more
    # than the query.
    return (
        f"SELECT {cols}, s.fp_count, s.fp_public, s.fp_heartbeat, "
        f"(SELECT MAX(r.updated_at) FROM {rep} r WHERE r.benchmark_id = b.id) AS fp_reported "
        f"FROM {b} b LEFT JOIN (SELECT benchmark_id, COUNT(*) AS fp_count, "
        f"SUM(CASE WHEN is_public AND deleted_at IS NULL AND status = 'done' THEN id ELSE 0 END) AS fp_public, "
        f"MAX(heartbeat_at) AS fp_heartbeat FROM {sub} WHERE benchmark_id = (SELECT id FROM {b} WHERE slug = %s) "
        f"GROUP BY benchmark_id) s ON s.benchmark_id = b.id WHERE b.slug = %s"
    )


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


def benchmark_with_fingerprint(slug: str) -> Benchmark | None:
    """The benchmark and, in the same query, its fingerprint (``fp_*`` attributes).

    Read with a cursor and ``Model.from_db``: a RawQuerySet's per-query set-up cost as much as the
    query on this path, which every cached request takes.
    """
    conn = connections[router.db_for_read(Benchmark)]
    with conn.cursor() as cursor:
        cursor.execute(_fingerprint_sql(), [slug, slug])
        row = cursor.fetchone()
    if row is None:
        return None
    values = []
    for value, (col, funcs) in zip(row, _benchmark_converters(conn)):
        for func in funcs:
            value = func(value, col, conn)
        values.append(value)
    fields = Benchmark._meta.concrete_fields
    benchmark = Benchmark.from_db(conn.alias, [f.attname for f in fields], values)
    benchmark.fp_count, benchmark.fp_public, benchmark.fp_heartbeat, benchmark.fp_reported = row[len(fields):]
    return benchmark


def fingerprint(benchmark: Benchmark) -> str:
    parts = [getattr(benchmark, name, None) for name in ("fp_count", "fp_public", "fp_heartbeat", "fp_reported")]
    parts.append(benchmark.updated_at)
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:16]


def key(benchmark: Benchmark, *parts: Any) -> str:
    raw = "|".join(str(p) for p in parts)
    digest = hashlib.sha1(raw.encode()).hexdigest()[:20]
    return f"lb:{benchmark.pk}:{_version(benchmark.pk)}:{fingerprint(benchmark)}:{digest}"


def cached(benchmark: Benchmark, parts: tuple, build: Callable[[], T]) -> T:
    k = key(benchmark, *parts)
    value = cache.get(k)
    if value is None:
        value = build()
        cache.set(k, value, TIMEOUT)
    return value
