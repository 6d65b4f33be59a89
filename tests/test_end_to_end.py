"""End to end, as a researcher does it: an HTTP upload to the API with a token, the real broker and a
real worker process score it, the researcher publishes it and finds the row on the public board,
unpublishes it and the row is gone. PostgreSQL and Redis in CI (DATABASE_URL, CELERY_BROKER_URL).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from evaluation.tests.test_worker_integration import owner, start_worker  # noqa: F401 - fixtures
from evaluation.tests.submission_helpers import good_file, make_benchmark

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
MODEL = "E2E-VLM 7B"
# How long a state may take before the test calls it a hang (not a bound on speed: the board refresh took
# over 30 s, the old limit, on a machine at load 10).
HANG = 180.0


def call(method: str, url: str, token: str | None = None, body: bytes | None = None,
         content_type: str | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method=method)
    if token:
        request.add_header("Authorization", f"Token {token}")
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw, status, kind = response.read(), response.status, response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        raw, status, kind = exc.read(), exc.code, exc.headers.get("Content-Type", "")
    return status, json.loads(raw) if "json" in kind else raw.decode()


def multipart(fields: dict[str, str], file_field: str, filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{filename}"\r\n'
                 "Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def test_upload_over_http_scored_by_a_worker_published_on_the_board_then_unpublished(
        live_server, owner, start_worker, tmp_path) -> None:  # noqa: F811
    bench = make_benchmark(tmp_path)
    token = Token.objects.create(user=owner).key
    worker = start_worker()
    body, kind = multipart({"model_name": MODEL, "organisation": "E2E Lab", "price_input_per_mtok": "0.2",
                            "price_output_per_mtok": "0.6"}, "file", "predictions.jsonl", good_file())
    status, created = call("POST", f"{live_server.url}/api/v1/benchmarks/{bench.slug}/submissions/", token,
                           body, kind)
    assert status == 202, created
    url = created["url"]
    deadline = time.monotonic() + HANG
    while True:
        status, sub = call("GET", url, token)
        if sub["status"] in ("done", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert sub["status"] == "done", (sub, worker.output())
    assert sub["results"]["modes"]["text"]["accuracy"]["overall"]["count"] == 4  # s2 and s5 answered wrong
    board = f"{live_server.url}/b/{bench.slug}/"
    assert MODEL not in call("GET", board)[1]  # private until published

    status, _ = call("PATCH", url, token, json.dumps({"is_public": True}).encode(), "application/json")
    assert status == 200
    # The worker's board refresh (sent on the publish's commit) builds the row; until then the page serves
    # the last build, marked as updating. Nothing is built in the request. A refresh already running when the
    # publish committed may show the row before the publish's own refresh has run: the page then shows the row
    # and still says "updating" (it is built from a version older than the results'), so wait for both.
    deadline = time.monotonic() + HANG
    page = call("GET", board)[1]
    while (MODEL not in page or 'id="board-updating"' in page) and time.monotonic() < deadline:
        assert MODEL in page or 'id="board-updating"' in page  # never a stale page that says it is current
        time.sleep(0.2)
        page = call("GET", board)[1]
    at = page.find(MODEL)
    assert MODEL in page and "E2E Lab" in page and 'id="board-updating"' not in page, (
        f"the page around the model's name: {page[max(0, at - 1500):at + 1500] if at >= 0 else '(not there)'}\n"
        f"the worker's log: {worker.output()}")

    status, _ = call("PATCH", url, token, json.dumps({"is_public": False}).encode(), "application/json")
    assert status == 200
    assert MODEL not in call("GET", board)[1]
