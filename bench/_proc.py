"""What a bench that measures its steps in child processes shares: a scratch VAR_DIR and SQLite database
(settings read from the environment, set before Django is imported), a child's own peak memory, and the
line a child reports on. Imported by the bench scripts (their folder is on sys.path when run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT = "BENCH-RESULT "


def scratch_env(prefix: str) -> Path:
    """VAR_DIR (a new temporary folder unless set), a SQLite database in it unless DATABASE_URL is set, the
    base settings, an in-memory broker (tasks are only published); the project importable. Returns VAR_DIR."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix=prefix))
    var = Path(os.environ["VAR_DIR"]).resolve()
    var.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{var / 'db.sqlite3'}")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    os.environ.setdefault("ALLOWED_HOSTS", "localhost")
    os.environ.setdefault("CELERY_BROKER_URL", "memory://")
    return var


def status_kb(field: str) -> int:
    """A field of this process's /proc status in kB: VmHWM (its own peak resident memory), VmRSS."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def report(figures: dict) -> None:
    """A child's figures, on the line ``run_child`` reads."""
    print(RESULT + json.dumps(figures), flush=True)


def run_child(script: str, *argv: str) -> dict:
    """Runs ``script --child ARGV...`` and returns the figures it reported; its output shown if it fails."""
    proc = subprocess.run([sys.executable, script, "--child", *argv], capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(proc.returncode)
    line = next(x for x in proc.stdout.splitlines() if x.startswith(RESULT))
    return json.loads(line[len(RESULT):])
