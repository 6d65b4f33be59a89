"""Scoring samples with several images (formats.md `images`): image references img1, ... are
the sample's other media, omitted outputs are numbered after them, and a zoom is compared with
the regions of the medium it looks at."""

from __future__ import annotations

import pytest

from evaluation.judges import OfflineJudge
from evaluation.metrics import ToolCall, effective_chain, score_submission
from evaluation.metrics.toolchain import input_media, resolve_refs
from evaluation.metrics.types import Sample


def call(name: str, inp: str | None = None, out: str | None = None, **args: object) -> ToolCall:
    return ToolCall(name=name, args=args, input=inp, output=out)


def test_omitted_outputs_are_numbered_after_the_samples_media() -> None:
    calls = [call("zoom_in", "img1"), call("rotate", "img0"), call("sharpen")]
    assert [dst for _, dst in resolve_refs(calls, n_images=3)] == ["img3", "img4", "img5"]
    # The answer drawn from img3 is the zoom on img1 alone; img5 comes from img0 through img4.
    assert effective_chain(calls, "img3", n_images=3) == (0,)
    assert effective_chain(calls, None, n_images=3) == (1, 2)
    # A call reading a medium links to no earlier call, even one whose output was numbered img1
    # when the sample was taken for a one-image sample (the bug this guards against).
    assert effective_chain([call("rotate"), call("zoom_in", "img1")], None, n_images=2) == (1,)
    assert effective_chain([call("rotate"), call("zoom_in", "img1")], None) == (0, 1)
    assert input_media(calls, 3) == ["img1", "img0", "img0"]


def test_a_sample_mapping_reads_images_and_located_regions() -> None:
    sample = Sample.from_mapping({"uid": "s", "images": ["a.png", "b.png"], "answer": "x",
                                  "regions": [[0, 0, 5, 5], {"box": [1, 1, 9, 9], "image": "img1"}]})
    assert sample.n_images == 2
    assert sample.regions == ((0, 0, 5, 5), (1, 1, 9, 9)) and sample.region_images == ("img0", "img1")
    assert Sample.from_mapping({"uid": "t", "answer": "x", "regions": [[0, 0, 5, 5]]}).region_images == ()


SAMPLES = [{
    "uid": "pair", "domain": "d", "category": "c", "answer": "7", "n_images": 2,
    "regions": [{"box": [0, 0, 100, 100], "image": "img1"}],
    "toolchain": [{"tool": "zoom_in", "args": {"bbox": [0, 0, 100, 100]}, "input": "img1"}],
}]


@pytest.mark.parametrize(("source", "expected_iou"), [("img1", 1.0), ("img0", 0.0)])
def test_a_zoom_counts_against_the_regions_of_the_image_it_looks_at(source: str, expected_iou: float) -> None:
    prediction = {"sample_id": "pair", "mode": "adaptive", "answer": "7", "steps": [
        {"thought": "Zoom into the second image.",
         "tool": {"name": "zoom_in", "args": {"bbox": [0, 0, 100, 100]}, "input": source}}]}
    report = score_submission(SAMPLES, [prediction], judge=OfflineJudge())
    (record,) = report.records
    assert record.iou == pytest.approx(expected_iou)
    assert record.effective == (0,) and record.edit_distance == 0.0
