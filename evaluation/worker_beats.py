"""Workers say they are alive: a thread in each worker process writes one ``WorkerBeat`` row per queue the
worker consumes, every WORKER_HEARTBEAT_SECONDS, from the moment the worker is ready until it stops.

The pages only read these rows (a read never writes): the submission page, the API and the health page
say so when no worker has served the pipeline's queue for WORKER_SILENT_SECONDS, since nothing can move
a submission on then (``selectors.pipeline_silence``). The writer is the worker's main process, not a
task: a worker busy with a long stage, or with every pool process taken, still beats; one that is gone
does not. One small upsert per queue per beat (SQLite: a short write between the
stages' writes; PostgreSQL: a row lock for a moment), on a connection opened for it and closed after.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from evaluation.models import WorkerBeat

log = logging.getLogger(__name__)


def worker_beat(*, worker: str, queues: Iterable[str], pid: int) -> None:
    """Record that ``worker`` is alive and consuming ``queues`` (one upsert per queue)."""
    now = timezone.now()
    WorkerBeat.objects.bulk_create(
        [WorkerBeat(worker=worker[:200], queue=q[:200], pid=pid, seen_at=now) for q in queues],
        update_conflicts=True, unique_fields=["worker", "queue"], update_fields=["pid", "seen_at"])


class Beater:
    """The thread that beats for one worker process until ``stop``."""

    def __init__(self, worker: str, queues: list[str]) -> None:
        self.worker = worker
        self.queues = queues
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="worker-beat", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def _run(self) -> None:
        while True:
            try:
                worker_beat(worker=self.worker, queues=self.queues, pid=os.getpid())
            except DatabaseError as exc:  # the database is away: the pages will say the worker is silent
                log.warning("worker %s: could not record its heartbeat (%s)", self.worker, exc)
            finally:
                # No connection is held between beats: a pool process forked meanwhile (prefork replaces
                # one that died) inherits no open socket of this thread's that it could close under it.
                connection.close()
            if self.stopped.wait(settings.WORKER_HEARTBEAT_SECONDS):
                return
