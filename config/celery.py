import contextlib
import functools
import importlib
import os

from celery import Celery
from celery.beat import PersistentScheduler
from celery.worker.consumer import Consumer

# Production-safe by default (a worker started by hand never runs DEBUG settings); scripts/run sets local.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

from config import broker_fs

broker_fs.use()  # the embedded broker's message files are written whole before a consumer sees them
app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def task_by_name(name: str):  # noqa: ANN201 - a celery Task
    """A task from the app's registry, by name. Services that enqueue look their task up here
    instead of importing the tasks module, which imports them (no import circle); a web process
    that has not loaded the task yet imports the module its name gives (``annotation.tasks.download_build``),
    else every app's ``tasks`` module. Not ``loader.import_default_modules()``, as a starting worker does:
    its signal has Celery's Django fix-up run every system check, importing every URL and task module
    (the OpenAI client among them: about 1.5 s), which a publisher of one task has no use for."""
    if name not in app.tasks:
        module = name.rpartition(".")[0]
        if module:
            with contextlib.suppress(ModuleNotFoundError):
                importlib.import_module(module)
        if name not in app.tasks:  # a task named otherwise ("routers.score"): look through every app
            app.autodiscover_tasks(force=True)
    return app.tasks[name]


def _reconnecting_often(conn):  # noqa: ANN001, ANN202 - a kombu Connection
    """``conn`` retrying a lost broker every 2, 4, then BROKER_RECONNECT_MAX_SECONDS s, instead of kombu's
    2, 4, 6 ... 30 s: a worker or beat notices the broker's return within seconds, however long it was away
    (docs/submissions.md, "Recovery bounds")."""
    from django.conf import settings

    conn.ensure_connection = functools.partial(conn.ensure_connection, interval_max=settings.BROKER_RECONNECT_MAX_SECONDS)
    return conn


class PromptConsumer(Consumer):
    """The worker's consumer (CELERY_WORKER_CONSUMER), reconnecting every few seconds (above)."""

    def ensure_connected(self, conn):  # noqa: ANN001, ANN201 - Celery's signature
        return super().ensure_connected(_reconnecting_often(conn))


class PromptScheduler(PersistentScheduler):
    """Beat's scheduler (CELERY_BEAT_SCHEDULER), reconnecting every few seconds (above)."""

    def _ensure_connected(self):  # noqa: ANN202 - Celery's signature
        _reconnecting_often(self.connection)
        return super()._ensure_connected()
