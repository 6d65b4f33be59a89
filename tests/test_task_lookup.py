"""config/celery.py's task_by_name in a process that has loaded no task yet (a web process, an import): it finds a
task by the module its name gives, without importing every app's tasks (the OpenAI client among them) or running
the system checks, and still finds a task whose name is not its module's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import sys, django
django.setup()
from config.celery import task_by_name
task = task_by_name("annotation.tasks.download_build")
print(task.name, "evaluation.tasks" in sys.modules, "openai" in sys.modules)
print(task_by_name("routers.score").name)
"""


def test_a_task_is_found_by_its_module_alone_and_a_named_one_by_looking_through_every_app() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["annotation.tasks.download_build False False", "routers.score"]
