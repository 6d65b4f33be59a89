"""Writes of the downloads: asking for the builds of a benchmark's current state, and building one.

``downloads_request`` is called by the writes that change what a download holds (benchmark_import,
sample_approve) and by ``build_downloads``; it creates the missing rows of the current key and, on
commit, sends ``annotation.tasks.download_build`` by name for each (annotation.tasks imports this
module, so importing the task back would close a circle). ``download_build`` claims its row with a
conditional update, so a task delivered twice builds once; a claim older than
``DOWNLOAD_BUILD_STALE_SECONDS`` (a worker that died) may be taken over by the next delivery or by
``build_downloads``.
"""

from __future__ import annotations

import logging
import secrets
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.downloads.selectors import GOLD_SPLITS, KINDS, benchmark_splits, download_key
from annotation.downloads.writers import WRITERS
from annotation.models import Benchmark, DataDownload, DownloadStatus, download_file_name
from config.celery import task_by_name
from config.storages import private_storage

log = logging.getLogger(__name__)

BUILD_TASK = "annotation.tasks.download_build"


@dataclass(frozen=True, slots=True)
class RequestSummary:
    key: str
    requested: list[DataDownload]  # rows sent to be built
    current: list[DataDownload]  # every row of the current key


def downloads_request(*, benchmark: Benchmark, retry: bool = False, send: bool = True,
                      countdown: float | None = None) -> RequestSummary:
    """Make sure every (split, kind) of the benchmark's current state has its build row, and have the
    new ones built on commit. ``retry`` (the command) also re-sends failed builds and building ones whose
    claim went stale or that were never claimed. ``send=False`` leaves the building to the caller
    (``download_build`` in-process: load_demo, the command's --sync). ``countdown`` delays the tasks: a
    reviewer's approvals come in bursts, and a build that finds a newer request of its split and kind
    gives way to it, so a burst ends in one build per file instead of one per approval."""
    benchmark = Benchmark.objects.get(pk=benchmark.pk)  # the caller's copy may predate a queryset update
    key = download_key(benchmark)
    requested, current = [], []
    stale = timezone.now() - timedelta(seconds=settings.DOWNLOAD_BUILD_STALE_SECONDS)
    with transaction.atomic():
        for split in benchmark_splits(benchmark):
            for kind in KINDS:
                row, created = DataDownload.objects.get_or_create(benchmark=benchmark, split=split, kind=kind, key=key)
                current.append(row)
                if created or (retry and _retry(row, stale)):
                    requested.append(row)
        if send:
            ids = [row.pk for row in requested]
            transaction.on_commit(lambda: _send(ids, countdown))
    return RequestSummary(key=key, requested=requested, current=current)


def _retry(row: DataDownload, stale: object) -> bool:
    """Free a failed or abandoned build for another go (a conditional update: no check-then-act)."""
    abandoned = Q(status=DownloadStatus.BUILDING) & (Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
    return bool(DataDownload.objects.filter(Q(pk=row.pk) & (Q(status=DownloadStatus.FAILED) | abandoned))
                .update(status=DownloadStatus.BUILDING, claimed_at=None, claim_token="", error=""))


def _send(ids: list[int], countdown: float | None) -> None:
    if not ids:  # nothing new to build (a re-import of the same file keeps the key): no task to look up
        return
    task = task_by_name(BUILD_TASK)
    for pk in ids:
        try:
            task.apply_async(args=[pk], queue=settings.DOWNLOADS_QUEUE, countdown=countdown)
        except Exception as exc:  # noqa: BLE001 - a broker that is down: `build_downloads` sends it again
            log.warning("download %s: could not publish %s (%s); run build_downloads", pk, BUILD_TASK, exc)


def download_build(*, download_id: int) -> bool:
    """Build one download if it is still to be built and nobody else holds it; True when this call built it."""
    token = secrets.token_hex(16)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.DOWNLOAD_BUILD_STALE_SECONDS)
    claimed = (DataDownload.objects.filter(pk=download_id, status=DownloadStatus.BUILDING)
               .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
               .update(claimed_at=now, claim_token=token))
    if not claimed:
        return False
    row = DataDownload.objects.select_related("benchmark").get(pk=download_id)
    if DataDownload.objects.filter(benchmark_id=row.benchmark_id, split=row.split, kind=row.kind,
                                   pk__gt=row.pk).exists():
        # A later change asked for its own build of this file: this state is gone, its build would be thrown away.
        DataDownload.objects.filter(pk=row.pk, claim_token=token).delete()
        return False
    storage = private_storage()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{row.split}.{row.kind}"
            count = WRITERS[row.kind](benchmark=row.benchmark, split=row.split, out=path,
                                      gold=row.split in GOLD_SPLITS, key=row.key)
            size = path.stat().st_size
            with path.open("rb") as handle:
                name = storage.save(download_file_name(row, path.name), File(handle))
    except Exception as exc:  # noqa: BLE001 - recorded on the row for staff; the page says it failed
        log.exception("download %s (%s %s.%s) failed", row.pk, row.benchmark.slug, row.split, row.kind)
        DataDownload.objects.filter(pk=row.pk, claim_token=token).update(
            status=DownloadStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000])
        return False
    with transaction.atomic():
        done = DataDownload.objects.filter(pk=row.pk, claim_token=token, status=DownloadStatus.BUILDING).update(
            status=DownloadStatus.READY, file=name, size_bytes=size, sample_count=count, built_at=timezone.now(),
            error="")
        if not done:  # another delivery took the claim over meanwhile and finished first
            transaction.on_commit(lambda: storage.delete(name))
            return False
        # Older builds of this split and kind are superseded; rows are made in order, so a late build
        # of an older key never deletes a newer one.
        older = DataDownload.objects.filter(benchmark_id=row.benchmark_id, split=row.split, kind=row.kind,
                                            pk__lt=row.pk)
        names = [n for n in older.values_list("file", flat=True) if n]
        older.delete()
        transaction.on_commit(lambda: [storage.delete(n) for n in names])
    return True


def downloads_build_now(*, benchmark: Benchmark) -> RequestSummary:
    """Ask for the current state's downloads and build them in this process (load_demo, ``build_downloads
    --sync``); a build a worker holds already is left to it."""
    summary = downloads_request(benchmark=benchmark, retry=True, send=False)
    for row in summary.requested:
        download_build(download_id=row.pk)
    return summary
