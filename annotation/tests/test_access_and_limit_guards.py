"""Checks that refuse a user or an image, each with a test that fails when the check is removed
or moved (issue 13): the COCO export's reviewer check, and the default pixel cap (64,000,000:
an image of exactly the cap passes, one pixel more is refused)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from PIL import Image

from annotation.benchmark_format import BenchmarkFileError
from annotation.imagetools import ImageTooLarge, load_image
from annotation.models import Sample
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark
from annotation.tests.workbench_helpers import PASSWORD, bench, people  # noqa: F401

CAP = 64_000_000
EXACT = (8000, 8000)  # 64,000,000 pixels
OVER = (5213, 12277)  # 64,000,001 pixels


def _client(user=None) -> Client:  # noqa: ANN001
    client = Client()
    if user is not None:
        assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.mark.django_db
def test_only_a_reviewer_gets_the_coco_export(bench, people) -> None:  # noqa: F811
    """Bug: the COCO export view without its reviewer check."""
    url = reverse("annotation:export_coco", args=[bench.slug])
    got = _client(people["rev"]).get(url)
    assert got.status_code == 200
    # The imported samples' approved region [10, 10, 60, 40] as COCO [x, y, width, height].
    assert [a["bbox"] for a in got.json()["annotations"]] == [[10, 10, 50, 30]] * 3
    for who in ("ann1", "outsider"):
        refused = _client(people[who]).get(url)
        assert refused.status_code == 403, who
        assert b"bbox" not in refused.content
    anonymous = _client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def _blank_png(path: Path, size: tuple[int, int]) -> None:
    Image.new("1", size).save(path)  # a few kB however many pixels


@pytest.mark.django_db
def test_import_takes_an_image_of_exactly_the_default_cap_and_refuses_one_pixel_more(tmp_path, settings) -> None:
    """Bugs: the default IMAGE_MAX_PIXELS raised tenfold (or lowered by one); the check off by one."""
    from config.settings import base

    settings.IMAGE_MAX_PIXELS = base.IMAGE_MAX_PIXELS  # the default, whatever this run's settings say
    path = write_benchmark(tmp_path, [sample_line("exact", regions=[]), sample_line("over", regions=[])])
    _blank_png(tmp_path / "images" / "exact.png", EXACT)
    _blank_png(tmp_path / "images" / "over.png", OVER)
    with pytest.raises(BenchmarkFileError) as refused:
        benchmark_import(path=path, slug="caps")
    errors = refused.value.errors
    assert len(errors) == 1 and errors[0].line == 2 and errors[0].field == "image", str(refused.value)
    assert "5213x12277" in errors[0].message and re.search(r"64,?000,?000", errors[0].message)
    assert not Sample.objects.exists()  # nothing written

    path.write_text(path.read_text().splitlines()[0] + "\n")  # the exact-cap line alone
    benchmark_import(path=path, slug="caps")
    assert Sample.objects.get(uid="exact").width * Sample.objects.get(uid="exact").height == CAP


def test_the_tool_librarys_default_cap_is_the_same(tmp_path) -> None:
    """Bugs: the image library's default cap raised tenfold or moved by one."""
    over = tmp_path / "over.png"
    _blank_png(over, OVER)
    with pytest.raises(ImageTooLarge, match=r"5213x12277 = 64,000,001 pixels, above the limit of 64,000,000"):
        load_image(over)  # refused from the header, before any decoding
    exact = tmp_path / "exact.png"
    _blank_png(exact, EXACT)
    assert load_image(exact).shape == (8000, 8000, 3)
