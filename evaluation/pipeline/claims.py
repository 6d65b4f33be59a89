"""A stage's claim on a submission and the heartbeat that keeps it.

Each stage first *claims* the submission (``_claim``): a conditional UPDATE on its status and
its claim token, so a task delivered twice, or re-sent by the sweeper, runs the stage at most
once at a time, and a stage that already finished is a no-op. While the stage runs, a thread
renews the claim's heartbeat (``_Lease``); ``_Beats`` and ``_Progress`` carry the heartbeat and
the progress the scoring stage reports.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections
from django.db.models import F, Q
from django.utils import timezone

from evaluation.models import ACTIVE_STATUSES, Submission
from evaluation.services import attempts_exhausted_reason, submission_fail, submission_heartbeat

log = logging.getLogger(__name__)


_PROGRESS_SECONDS = 0.5


def new_claim_token() -> str:
    """Names the worker process (host and pid, for the health page and the logs) and the delivery."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _claim(submission_id: int, allowed: Sequence[str], to: str, token: str) -> bool:
    """Take the stage for this delivery; False (and nothing done) if another live delivery holds it,
    the stage moved on, or the tries are used up (then the submission fails with a reason).

    ``token`` is this delivery's; a retry of it (same token: a lost connection, a judge failure)
    takes its own claim back without counting a new attempt. Any other delivery takes the
    stage only if nobody holds it or the holder's heartbeat is stale (its worker died).
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SUBMISSION_STUCK_SECONDS)
    stage = Submission.objects.filter(pk=submission_id, status__in=list(allowed))
    # A claim is a delivery: whatever message brought it, the stage is no longer waiting to be sent.
    fields = {"status": to, "heartbeat_at": now, "claim_token": token, "progress_done": 0, "progress_total": 0,
              "enqueue_failed": False}
    if stage.filter(claim_token=token).update(**fields):
        return True
    free = Q(claim_token="") | Q(heartbeat_at__lt=stale)
    if stage.filter(free, attempts__lt=settings.SUBMISSION_MAX_ATTEMPTS).update(
            **fields, attempts=F("attempts") + 1):
        return True
    row = stage.filter(free).values("status", "attempts").first()
    if row is not None:  # free to take, but every try has been used
        submission_fail(submission_id=submission_id, reason=attempts_exhausted_reason(
            submission_id=submission_id, stage=row["status"], attempts=row["attempts"]))
    elif stage.exists():
        log.info("submission %s: already claimed by a live worker; this delivery does nothing", submission_id)
    return False


class _Lease:
    """Renews the claim's heartbeat every SUBMISSION_HEARTBEAT_SECONDS from a thread with its own
    database connection, whatever the stage is doing (reading a large benchmark, waiting on a
    judge), so the sweeper can call a claim dead after SUBMISSION_STUCK_SECONDS of silence
    without ever mistaking a slow stage for one.

    It stops renewing after CELERY_TASK_TIME_LIMIT: a stage hung that long goes stale like a dead
    one and is sent again (it holds no lock a new run would wait for; if it ever wakes, its claim
    is gone and its result is rolled back at the end). Not started inside an open transaction
    (unit tests): a second connection could not see the rows, or would wait on SQLite's lock.
    """

    def __init__(self, submission_id: int, token: str) -> None:
        self.pk = submission_id
        self.token = token
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Lease:
        if not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._run, name=f"lease-{self.pk}", daemon=True)
            self.thread.start()
        return self

    def _run(self) -> None:
        give_up = time.monotonic() + settings.CELERY_TASK_TIME_LIMIT
        try:
            while not self.stop.wait(settings.SUBMISSION_HEARTBEAT_SECONDS):
                if time.monotonic() > give_up:
                    log.error("submission %s: the stage has run past CELERY_TASK_TIME_LIMIT; no longer "
                              "renewing its claim (the sweeper will send it again)", self.pk)
                    return
                try:
                    held = Submission.objects.filter(pk=self.pk, claim_token=self.token,
                                                     status__in=ACTIVE_STATUSES).update(heartbeat_at=timezone.now())
                except DatabaseError as exc:  # the database is away; the stage sees it too
                    log.warning("submission %s: could not renew the claim (%s)", self.pk, exc)
                    connection.close()
                    continue
                if not held:
                    return  # finished, or taken over after a stale heartbeat
        finally:
            connection.close()  # this thread's own connection

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=30)


def submission_hold(*, submission_id: int, token: str, seconds: float) -> bool:
    """Keep the claim while a retry of this delivery waits ``seconds`` (the sweeper leaves it
    alone until then plus SUBMISSION_STUCK_SECONDS; other deliveries find it claimed)."""
    until = timezone.now() + timedelta(seconds=seconds)
    return bool(Submission.objects.filter(pk=submission_id, claim_token=token, status__in=ACTIVE_STATUSES)
                .update(heartbeat_at=until))


class _Beats:
    """Where the scoring stage writes its heartbeat, progress and the move to ``judging``.

    On PostgreSQL the result rows are written inside one long transaction, so these go through
    a second, autocommit connection: the submission page, the sweeper and the tests see them
    live (the transaction does not lock the submission's row until its very end). On SQLite
    (one writer at a time) the rows are staged in a connection-private TEMP table instead and
    these are plain autocommit writes on the default connection. Inside an outer transaction
    (tests, a caller's atomic block) they go with it.
    """

    def __init__(self, submission_id: int, *, side: bool = True) -> None:
        self.pk = submission_id
        self.side = None
        if side and connection.vendor == "postgresql" and not connection.in_atomic_block:
            self.side = connections.create_connection(DEFAULT_DB_ALIAS)

    def update(self, *, status_in: Sequence[str] | None = None, **fields: Any) -> None:
        fields["heartbeat_at"] = timezone.now()
        if self.side is None:
            qs = Submission.objects.filter(pk=self.pk)
            if status_in is not None:
                qs = qs.filter(status__in=list(status_in))
            qs.update(**fields)
            return
        meta = Submission._meta
        q = self.side.ops.quote_name
        sets = ", ".join(f"{q(meta.get_field(k).column)} = %s" for k in fields)
        sql = f"UPDATE {q(meta.db_table)} SET {sets} WHERE {q(meta.pk.column)} = %s"
        params = [*fields.values(), self.pk]
        if status_in is not None:
            sql += f" AND {q(meta.get_field('status').column)} IN ({', '.join(['%s'] * len(status_in))})"
            params.extend(status_in)
        with self.side.cursor() as cursor:
            cursor.execute(sql, params)

    def close(self) -> None:
        if self.side is not None:
            self.side.close()
            self.side = None


class _Progress:
    """Throttled progress reports, which double as the heartbeat the sweeper watches."""

    def __init__(self, submission_id: int, beats: _Beats | None = None) -> None:
        self.pk = submission_id
        self.beats = beats
        self.last = 0.0

    def __call__(self, done: int, total: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            if self.beats is not None:
                self.beats.update(progress_done=done, progress_total=max(total, done))
            else:
                submission_heartbeat(submission_id=self.pk, progress_done=done, progress_total=max(total, done))

    def beat(self) -> None:
        now = time.monotonic()
        if now - self.last >= _PROGRESS_SECONDS:
            self.last = now
            if self.beats is not None:
                self.beats.update()
            else:
                submission_heartbeat(submission_id=self.pk)
