"""Figures derived from a benchmark's public results: the one refresh design (docs/architecture.md,
"Derived figures").

The trigger is ``Benchmark.results_version``, moved in the transaction of every change to the public
results (``services.benchmark_results_bump``). On commit, each task listed in
``settings.RESULTS_CHANGED_TASKS`` is sent by name: one refresh per kind of derived figure (the board's
entries and ranks, the router pool and its baselines, the guessability audit). A refresh builds its kind
for the version it reads and records it in ``DerivedState``; two refreshes of one kind take turns on
that row, and a build already at the version costs one query.

Readers only read: ``derived_read`` gives the last build and whether it is behind the version (the
page then says it is updating). What must hold at once (an unpublished or deleted entry never shows)
is filtered at read time with ``on_board_q``, not left to the refresh.
"""

from __future__ import annotations

from collections.abc import Callable
import logging
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.db import IntegrityError, transaction
from django.db.models import TextField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.models import Benchmark
from evaluation.models import DerivedState

log = logging.getLogger(__name__)

KINDS = ("board", "routers", "guessability", "agentx")


@dataclass(frozen=True, slots=True)
class Build:
    """A kind's last build as readers see it."""

    kind: str
    version: int  # the results_version it was built for; 0 with built_at None: never built
    built_at: datetime | None
    payload: Any
    current: int  # the benchmark's results_version as the reader read it

    @property
    def updating(self) -> bool:
        """Behind the results: the refresh has not run yet (a worker busy or down)."""
        return self.built_at is None or self.version < self.current


def derived_read(benchmark: Benchmark, kind: str, *, payload: bool = True, part: str | None = None) -> Build:
    """The last build of ``kind`` (one query; never writes). The payload is read as text and decoded by
    orjson: the standard library's decoder (the JSONField's) took 3 s for the router pool's payload at 1,000
    pool models, 0.5 s with orjson. ``part``: only that key of the payload ("a__b" for a nested one), extracted
    by the database (a wide tab's page reads its count and marks alone, not the other tabs' nor the windows the
    refresh moves the marks with)."""
    column = Cast(KT(f"payload__{part}") if part else "payload", TextField())
    fields: tuple = ("version", "built_at", column) if payload else ("version", "built_at")
    row = DerivedState.objects.filter(benchmark_id=benchmark.pk, kind=kind).values_list(*fields).first()
    if row is None:
        return Build(kind, 0, None, None, benchmark.results_version)
    data = orjson.loads(row[2]) if payload and row[2] is not None else None
    return Build(kind, row[0], row[1], data, benchmark.results_version)


def derived_refresh(*, benchmark_id: int, kind: str, build: Callable[[Benchmark], Any],
                    force: bool = False) -> int | None:
    """Build ``kind`` for the benchmark's current results_version unless it is built already (or ``force``:
    a change the version does not follow, such as an imported router pool); return that version (None: no
    such benchmark). ``build(benchmark)`` runs inside the transaction that holds the kind's state row, and
    returns the payload to store (None for a kind with tables of its own)."""
    version = Benchmark.objects.filter(pk=benchmark_id).values_list("results_version", flat=True).first()
    if version is None:
        return None
    if not force and DerivedState.objects.filter(benchmark_id=benchmark_id, kind=kind, version=version,
                                                 built_at__isnull=False).exists():
        return version
    with suppress(IntegrityError):  # created by a concurrent refresh meanwhile
        DerivedState.objects.get_or_create(benchmark_id=benchmark_id, kind=kind, defaults={"version": 0})
    benchmark = Benchmark.objects.get(pk=benchmark_id)
    with transaction.atomic():
        # the last payload is not decoded (the board's holds the wide tabs' index, 2 MB at 10,000 entries: 0.5 s)
        state = DerivedState.objects.select_for_update().defer("payload").get(benchmark_id=benchmark_id, kind=kind)
        if not force and state.version == version and state.built_at is not None:
            return version  # built by the refresh that held the row before us
        state.payload = build(benchmark)
        state.version, state.built_at = version, timezone.now()
        state.save(update_fields=["payload", "version", "built_at"])
    log.info("benchmark %s: %s built for results version %s", benchmark_id, kind, version)
    return version


def derived_behind() -> list[int]:
    """Benchmarks with a kind whose build is behind its results_version (or never built though results
    exist): their refresh message was lost (a broker down at the change). The sweeper sends them again."""
    built = {(b, k): v for b, k, v in DerivedState.objects.filter(built_at__isnull=False)
             .values_list("benchmark_id", "kind", "version")}
    return [pk for pk, version in Benchmark.objects.filter(results_version__gt=0).values_list("pk", "results_version")
            if any(built.get((pk, kind), -1) < version for kind in KINDS)]
