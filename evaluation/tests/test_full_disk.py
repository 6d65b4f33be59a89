"""A full disk (config/storages.py ``AtomicFileSystemStorage``, evaluation.middleware, evaluation.conversion):
a write that fails leaves no partial file, the web form answers 503 naming the cause as the API does, and a
conversion that fails for want of space says so instead of "could not be read".

A full disk cannot be produced for real in CI (no small tmpfs to mount here), so the writes are made to
fail as a full disk fails them: the file system's write raises ``OSError(ENOSPC)`` after part of the file
was written (the audit's drills left 512 KB and 1 MB behind), or Django's upload parser raises it while
spooling the body to the upload folder.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.db import transaction

from config.storages import private_storage
from evaluation import services
from evaluation.models import Submission
from evaluation.tests import author_shapes as shapes
from evaluation.tests.submission_helpers import good_file, upload

pytestmark = pytest.mark.django_db
ENOSPC = OSError(errno.ENOSPC, "No space left on device")


def _files(root: str | Path) -> list[str]:
    return sorted(str(Path(d, f).relative_to(root)) for d, _, fs in os.walk(root) for f in fs)


@pytest.fixture
def disk(monkeypatch):
    """The file system fills up after ``disk.room`` more bytes (None: room enough); writes past it raise ENOSPC
    after writing what fitted, and copies (a moved upload's) too."""
    import django.core.files.move as move
    import django.core.files.storage.filesystem as fs

    class Disk:
        room: int | None = None

        def take(self, n: int) -> int:
            if self.room is None:
                return n
            fits = min(n, self.room)
            self.room -= fits
            return fits

    state = Disk()
    real_fdopen = os.fdopen

    class FillingFile:
        def __init__(self, f) -> None:  # noqa: ANN001
            self.f = f

        def write(self, chunk):  # noqa: ANN001, ANN202
            fits = state.take(len(chunk))
            self.f.write(chunk[:fits])
            self.f.flush()
            if fits < len(chunk):
                raise OSError(errno.ENOSPC, "No space left on device")
            return fits

        def __getattr__(self, name: str):  # noqa: ANN204
            return getattr(self.f, name)

    monkeypatch.setattr(fs.os, "fdopen", lambda fd, mode="r", *a, **k: FillingFile(real_fdopen(fd, mode, *a, **k)))
    real_move = move.file_move_safe

    def filling_move(old: str, new: str, **kwargs):  # noqa: ANN003, ANN202 - a copy to another disk that fills up
        if state.room is None:
            return real_move(old, new, **kwargs)
        data = Path(old).read_bytes()
        fits = state.take(len(data))
        Path(new).write_bytes(data[:fits])
        if fits < len(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return None
    monkeypatch.setattr(fs, "file_move_safe", filling_move)
    return state


def test_a_write_that_fills_the_disk_leaves_no_partial_file(disk) -> None:
    storage = private_storage()
    before = _files(storage.location)
    disk.room = 512 * 1024
    with pytest.raises(OSError) as failed:
        storage.save("predictions/big.jsonl", ContentFile(b"x" * (2 * 1024 * 1024)))
    assert failed.value.errno == errno.ENOSPC
    assert _files(storage.location) == before  # neither the 512 KB written nor a partial name

    temp = TemporaryUploadedFile("big.jsonl", "application/octet-stream", 1024 * 1024, None)
    temp.write(b"y" * (1024 * 1024))
    temp.seek(0)
    disk.room = 100_000
    with pytest.raises(OSError):
        storage.save("predictions/moved.jsonl", temp)  # an upload spooled to a temporary file: moved, not streamed
    assert _files(storage.location) == before

    disk.room = None
    name = storage.save("predictions/fine.jsonl", ContentFile(b"z" * 1000))
    assert storage.open(name).read() == b"z" * 1000 and _files(storage.location) == sorted([*before, name])
    again = storage.save("predictions/fine.jsonl", ContentFile(b"w"))
    assert again != name and storage.open(name).read() == b"z" * 1000  # a taken name is never overwritten


def test_a_full_disk_at_web_upload_answers_503_naming_it_and_keeps_nothing(web, bench, disk) -> None:
    storage = private_storage()
    before = _files(storage.location)
    disk.room = 10
    form = {"benchmark": "tiny", "file": upload(good_file() * 50), "model_name": "m"}
    resp = web.post("/submissions/new/", form)
    assert resp.status_code == 503
    assert "The upload could not be stored: the disk of the file store is full. Nothing was kept" in \
        resp.content.decode()
    resp = web.post("/submissions/new/", {**form, "file": upload(good_file() * 50)},
                    HTTP_X_REQUESTED_WITH="XMLHttpRequest")
    assert resp.status_code == 503 and "the disk of the file store is full" in resp.json()["detail"]
    assert not Submission.objects.exists() and _files(storage.location) == before


def test_a_full_upload_folder_answers_the_web_form_503_not_500(web, bench, monkeypatch) -> None:
    """The body is spooled to the upload folder when Django parses it (the CSRF check's first read, before
    the view): a full folder was a 500 page on the form while the API said 503."""
    from django.http.multipartparser import MultiPartParser

    def full(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(MultiPartParser, "parse", full)
    form = {"benchmark": "tiny", "file": upload(good_file()), "model_name": "m"}
    resp = web.post("/submissions/new/", form, HTTP_X_REQUESTED_WITH="XMLHttpRequest")
    assert resp.status_code == 503
    assert resp.json() == {"detail": "The upload could not be stored: the disk of the upload folder is full. Nothing "
                                     "was kept; this is not a problem with your file. Please upload it again later."}
    page = web.post("/submissions/new/", {**form, "file": upload(good_file())})
    assert page.status_code == 503 and "the disk of the upload folder is full" in page.content.decode()
    assert 'id="form-errors"' in page.content.decode()  # the upload form, to send again
    assert not Submission.objects.exists()


def test_a_conversion_on_a_full_disk_says_so_and_leaves_no_partial_file(bench, user, disk,
                                                                        django_capture_on_commit_callbacks) -> None:
    uids = tuple(bench.samples.values_list("uid", flat=True))
    preds = shapes.generate(uids, dict.fromkeys(uids, "A"))
    storage = private_storage()
    with django_capture_on_commit_callbacks(execute=False):
        sub = services.submission_create(benchmark=bench, owner=user, file=upload(shapes.vlmevalkit_table(preds),
                                                                                  "M_tiny.tsv"),
                                         model_name="m", file_format="vlmevalkit", enforce_limits=False)
    before = _files(storage.location)
    disk.room = 64  # the converted file does not fit
    from evaluation.conversion import submission_file_ready

    with transaction.atomic():
        assert submission_file_ready(submission=Submission.objects.get(pk=sub.pk)) is False
    sub.refresh_from_db()
    assert sub.status == "failed"
    assert sub.failure_reason == ("The file could not be converted: the server's disk is full. This is not a problem "
                                  "with your file; nothing was scored. Please upload it again later.")
    assert "could not be read" not in sub.failure_reason
    assert _files(storage.location) == before  # no half-written converted file


@pytest.mark.parametrize("name", ["bench.zip", "bench.tsv"])
def test_an_export_that_fills_the_disk_leaves_no_partial_file(bench, tmp_path, monkeypatch, name) -> None:
    """export_benchmark's zip (annotation.bundles) and TSV (annotation.vlmevalkit_export) are written under a
    partial name and renamed when whole; an earlier export of the same name stays as it was."""
    import csv

    from annotation import bundles
    from annotation.services import benchmark_export
    from annotation.vlmevalkit_export import tsv_write

    out = tmp_path / "exports" / name
    out.parent.mkdir()
    out.write_bytes(b"the last good export")

    def fill(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - a row or an entry written, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")
    if name.endswith(".zip"):
        real = bundles._ZipSink.add_file

        def add_file(self, arcname, path):  # noqa: ANN001, ANN202
            real(self, arcname, path)
            fill()
        monkeypatch.setattr(bundles._ZipSink, "add_file", add_file)
        export = lambda: benchmark_export(benchmark=bench, out=out)  # noqa: E731
    else:
        real_writer = csv.writer
        calls = []

        class Writer:
            def __init__(self, handle, **kwargs) -> None:  # noqa: ANN001, ANN003
                self.inner = real_writer(handle, **kwargs)

            def writerow(self, row):  # noqa: ANN001, ANN202
                calls.append(row)
                self.inner.writerow(row)
                if len(calls) > 1:
                    fill()
        monkeypatch.setattr("annotation.vlmevalkit_export.csv.writer", Writer)
        export = lambda: tsv_write(benchmark=bench, out=out, approved_only=False)  # noqa: E731
    with pytest.raises(OSError):
        export()
    assert _files(out.parent) == [name] and out.read_bytes() == b"the last good export"
