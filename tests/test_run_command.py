"""The README's run command brings the app up on SQLite with the demo data, from nothing, and says so
only once the server answers; started again on the same folder, it leaves the work a reviewer approved as
the reviewer left it (issue 38, item 4: load_demo's keep_edited)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from annotation.demo import DEMO_ACCOUNTS

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


@pytest.mark.slow
@pytest.mark.same_on_every_path  # it unsets DATABASE_URL and CELERY_BROKER_URL: the embedded default, always
def test_run_command_serves_home_and_login_with_demo_data(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(VAR_DIR=str(tmp_path / "var"), PORT=str(port))
    log = (tmp_path / "run.log").open("w")
    process = start(env, log, tmp_path / "run.log")
    try:
        # The links in e-mails go to the address the server runs on, not to a fixed port (SITE_URL).
        said = (tmp_path / "run.log").read_text()
        assert f"Links in its e-mails go to http://127.0.0.1:{port}." in said
        # What a newcomer needs and little else: the accounts after "up", no migration list, no Celery banners,
        # no line per cache hit, no kombu warning about a missing host.
        after_up = said[said.index("The platform is up at"):]
        assert all(a.username in after_up for a in DEMO_ACCOUNTS) and "admin-demo" in after_up
        for noise in ("Applying ", "-------------- [queues]", "prepared samples from the cache", "No hostname was supplied"):
            assert noise not in said, noise
        status, home = fetch(f"http://127.0.0.1:{port}/")
        assert status == 200
        assert "AdaptMM demo" in home
        assert "<strong>151</strong> samples" in home
        login_status, login = fetch(f"http://127.0.0.1:{port}/accounts/login/")
        assert login_status == 200 and 'name="password"' in login
        assert (tmp_path / "var" / "db.sqlite3").exists()
        # Static files go out compressed, as in production (plotly.js: 1.4 MB instead of 4.8 MB).
        request = urllib.request.Request(f"http://127.0.0.1:{port}/static/vendor/plotly.min.js",
                                         headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.headers.get("Content-Encoding") == "gzip"
            assert len(response.read()) < 2_000_000
    finally:
        stop_group(process)
        log.close()

    # Started again on the same folder (the whole run command: migrate, collectstatic, load_demo, workers, server),
    # a reviewer's approved edit stays as they left it. Only this second start is added here: the first is paid above.
    manage_env = {**env, "DJANGO_SETTINGS_MODULE": "config.settings.local"}  # as scripts/run exports it
    left = manage_shell(manage_env, APPROVE_AN_EDIT)
    assert left["status"] == "approved" and left["key_steps"][1] == EDITED_STEP, left
    log = (tmp_path / "run-again.log").open("w")
    process = start(env, log, tmp_path / "run-again.log")
    stop_group(process)
    log.close()
    after = manage_shell(manage_env, READ_IT_BACK.replace("PK", str(left["pk"])))
    assert after == {**left, "imports_since": 0}  # the same annotation, parts, answer; no import in its history
    again = (tmp_path / "run-again.log").read_text()
    assert "1 approved annotation(s) people edited or reviewed left as they are" in again, again[-3000:]


def start(env: dict[str, str], log, log_path: Path) -> subprocess.Popen:  # noqa: ANN001 - an open text file
    """scripts/run, until it says it is up: the "up" message comes only once the server answers."""
    process = subprocess.Popen(
        [str(ROOT / "scripts" / "run")], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    # A guard against a hang, not a timing: CI runs this beside seven other test processes on two cores, where the
    # install, migrations, demo load and first page took more than 240 s on a slower machine of this kind (stop 47).
    deadline = time.monotonic() + 600
    while "The platform is up at" not in log_path.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_group(process)
            pytest.fail("the run command never said it was up:\n" + log_path.read_text()[-4000:])
        time.sleep(0.2)
    return process


def manage_shell(env: dict[str, str], code: str) -> dict:
    """``manage.py shell -c code`` on the run command's database; the JSON object its last line prints."""
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


EDITED_STEP = "Reviewer's wording: the tag sits at the lower edge."
# annotator1 takes their next demo item, rewords its second key step through the workbench's save and submits it;
# the reviewer approves it whole (annotation/workbench): people's work the demo file does not hold.
APPROVE_AN_EDIT = f"""
import json
from django.contrib.auth import get_user_model
from annotation.demo import DEMO_SLUG
from annotation.models import Annotation, AnnotationStatus, Benchmark
from annotation.workbench.assignments import assignment_claim_next
from annotation.workbench.editing import annotation_save, annotation_snapshot
from annotation.workbench.review import PARTS, sample_approve
users = get_user_model().objects
claim = assignment_claim_next(user=users.get(username="annotator1"), benchmark=Benchmark.objects.get(slug=DEMO_SLUG))
sample, draft = claim.sample, Annotation.objects.get(pk=claim.annotation_id)
data = annotation_snapshot(sample.annotations.get(status=AnnotationStatus.APPROVED))
data.update(question=sample.question, answer=sample.answer, options=sample.options, answer_type=sample.answer_type)
data["key_steps"][1] = {{**data["key_steps"][1], "text": {EDITED_STEP!r}}}
saved = annotation_save(annotation_id=draft.pk, user=users.get(username="annotator1"), base_version=draft.version,
                        data=data, submit=True)
assert saved.ok, saved.errors
kept = sample_approve(sample=sample, reviewer=users.get(username="reviewer"), sources=dict.fromkeys(PARTS, draft.pk))
print(json.dumps({{"pk": kept.pk, "status": kept.status, "key_steps": [s.text for s in kept.key_steps.all()],
                  "answer": sample.answer}}))
"""
READ_IT_BACK = """
import json
from annotation.models import Annotation, RevisionKind
a = Annotation.objects.select_related("sample").get(pk=PK)
print(json.dumps({"pk": a.pk, "status": a.status, "key_steps": [s.text for s in a.key_steps.all()],
                  "answer": a.sample.answer, "imports_since": a.revisions.filter(kind=RevisionKind.IMPORT).count()}))
"""


def stop_group(process: subprocess.Popen) -> None:
    """Stop the run command and everything it started (web server, workers): TERM, and once the command has
    exited (or after 20 s) KILL for whatever of its group is left. A Celery worker whose pool processes got the
    group's TERM too can hang at its exit (billiard's pool finalizer waits on a lock a dead child held); without
    the KILL such a worker outlived the test by hours."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=20)


def test_the_compose_file_starts_again_every_process_that_exits() -> None:
    """scripts/run keeps its workers up with scripts/supervise (evaluation/tests/test_broker_outage.py
    kills one and watches it come back); the compose file with Docker's restart policy."""
    import yaml

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    workers = {name for name, s in services.items() if "celery" in str(s.get("command", ""))}
    assert {"worker", "sweeper", "runs", "beat"} <= workers
    assert {name: s.get("restart") for name, s in services.items()} == dict.fromkeys(services, "unless-stopped")
    run = (ROOT / "scripts" / "run").read_text()
    assert run.count("scripts/supervise .venv/bin/celery") == run.count(".venv/bin/celery") == 3
