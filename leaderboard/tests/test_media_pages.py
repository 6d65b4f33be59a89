"""The sample browser of the model page with a video sample and a sample with two images."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.imagetools import load_image
from evaluation.models import PredictionResult
from leaderboard.tests.media_bench import SLUG, make_media_benchmark, submit_media

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(tmp_path):  # noqa: ANN201
    benchmark = make_media_benchmark(tmp_path)
    return benchmark, submit_media(benchmark)


def test_a_video_sample_shows_its_player_poster_and_sampled_frames(scored) -> None:
    _, sub = scored
    html = Client().get(reverse("leaderboard:sample", args=[SLUG, sub.pk, "vid"])).content.decode()
    assert html.count("<video") == 1 and 'data-kind="video"' in html
    frames = re.findall(r'<img src="([^"]+/media/0/frame-\d)" alt="img0 frame (\d) at ([\d.]+) s"', html)
    assert [n for _, n, _ in frames] == [str(i) for i in range(1, 9)]
    assert "4.0 s; 8 frames sampled, the first is the poster" in html
    poster = re.search(r'poster="([^"]+)"', html).group(1)
    assert poster == frames[0][0]
    frame = Client().get(frames[3][0])
    assert frame["Content-Type"] == "image/jpeg" and load_image(frame.content).shape[:2] == (48, 64)
    video = Client().get(re.search(r'<video[^>]* src="([^"]+)"', html).group(1))
    assert video["Content-Type"] == "video/mp4" and video.content[4:8] == b"ftyp"


def test_a_two_image_sample_shows_both_and_reruns_the_zoom_on_the_second(scored) -> None:
    _, sub = scored
    html = Client().get(reverse("leaderboard:sample", args=[SLUG, sub.pk, "pair"])).content.decode()
    assert "img0: image 1 as given" in html and "img1: image 2 as given" in html
    assert "on img1" in html  # the call's input
    # The re-run zoom cut the second image (160x64) to the 90x40 box, not the first.
    rerun = Client().get(reverse("leaderboard:sample_image", args=[SLUG, sub.pk, "pair", "adaptive", "img2"]))
    pixels = load_image(rerun.content)
    assert pixels.shape[:2] == (40, 90) and tuple(pixels[5, 5]) == (60, 180, 20)
    result = PredictionResult.objects.get(submission=sub, sample__uid="pair", mode="adaptive")
    assert result.iou == pytest.approx(1.0)  # the zoom is scored against the region on img1


def test_test_split_media_are_not_served(scored) -> None:
    _, sub = scored
    for part in ("still", "frame-0", "file"):
        url = reverse("leaderboard:sample_medium", args=[SLUG, sub.pk, "hidden", 1, part])
        assert Client().get(url).status_code == 404
