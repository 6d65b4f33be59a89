"""annotation/downloads (services, selectors, the task, build_downloads): each state of a benchmark is
built once per split and kind, by the writes that change it, and a newer build replaces the older one."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.downloads import services as download_services
from annotation.downloads.selectors import download_key
from annotation.downloads.services import download_build, downloads_request
from annotation.models import Annotation, AnnotationStatus, Benchmark, DataDownload, DownloadStatus, Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from annotation.workbench.review import PARTS, sample_approve
from config.storages import private_storage

pytestmark = pytest.mark.django_db

SLUG = "dlb"


def _import(folder: Path, lines: list[dict], capture) -> Benchmark:  # noqa: ANN001 - the pytest-django fixture
    with capture(execute=True):  # the import's on-commit sends run the (eager) build tasks
        benchmark_import(path=write_benchmark(folder, lines), slug=SLUG)
    return Benchmark.objects.get(slug=SLUG)


def _lines(test_answer: str = "3") -> list[dict]:
    return [sample_line("a"), sample_line("b", split="test", answer=test_answer)]


def _ready() -> dict[tuple[str, str], DataDownload]:
    return {(r.split, r.kind): r for r in DataDownload.objects.filter(status=DownloadStatus.READY)}


def test_an_import_builds_every_split_and_kind_once(tmp_path: Path, django_capture_on_commit_callbacks) -> None:
    benchmark = _import(tmp_path / "v1", _lines(), django_capture_on_commit_callbacks)
    ready = _ready()
    assert set(ready) == {(s, k) for s in ("dev", "test") for k in ("zip", "tsv", "parquet")}
    assert {r.key for r in ready.values()} == {download_key(benchmark)}
    assert all(r.sample_count == 1 and r.size_bytes > 0 for r in ready.values())

    # The task delivered again, the request made again, the same file imported again: nothing is rebuilt.
    for row in ready.values():
        assert download_build(download_id=row.pk) is False
    with django_capture_on_commit_callbacks(execute=True):
        assert downloads_request(benchmark=benchmark).requested == []
    _import(tmp_path / "v1", _lines(), django_capture_on_commit_callbacks)
    again = _ready()
    assert {k: (r.pk, r.file.name, r.built_at) for k, r in again.items()} == \
        {k: (r.pk, r.file.name, r.built_at) for k, r in ready.items()}
    assert DataDownload.objects.count() == 6


def test_a_changed_benchmark_gets_new_builds_and_the_old_files_go(tmp_path: Path,
                                                                  django_capture_on_commit_callbacks) -> None:
    benchmark = _import(tmp_path / "v1", _lines(), django_capture_on_commit_callbacks)
    old = _ready()
    old_key = download_key(benchmark)
    _import(tmp_path / "v2", _lines(test_answer="4"), django_capture_on_commit_callbacks)
    new = _ready()
    assert download_key(benchmark) != old_key
    assert {r.key for r in new.values()} == {download_key(benchmark)}
    assert DataDownload.objects.count() == 6  # the superseded rows are gone, and their files with them
    for row in old.values():
        assert not private_storage().exists(row.file.name)
    for row in new.values():
        assert private_storage().exists(row.file.name)


def test_an_approval_that_changes_gold_asks_for_new_builds(tmp_path: Path, django_capture_on_commit_callbacks) -> None:
    benchmark = _import(tmp_path / "v1", _lines(), django_capture_on_commit_callbacks)
    before = download_key(benchmark)
    sample = Sample.objects.get(uid="a")
    imported = Annotation.objects.get(sample=sample, status=AnnotationStatus.APPROVED)
    reviewer = get_user_model().objects.create_user("rev")
    with django_capture_on_commit_callbacks(execute=True):
        sample_approve(sample=sample, reviewer=reviewer, sources=dict.fromkeys(PARTS, imported.pk))
    assert download_key(benchmark) != before
    assert {r.key for r in _ready().values()} == {download_key(benchmark)}


def test_a_failed_build_says_so_and_the_command_builds_it_again(tmp_path: Path, django_capture_on_commit_callbacks,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**kwargs: object) -> int:
        raise OSError("disk full")

    monkeypatch.setitem(download_services.WRITERS, "tsv", broken)
    _import(tmp_path / "v1", _lines(), django_capture_on_commit_callbacks)
    failed = DataDownload.objects.filter(status=DownloadStatus.FAILED)
    assert sorted(failed.values_list("split", "kind")) == [("dev", "tsv"), ("test", "tsv")]
    assert "disk full" in failed.first().error
    monkeypatch.undo()
    out, err = StringIO(), StringIO()
    call_command("build_downloads", SLUG, "--sync", stdout=out, stderr=err)
    assert "2 to build" in out.getvalue() and err.getvalue() == ""
    assert len(_ready()) == 6


def test_a_burst_of_changes_builds_only_the_last_state(tmp_path: Path, django_capture_on_commit_callbacks) -> None:
    benchmark = _import(tmp_path / "v1", _lines(), django_capture_on_commit_callbacks)
    first = downloads_request(benchmark=benchmark, send=False)  # nothing new: the import's rows
    Sample.objects.filter(uid="a").update(question="Changed once?")
    Sample.objects.get(uid="a").save()  # moves updated_at, as an edit does
    second = downloads_request(benchmark=benchmark, send=False)
    Sample.objects.get(uid="b").save()
    third = downloads_request(benchmark=benchmark, send=False)
    assert first.requested == [] and len(second.requested) == len(third.requested) == 6
    # The tasks of the second state arrive after the third was asked for: they give way.
    assert [download_build(download_id=r.pk) for r in second.requested] == [False] * 6
    assert not DataDownload.objects.filter(pk__in=[r.pk for r in second.requested]).exists()
    assert all(download_build(download_id=r.pk) for r in third.requested)
    assert {r.key for r in _ready().values()} == {third.key} == {download_key(benchmark)}
