import os

from celery import Celery

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

