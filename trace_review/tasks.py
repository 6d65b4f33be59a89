"""Celery tasks of the trace-review app."""

from __future__ import annotations

import logging

from celery import shared_task

log = logging.getLogger(__name__)


# At most once (acks_late off): a stability run pays the judge for every repeat, so a delivery lost
# with a dead worker is not re-run behind staff's back; they press the button again.
@shared_task(acks_late=False, reject_on_worker_lost=False, ignore_result=True)
def judge_stability(slug: str, sample: int, repeats: int, seed: int, user_id: int | None = None) -> None:
    from annotation.models import Benchmark
    from evaluation.judges import JudgeError
    from trace_review.stability import StabilityRefused, run_stability

    benchmark = Benchmark.objects.filter(slug=slug).first()
    if benchmark is None:
        return
    try:
        run_stability(benchmark=benchmark, sample=sample, repeats=repeats, seed=seed, started_by_id=user_id)
    except (StabilityRefused, JudgeError) as exc:  # nothing stored; the worker's log says why
        log.warning("judge stability on %s not done: %s", slug, exc)
