"""The library is plain Python: importing it loads nothing of Django, DRF or Celery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_imagetools_loads_no_django():
    probe = (
        "import sys\n"
        "import annotation.imagetools as tools\n"
        "assert len(tools.REGISTRY) == 39\n"
        "apps = {'django', 'rest_framework', 'celery', 'drf_spectacular', 'evaluation',\n"
        "        'leaderboard', 'config'}\n"
        "loaded = sorted(m for m in sys.modules\n"
        "                if m.split('.')[0] in apps or m == 'annotation.models')\n"
        "print(','.join(loaded))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
