"""The router track's Celery task: takes an id; the service returns early unless the row is queued."""

from __future__ import annotations

from celery import shared_task

from routers import services


@shared_task(name="routers.score", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def router_score(submission_id: int) -> None:
    services.router_submission_score(submission_id=submission_id)


@shared_task(name="routers.reference", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def router_reference(reference_id: int) -> None:
    services.router_reference_compute(reference_id=reference_id)


@shared_task(name="routers.sweep", ignore_result=True)
def routers_sweep() -> None:
    services.routers_sweep()


@shared_task(name="routers.pool_refresh", ignore_result=True, acks_late=True)
def pool_refresh(benchmark_id: int) -> None:
    """The derived kind "routers" (settings.RESULTS_CHANGED_TASKS): the pool and its baselines."""
    services.pool_refresh(benchmark_id=benchmark_id)
