"""Private storage (docs/security.md): prediction files and sample images live outside MEDIA_ROOT,
under names nobody can guess, and reach a browser only through views that check access."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import override_settings

from annotation.models import Sample
from config.storages import check_private_root, private_storage
from evaluation.models import Submission
from evaluation.tests.submission_helpers import good_file, make_benchmark, upload

RANDOM_NAME = re.compile(r"^submissions/\d{4}/\d{2}/[0-9a-f]{32}\.jsonl$")


def _under(path: str | Path, root: str | Path) -> bool:
    return Path(root).resolve() in Path(path).resolve().parents


@pytest.fixture(autouse=True)
def empty_media_root(settings, tmp_path):
    """A fresh MEDIA_ROOT, so "nothing was written there" is about this test alone."""
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def bench(tmp_path, db):
    return make_benchmark(tmp_path)


@pytest.fixture
def people(db):
    users = get_user_model().objects
    return {"owner": users.create_user("owner", password="pw"), "other": users.create_user("other", password="pw"),
            "staff": users.create_user("staff", password="pw", is_staff=True)}


@pytest.fixture
def uploaded(client, bench, people, django_capture_on_commit_callbacks) -> Submission:
    client.force_login(people["owner"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/submissions/new/", {"benchmark": "tiny", "file": upload(good_file(), "preds.jsonl"),
                                                     "model_name": "m1"})
    assert response.status_code == 302, response.content[:500]
    client.logout()
    return Submission.objects.get()


def test_an_uploaded_prediction_file_is_private_and_its_name_random(uploaded: Submission) -> None:
    name = uploaded.file.name
    assert RANDOM_NAME.match(name), name  # not the benchmark's slug, not the uploader's file name
    assert uploaded.original_name == "preds.jsonl"
    assert _under(uploaded.file.path, django_settings.PRIVATE_MEDIA_ROOT)
    assert not default_storage.exists(name)  # nothing under MEDIA_ROOT, which a static server may hand out
    with pytest.raises(ValueError, match="no public URL"):
        uploaded.file.url  # noqa: B018 - a template asking for a link fails loudly instead of leaking one


@pytest.mark.django_db
def test_two_uploads_of_one_file_name_get_unrelated_names(bench, people) -> None:
    from evaluation import services

    a = services.submission_create(benchmark=bench, owner=people["staff"], file=upload(good_file(), "p.jsonl"),
                                   model_name="a")
    b = services.submission_create(benchmark=bench, owner=people["staff"], file=upload(good_file(), "p.jsonl"),
                                   model_name="b")
    assert a.file.name != b.file.name and RANDOM_NAME.match(a.file.name) and RANDOM_NAME.match(b.file.name)


@pytest.mark.django_db
def test_imported_sample_images_are_in_private_storage(bench) -> None:
    for sample in Sample.objects.filter(benchmark=bench):
        assert _under(sample.image.path, django_settings.PRIVATE_MEDIA_ROOT)
        assert not default_storage.exists(sample.image.name)
        with pytest.raises(ValueError):
            sample.image.url  # noqa: B018


def test_the_prediction_file_is_served_to_its_owner_and_staff_only(client, uploaded, people) -> None:
    url = f"/submissions/{uploaded.pk}/file/"
    assert client.get(url).status_code == 302  # anonymous: to the login page
    for who, status in (("other", 404), ("owner", 200), ("staff", 200)):
        client.force_login(people[who])
        response = client.get(url)
        assert response.status_code == status, who
        if status == 200:
            assert b"".join(response.streaming_content) == good_file()
            assert 'filename="preds.jsonl"' in response["Content-Disposition"]


def test_the_private_root_may_not_be_inside_the_media_root_or_hold_it(tmp_path: Path) -> None:
    assert check_private_root() == []
    for media, private in ((tmp_path, tmp_path / "private"), (tmp_path / "media", tmp_path), (tmp_path, tmp_path)):
        with override_settings(MEDIA_ROOT=media, PRIVATE_MEDIA_ROOT=private):
            assert [e.id for e in check_private_root()] == ["storages.E001"]
    assert not _under(django_settings.PRIVATE_MEDIA_ROOT, django_settings.MEDIA_ROOT)


@pytest.mark.django_db
def test_the_migrations_move_existing_files_out_of_the_media_root(bench, people,
                                                                   django_capture_on_commit_callbacks) -> None:
    """Files written before private storage existed: moved, a prediction file renamed, the old copy gone
    once the transaction commits; running the migration again changes nothing."""
    old_file = default_storage.save("submissions/2025/01/tiny.jsonl", ContentFile(b'{"sample_id": "s1"}\n'))
    sub = Submission.objects.create(benchmark=bench, owner=people["owner"], model_name="old", file="placeholder")
    Submission.objects.filter(pk=sub.pk).update(file=old_file)
    sample = Sample.objects.filter(benchmark=bench).first()
    image = private_storage().open(sample.image.name).read()
    old_image = default_storage.save("benchmarks/legacy/ab/abcdef.png", ContentFile(image))
    Sample.objects.filter(pk=sample.pk).update(image=old_image)
    moves = (importlib.import_module("annotation.migrations.0005_private_storage").move_media,
             importlib.import_module("evaluation.migrations.0007_private_storage").move_files)

    with django_capture_on_commit_callbacks(execute=True):
        for move in moves:
            move(apps, None)
    sub.refresh_from_db()
    sample.refresh_from_db()
    assert RANDOM_NAME.match(sub.file.name) and sub.file.read() == b'{"sample_id": "s1"}\n'
    assert sample.image.name == old_image and private_storage().open(old_image).read() == image
    assert not default_storage.exists(old_file) and not default_storage.exists(old_image)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for move in moves:
            move(apps, None)
    assert callbacks == []
    assert Submission.objects.get(pk=sub.pk).file.name == sub.file.name
    private_storage().delete(old_image)
