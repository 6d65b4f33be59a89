import logging
import os

from celery import Celery
from celery.signals import worker_ready

# Production-safe by default (a worker started by hand never runs DEBUG settings); scripts/run sets local.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def task_by_name(name: str):  # noqa: ANN201 - a celery Task
    """A task from the app's registry, by name. Services that enqueue look their task up here
    instead of importing the tasks module, which imports them (no import circle); a web process
    that has not loaded the task modules yet loads them first, as a starting worker does."""
    if name not in app.tasks:
        app.loader.import_default_modules()
    return app.tasks[name]


@worker_ready.connect
def _warm_benchmark_cache(sender: object = None, **_: object) -> None:
    """A starting worker asks each of its pool processes to prepare the recently used benchmarks
    (evaluation/benchmark_cache.py): one task per process on the pipeline's queue; with fair
    scheduling a busy process leaves the next one to the other. A failed send is logged only."""
    from django.conf import settings

    if not settings.SCORING_WARMUP:
        return
    from evaluation.tasks import benchmark_cache_warm

    processes = getattr(getattr(sender, "controller", None), "concurrency", None) or 1
    try:
        for _ in range(processes):
            benchmark_cache_warm.apply_async(queue=settings.SUBMISSIONS_QUEUE)
    except Exception:  # the broker is down: the first submissions prepare their benchmarks themselves
        logging.getLogger(__name__).warning("could not send the benchmark cache warm-up", exc_info=True)
