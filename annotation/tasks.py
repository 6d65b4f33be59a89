"""Celery tasks of the annotation app. Each takes an id and calls a service that returns early
unless the row's status allows the work, so a task delivered twice is harmless."""

from __future__ import annotations

from celery import shared_task

from annotation.downloads.services import download_build as download_builder
from annotation.workbench.llm import key_step_draft_run


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def draft_key_steps(draft_id: int) -> None:
    key_step_draft_run(draft_id=draft_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def download_build(download_id: int) -> None:
    """Build one of a benchmark's downloads (annotation/downloads/services.py); returns early unless still to build."""
    download_builder(download_id=download_id)
