"""The public sample browser re-runs a model's tool calls: an anonymous visitor must not be able to
make the server run a chain for nothing (an unknown image name, an unknown mode), and a chain runs
once per (submission, sample, mode) however many of its images are asked for (docs/security.md)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.urls import reverse

from annotation.imagetools import may_produce
from leaderboard import chain_runs


def _image(client, hand, mode: str, ref: str, uid: str = "s1"):  # noqa: ANN001, ANN202
    return client.get(reverse("leaderboard:sample_image", args=["hand", hand.alpha.pk, uid, mode, ref]))


@pytest.fixture
def counted():
    """Counts chain runs and prediction-file reads, running them for real."""
    with mock.patch.object(chain_runs, "run_chain", wraps=chain_runs.run_chain) as runs, \
            mock.patch.object(chain_runs.model_page, "prediction_lines",
                              wraps=chain_runs.model_page.prediction_lines) as reads:
        yield runs, reads


def test_an_unknown_image_name_is_a_404_without_running_the_chain(client, hand, counted) -> None:
    runs, _ = counted
    for mode, ref in (("adaptive", "img9"), ("adaptive", "nope"), ("adaptive", "img3"), ("text", "img1"),
                      ("bogus", "img0"), ("blind", "img1")):
        assert _image(client, hand, mode, ref).status_code == 404, (mode, ref)
    assert runs.call_count == 0


def test_a_chain_runs_once_per_sample_and_mode_for_all_its_images(client, hand, counted) -> None:
    runs, reads = counted
    # s1, adaptive: Alpha rotates (img1) then zooms (img2).
    for ref in ("img1", "img2", "img0", "img1", "img2"):
        response = _image(client, hand, "adaptive", ref)
        assert response.status_code == 200 and response.content[:8] == b"\x89PNG\r\n\x1a\n", ref
    assert runs.call_count == 1
    client.get(reverse("leaderboard:sample", args=["hand", hand.alpha.pk, "s1"]))  # the page reuses the run
    assert [c.args[1] != [] for c in runs.call_args_list].count(True) == 1
    assert reads.call_count == 1  # the prediction file is read once for the sample, not per request
    assert _image(client, hand, "adaptive", "img3").status_code == 404
    assert runs.call_count == 3  # the page ran text and oracle (no calls) once each; nothing more


def test_may_produce_knows_the_names_a_chain_can_make_without_running_it() -> None:
    chain = [{"tool": {"name": "rotate", "args": {"angle": 90}}},  # img1
             {"tool": "zoom_in", "args": {}, "input": "img1", "output": "crop"},
             {"tool": {"name": "zoom_in", "args": {}}}]  # img2
    for ref in ("img0", "img1", "crop", "img2"):
        assert may_produce(chain, ref), ref
    for ref in ("img3", "img01", "other", "", "img-1"):
        assert not may_produce(chain, ref), ref
    assert may_produce([], "img2", initial=["img0", "img1", "img2"]) and not may_produce([], "img3")
    assert may_produce([{"tool": "rotate", "output": "img7"}, {"tool": "rotate"}], "img8")  # after img7 comes img8
    assert not may_produce("not a list", "img1")
