"""Limits and bad input at the door: paging parameters, early size refusal, storage failures, races."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

# Integers past a column's range, parallel uploads racing for the limits: each engine answers its own way.
pytestmark = pytest.mark.every_path

URL = "/api/v1/benchmarks/tiny/submissions/"
BIG = "1" + "0" * 20  # 10**20: beyond PostgreSQL's bigint, SQLite's integer


@pytest.mark.django_db
@pytest.mark.parametrize(("query", "message"), [
    ("limit=1e20", "limit: expected a whole number from 1 to 1,000, got '1e20'"),
    (f"limit={BIG}", f"limit: expected a whole number from 1 to 1,000, got '{BIG}'"),
    ("limit=-1", "limit: expected a whole number from 1 to 1,000, got '-1'"),
    ("limit=0", "limit: expected a whole number from 1 to 1,000, got '0'"),
    ("limit=1001", "limit: expected a whole number from 1 to 1,000, got '1001'"),
    ("limit=ten", "limit: expected a whole number from 1 to 1,000, got 'ten'"),
    (f"offset={BIG}", f"offset: expected a whole number from 0 to 1,000,000,000, got '{BIG}'"),
    ("offset=1.5", "offset: expected a whole number from 0 to 1,000,000,000, got '1.5'"),
])
def test_bad_paging_parameters_get_400_naming_the_parameter(api, bench, django_capture_on_commit_callbacks,
                                                            query, message) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sub = api.post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart").json()
    url = f"/api/v1/submissions/{sub['id']}/predictions/"
    resp = api.get(f"{url}?{query}")
    assert resp.status_code == 400
    name, text = message.split(": ", 1)
    assert resp.json() == {name: [text]}
    page = api.get(f"{url}?limit=2&offset=1").json()  # good values still page
    assert page["count"] == 6 and len(page["results"]) == 2


# ------------------------------------------------------------------ eight uploads at once


def _multipart(fields: dict[str, str], content: bytes) -> tuple[bytes, str]:
    boundary = "limits-test-boundary"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.jsonl"\r\n'
                 "Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def _parallel_uploads(base_url: str, token: str, n: int) -> list[tuple[int, dict]]:
    """``n`` uploads of one researcher over real HTTP, released together by a barrier."""
    import json
    import threading
    import urllib.error
    import urllib.request

    body, content_type = _multipart({"model_name": "racer"}, good_file())
    barrier = threading.Barrier(n)
    answers: list[tuple[int, dict]] = []

    def one() -> None:
        request = urllib.request.Request(base_url + URL, data=body, method="POST", headers={
            "Authorization": f"Token {token}", "Content-Type": content_type})
        barrier.wait()
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:
                answers.append((resp.status, json.loads(resp.read())))
        except urllib.error.HTTPError as err:
            answers.append((err.code, json.loads(err.read())))

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return answers


@pytest.fixture
def slow_counts(monkeypatch):
    """Each limit count takes 0.3 s, as under load: eight unlocked checks would all see room."""
    import time

    from evaluation import selectors

    for name in ("active_submissions_count", "submissions_counted_today"):
        real = getattr(selectors, name)

        def slow(*args, _real=real, **kwargs):
            n = _real(*args, **kwargs)
            time.sleep(0.3)
            return n
        monkeypatch.setattr(selectors, name, slow)


@pytest.fixture
def race(live_server, transactional_db, tmp_path, monkeypatch, slow_counts):
    from evaluation import services

    monkeypatch.setattr(services, "submission_enqueue", lambda **_: True)  # they stay queued, i.e. active
    make_benchmark(tmp_path)
    researcher = get_user_model().objects.create_user("racer", "r@example.org", "pw")
    token = Token.objects.create(user=researcher).key
    return lambda n: _parallel_uploads(live_server.url, token, n)


@pytest.mark.slow
def test_eight_parallel_uploads_accept_exactly_the_two_active_allowed(race, settings) -> None:
    from evaluation.models import Submission

    settings.SUBMISSIONS_MAX_ACTIVE_PER_USER, settings.SUBMISSIONS_PER_DAY = 2, 50
    answers = race(8)
    assert sorted(code for code, _ in answers) == [202, 202] + [429] * 6, answers
    assert {a["detail"] for code, a in answers if code == 429} == {
        "You already have 2 submissions being scored; wait until one of them is done or failed."}
    assert Submission.objects.count() == 2


@pytest.mark.slow
def test_eight_parallel_uploads_accept_exactly_the_five_a_day_allowed(race, settings) -> None:
    from evaluation.models import Submission

    settings.SUBMISSIONS_MAX_ACTIVE_PER_USER, settings.SUBMISSIONS_PER_DAY = 50, 5
    answers = race(8)
    assert sorted(code for code, _ in answers) == [202] * 5 + [429] * 3, answers
    assert all("the daily limit" in a["detail"] for code, a in answers if code == 429)
    assert Submission.objects.count() == 5


# ------------------------------------------------------------------ storage failures at upload


@pytest.fixture
def store(monkeypatch):
    """The submissions' file storage, recording what it saved; ``store.fail = True`` makes saving fail."""
    from evaluation.models import Submission

    storage = Submission._meta.get_field("file").storage
    real_save = storage._save
    storage.saved, storage.fail = [], False

    def save(name, content):
        if storage.fail:
            raise OSError(28, "No space left on device")
        name = real_save(name, content)
        storage.saved.append(name)
        return name
    monkeypatch.setattr(storage, "_save", save)
    yield storage
    del storage.saved, storage.fail


@pytest.mark.django_db
def test_a_full_disk_at_upload_answers_a_json_503_and_keeps_nothing(api, bench, store) -> None:
    from evaluation.models import Submission

    store.fail = True
    resp = api.post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart")
    assert resp.status_code == 503
    assert resp["Content-Type"] == "application/json"
    assert resp.json() == {"code": "unavailable", "detail": (  # the cause named (errno 28: ENOSPC)
        "The upload could not be stored: the disk of the file store is full. Nothing was kept; this is not a "
        "problem with your file. Please upload it again later.")}
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_a_database_failure_at_insert_deletes_the_stored_file(api, bench, store, monkeypatch) -> None:
    from django.db import OperationalError

    from evaluation.models import Submission

    def down(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")
    monkeypatch.setattr(Submission, "save", down)
    resp = api.post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart")
    assert resp.status_code == 503 and "the database is not available" in resp.json()["detail"]
    assert len(store.saved) == 1 and not store.exists(store.saved[0])  # stored, then deleted


@pytest.mark.django_db
def test_an_upload_refused_under_the_lock_deletes_its_stored_file(api, bench, store, monkeypatch) -> None:
    from evaluation import selectors

    # The first (unlocked) check lets it through, the locked one refuses: as when a parallel upload won.
    counts = iter([0, 5])
    monkeypatch.setattr(selectors, "submissions_counted_today", lambda **_: next(counts))
    resp = api.post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart")
    assert resp.status_code == 429
    assert len(store.saved) == 1 and not store.exists(store.saved[0])


@pytest.mark.django_db
def test_a_full_disk_at_web_upload_shows_the_form_with_the_reason(client, user, bench, store) -> None:
    store.fail = True
    client.force_login(user)
    resp = client.post("/submissions/new/", {"benchmark": "tiny", "file": upload(good_file()), "model_name": "m"})
    assert resp.status_code == 503
    page = resp.content.decode()
    assert "the disk of the file store is full. Nothing was kept" in page
    assert 'name="model_name"' in page and 'value="m"' in page  # the form, filled in, to send again


# ------------------------------------------------------------------ an over-size upload is refused at once


def _complete(answer: bytes) -> bool:
    head, sep, body = answer.partition(b"\r\n\r\n")
    lengths = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    return bool(sep) and bool(lengths) and len(body) >= lengths[0]


def _post_headers_only(base_url: str, path: str, headers: dict[str, str], declared: int) -> tuple[int, str]:
    """POST that declares ``declared`` bytes but sends only the first 64 KB; the answer within 10 s."""
    import socket
    from urllib.parse import urlsplit

    host, port = urlsplit(base_url).hostname, urlsplit(base_url).port
    head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {declared}",
            "Content-Type: multipart/form-data; boundary=xyz", *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + b"--xyz\r\n" + b"x" * 65536)
        got = b""
        try:
            while not _complete(got):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got += chunk
        except TimeoutError:
            pytest.fail(f"no answer within 10 s to a POST of {path} declaring {declared:,} bytes: the server waits "
                        "for the body")
    status = int(got.split(b" ", 2)[1])
    return status, got.decode("utf-8", "replace")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["web form", "web form (XHR)", "API with a token", "API with a session"])
def test_an_over_size_upload_is_refused_by_its_declared_length_before_the_body_is_read(
        live_server, transactional_db, tmp_path, client, how) -> None:
    make_benchmark(tmp_path)
    user = get_user_model().objects.create_user("big", "b@example.org", "pw")
    client.force_login(user)
    session = {"Cookie": f"sessionid={client.cookies['sessionid'].value}"}
    path, headers = {
        "web form": ("/submissions/new/tiny/", session),
        "web form (XHR)": ("/submissions/new/", {**session, "X-Requested-With": "XMLHttpRequest"}),
        "API with a token": (URL, {"Authorization": f"Token {Token.objects.create(user=user).key}"}),
        "API with a session": (URL, session),
    }[how]
    status, answer = _post_headers_only(live_server.url, path, headers, 300 * 2**20)
    assert status == 413
    assert "The file is too large: 314,572,800 bytes, over the limit of 209,715,200 bytes (200 MB)" in answer


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_upload_page_refuses_an_over_size_file_before_sending_it(live_server, chromium, tmp_path, monkeypatch,
                                                                     settings) -> None:
    from django.db import connections

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.SUBMISSION_MAX_FILE_BYTES = 1000
    make_benchmark(tmp_path / "bench")
    get_user_model().objects.create_user("ada", "ada@example.org", "pw-ada-1")
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(good_file())  # about 2 KB
    posts: list[str] = []
    page = chromium.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill('input[name="username"]', "ada")
    page.fill('input[name="password"]', "pw-ada-1")
    page.click('button[type="submit"]')
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/submissions/new/tiny/")
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.set_input_files('input[type="file"]', str(path))
    page.fill('input[name="model_name"]', "too-big")
    page.click("#submit-button")
    message = page.inner_text("#form-errors")
    connections.close_all()
    assert f"The file is too large: {path.stat().st_size:,} bytes, over the limit of 1,000 bytes" in message
    assert posts == []  # nothing was sent


@pytest.mark.django_db
def test_a_full_upload_folder_while_the_api_reads_the_body_answers_a_json_503(api, bench, monkeypatch) -> None:
    from rest_framework.parsers import MultiPartParser

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(MultiPartParser, "parse", full)
    resp = api.post(URL, {"file": upload(good_file()), "model_name": "m"}, format="multipart")
    assert resp.status_code == 503
    assert resp.json()["detail"].startswith("The upload could not be stored: the disk of the upload folder is full")
