"""Trace review of samples with several media: the gallery, the parts served to the reviewer only,
and the re-run chain on the second image."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.imagetools import load_image
from annotation.models import Role
from leaderboard.tests.media_bench import make_media_benchmark, submit_media
from trace_review import services
from trace_review.tests.helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:  # noqa: ANN001
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_a_reviewer_sees_every_medium_and_the_zoom_rerun_on_img1(tmp_path) -> None:
    benchmark = make_media_benchmark(tmp_path)
    sub = submit_media(benchmark)
    reviewer = make_user("r1", benchmark, Role.ANNOTATOR)
    batch = services.batch_create(benchmark=benchmark, name="Media", size=10, submission=sub)
    pages = {}
    while (assignment := services.trace_claim_next(user=reviewer, batch=batch)) is not None:
        html = signed_in(reviewer).get(reverse("trace_review:review", args=[assignment.pk])).content.decode()
        pages[assignment.trace.sample.uid] = (assignment, html)
        services.trace_skip(assignment=assignment)
    assignment, html = pages["pair"]
    assert 'id="sample-media"' in html and 'data-ref="img1"' in html
    assert "img1: image, 160 × 64 · region [10.0, 10.0, 100.0, 50.0]" in html
    still = signed_in(reviewer).get(reverse("trace_review:medium", args=[assignment.pk, 1, "still"]))
    assert load_image(still.content).shape[:2] == (64, 160)
    rerun = re.search(r'<img class="rerun" src="([^"]+)"', html).group(1)
    assert load_image(signed_in(reviewer).get(rerun).content).shape[:2] == (40, 90)  # cut from img1
    _, video_page = pages["vid"]
    assert video_page.count("<video") == 1 and len(re.findall(r'alt="img0 frame \d at', video_page)) == 8
    outsider = make_user("nobody")
    assert signed_in(outsider).get(reverse("trace_review:medium", args=[assignment.pk, 1, "still"])).status_code == 404
