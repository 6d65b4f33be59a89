"""Samples with several images or a video: import, storage, export, and the errors they can have.

Also the image checks of issue 13: a truncated image and a decompression bomb are refused at
import with the line and field, instead of passing (truncated) or crashing the import (bomb).
"""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.imagetools import load_image
from annotation.media import chain_inputs, media_of, read_file
from annotation.models import Annotation, Region, Sample, SampleMedia
from annotation.tests.benchmark_files import sample_line
from annotation.tests.media_files import frame_color, png_claiming, truncated, write_image, write_video

pytestmark = pytest.mark.django_db


def write_lines(folder: Path, lines: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "benchmark.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def run_import(path: Path, slug: str = "bench") -> str:
    out = StringIO()
    call_command("import_benchmark", str(path), slug=slug, stdout=out, stderr=StringIO(), no_progress=True)
    return out.getvalue()


def import_errors(path: Path) -> str:
    with pytest.raises(CommandError) as excinfo:
        call_command("import_benchmark", str(path), slug="bad", no_progress=True)
    assert Sample.objects.count() == 0
    return str(excinfo.value)


def two_image_line(uid: str = "pair", **overrides: object) -> dict:
    fields: dict = {
        "image": None,
        "images": [f"images/{uid}-left.png", f"images/{uid}-right.png"],
        "transform": [],
        "regions": [[5, 5, 40, 40], {"box": [10, 20, 150, 60], "image": "img1"}],
        "toolchain": [
            {"tool": "zoom_in", "args": {"bbox": [10, 20, 150, 60]}, "input": "img1"},
            {"tool": "rotate", "args": {"angle": 90}, "input": "img0"},
        ],
    }
    return sample_line(uid, **{**fields, **overrides})


def write_pair(folder: Path, uid: str = "pair") -> None:
    write_image(folder / "images" / f"{uid}-left.png", (80, 120), (200, 90, 30))
    write_image(folder / "images" / f"{uid}-right.png", (160, 64), (20, 180, 60))


def test_a_sample_with_two_images_keeps_both_in_order_with_regions_and_chain_on_the_second(tmp_path: Path) -> None:
    write_pair(tmp_path)
    run_import(write_lines(tmp_path, [two_image_line()]))
    sample = Sample.objects.get(uid="pair")
    media = media_of(sample)
    assert [(m.ref, m.kind, m.width, m.height) for m in media] == [("img0", "image", 80, 120), ("img1", "image", 160, 64)]
    # Sample.image stays the first medium, so single-image code keeps working.
    assert (sample.width, sample.height) == (80, 120)
    assert sample.image.name == media[0].file.name
    right = load_image(read_file(media[1].file.name))
    assert tuple(right[0, 0]) == (60, 180, 20)  # BGR of the second file, stored as given
    annotation = Annotation.objects.get(sample=sample)
    assert [(r.image_ref, r.as_box()) for r in annotation.regions.all()] == [
        ("img0", [5, 5, 40, 40]), ("img1", [10, 20, 150, 60])
    ]
    # The calls' omitted outputs are numbered after the media: img2, img3.
    assert [(c.input_ref, c.output_ref) for c in annotation.tool_calls.all()] == [("img1", "img2"), ("img0", "img3")]
    img0, extras = chain_inputs(sample)
    assert img0.shape[:2] == (120, 80) and list(extras) == ["img1"] and extras["img1"].shape[:2] == (64, 160)


def test_a_video_is_stored_as_uploaded_with_eight_frames_and_its_poster_as_the_sample_image(tmp_path: Path) -> None:
    video = write_video(tmp_path / "clips" / "walk.mp4", frames=40)
    run_import(write_lines(tmp_path, [sample_line("clip", image="clips/walk.mp4", transform=[], regions=[],
                                                  toolchain=[])]))  # fmt: skip
    sample = Sample.objects.get(uid="clip")
    (medium,) = media_of(sample)
    assert (medium.kind, medium.width, medium.height, medium.duration) == ("video", 64, 48, 4.0)
    assert read_file(medium.file.name) == video.read_bytes()  # the file as uploaded
    assert medium.file.name.endswith(".mp4") and medium.sha256 == hashlib.sha256(video.read_bytes()).hexdigest()
    times = [f["time"] for f in medium.frames]
    assert len(times) == 8 and times == sorted(times) and times[0] == 0.2 and times[-1] == 3.7
    # Each stored frame is the video's frame at that time (colour within JPEG and codec loss).
    for frame in medium.frames:
        pixels = load_image(read_file(frame["name"]))
        assert np.abs(pixels[24, 32].astype(int) - frame_color(round(frame["time"] * 10))).max() <= 12
    # The poster (first frame) is the sample's image: the workbench and the tool runner use it.
    assert sample.image.name == medium.frames[0]["name"] and (sample.width, sample.height) == (64, 48)


@pytest.mark.parametrize("suffix", [".avi", ".mov"])
def test_avi_and_mov_videos_are_read_too(tmp_path: Path, suffix: str) -> None:
    write_video(tmp_path / f"clip{suffix}", frames=12)
    run_import(write_lines(tmp_path, [sample_line("v", image=f"clip{suffix}", transform=[], regions=[],
                                                  toolchain=[])]))  # fmt: skip
    (medium,) = media_of(Sample.objects.get(uid="v"))
    assert medium.kind == "video" and medium.file.name.endswith(suffix) and len(medium.frames) == 8


def test_media_are_recognised_by_content_not_by_name(tmp_path: Path) -> None:
    # A video saved as .jpg is a video; a PNG saved as .mp4 is an image (Agent-X has such files).
    write_video(tmp_path / "odd.mp4.tmp.mp4").rename(tmp_path / "odd.jpg")
    write_image(tmp_path / "odd.mp4", (30, 20))
    run_import(write_lines(tmp_path, [sample_line("o", images=["odd.jpg", "odd.mp4"], image=None, transform=[],
                                                  regions=[], toolchain=[])]))  # fmt: skip
    media = media_of(Sample.objects.get(uid="o"))
    assert [(m.kind, Path(m.file.name).suffix) for m in media] == [("video", ".mp4"), ("image", ".png")]


def test_export_writes_images_and_the_round_trip_keeps_every_medium(tmp_path: Path) -> None:
    write_pair(tmp_path / "in")
    write_video(tmp_path / "in" / "clip.avi", frames=10)
    lines = [two_image_line(), sample_line("one"), sample_line("v", images=["images/pair-left.png", "clip.avi"],
                                                                  image=None, transform=[], regions=[], toolchain=[])]
    write_image(tmp_path / "in" / "images" / "one.png")
    run_import(write_lines(tmp_path / "in", lines))
    call_command("export_benchmark", "bench", str(tmp_path / "out"), stdout=StringIO())
    exported = {d["uid"]: d for d in map(json.loads, (tmp_path / "out" / "benchmark.jsonl").read_text().splitlines())}
    assert exported["pair"]["images"] == ["images/pair.png", "images/pair-1.png"]
    assert exported["pair"]["image"] == "images/pair.png"
    assert exported["pair"]["regions"] == [[5, 5, 40, 40], {"box": [10, 20, 150, 60], "image": "img1"}]
    assert exported["v"]["images"] == ["images/v.png", "images/v-1.avi"]
    assert "images" not in exported["one"]  # a one-image sample keeps the one-image shape
    assert (tmp_path / "out" / "images" / "v-1.avi").read_bytes() == (tmp_path / "in" / "clip.avi").read_bytes()

    def state(slug: str) -> dict:
        samples = Sample.objects.filter(benchmark__slug=slug)
        media = {s.uid: [(m.kind, m.sha256, m.width, m.height) for m in media_of(s)] for s in samples}
        regions = {s.uid: [(r.image_ref, r.as_box()) for r in Region.objects.filter(annotation__sample=s)] for s in samples}
        return {"media": media, "regions": regions}

    out = run_import(tmp_path / "out", slug="again")
    assert "3 created" in out
    assert state("again") == state("bench")


def test_reimporting_the_same_media_changes_nothing_and_a_new_second_image_is_an_update(tmp_path: Path) -> None:
    write_pair(tmp_path)
    path = write_lines(tmp_path, [two_image_line()])
    run_import(path)
    assert "0 created, 0 updated, 1 unchanged" in run_import(path)
    write_image(tmp_path / "images" / "pair-right.png", (160, 64), (1, 2, 3))
    assert "0 created, 1 updated, 0 unchanged" in run_import(path)
    assert SampleMedia.objects.count() == 2


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({"regions": [{"box": [0, 0, 10, 10], "image": "img2"}]},
                     "line 1, field 'regions[1].image': 'img2' is not an image of the sample (expected one of img0, img1)",
                     id="region-on-a-medium-that-is-not-there"),
        pytest.param({"regions": [{"box": [0, 0, 161, 10], "image": "img1"}]},
                     "line 1, field 'regions[1]': [0, 0, 161, 10] lies outside img1 (160x64)",
                     id="region-outside-the-second-image"),
        pytest.param({"toolchain": [{"tool": "rotate", "args": {"angle": 90}, "input": "img2"}]},
                     "line 1, field 'toolchain[1].input': 'img2' is not img0 or img1 or the output",
                     id="chain-on-a-medium-that-is-not-there"),
        pytest.param({"toolchain": [{"tool": "rotate", "args": {"angle": 90}, "output": "img1"}]},
                     "line 1, field 'toolchain[1].output': 'img1' is already defined",
                     id="chain-overwrites-a-medium"),
        pytest.param({"image": "images/pair-right.png"},
                     "line 1, field 'image': 'images/pair-right.png' differs from images[1]",
                     id="image-is-not-the-first"),
        pytest.param({"images": "images/pair-left.png"},
                     "line 1, field 'images': expected a non-empty list of media paths, got a string",
                     id="images-not-a-list"),
        pytest.param({"images": ["images/pair-left.png", "images/missing.png"]},
                     "line 1, field 'images[2]': image file 'images/missing.png' not found",
                     id="second-image-missing"),
        pytest.param({"images": None},
                     "line 1, field 'image': missing (required)",
                     id="no-image-at-all"),
    ],
)
def test_bad_media_fields_name_the_line_and_field(tmp_path: Path, overrides: dict, expected: str) -> None:
    write_pair(tmp_path)
    assert expected in import_errors(write_lines(tmp_path, [two_image_line(**overrides)]))


def test_a_file_that_only_looks_like_a_video_is_refused(tmp_path: Path) -> None:
    (tmp_path / "fake.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200)
    message = import_errors(write_lines(tmp_path, [sample_line("f", image="fake.mp4", transform=[], regions=[],
                                                               toolchain=[])]))  # fmt: skip
    assert "line 1, field 'image': 'fake.mp4'" in message
    assert "OpenCV cannot open it" in message or "no frame of the video could be decoded" in message


# --- issue 13: images that pass the header check but cannot be used ----------------------------


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_a_truncated_image_is_refused_at_import_with_line_and_field(tmp_path: Path, fmt: str) -> None:
    write_image(tmp_path / "images" / "ok.png")
    (tmp_path / "images" / "cut.img").write_bytes(truncated(fmt))
    message = import_errors(write_lines(tmp_path, [sample_line("ok"), sample_line("cut", image="images/cut.img",
                                                                                 regions=[], toolchain=[])]))
    assert "line 2, field 'image': 'images/cut.img' is damaged and cannot be decoded" in message


def test_a_truncated_second_image_is_named_by_its_position(tmp_path: Path) -> None:
    write_pair(tmp_path)
    (tmp_path / "images" / "pair-right.png").write_bytes(truncated("PNG"))
    message = import_errors(write_lines(tmp_path, [two_image_line(regions=[], toolchain=[])]))
    assert "line 1, field 'images[2]': 'images/pair-right.png' is damaged and cannot be decoded" in message


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        # Above twice Pillow's own limit, Image.open raises DecompressionBombError (it crashed the import).
        pytest.param((30000, 30000), "claims 900000000 pixels in its header, over the limit of 64000000", id="bomb"),
        # Between our cap and Pillow's: refused from the header by our own check.
        pytest.param((10000, 10000), "is 10000x10000 pixels, over the limit of 64000000", id="over-the-cap"),
    ],
)
def test_an_oversized_image_gets_a_line_and_field_message(tmp_path: Path, size: tuple[int, int], expected: str) -> None:
    (tmp_path / "big.png").write_bytes(png_claiming(*size))
    message = import_errors(write_lines(tmp_path, [sample_line("big", image="big.png", regions=[], toolchain=[])]))
    assert f"line 1, field 'image': 'big.png' {expected}" in message


def test_coco_export_gives_a_region_on_the_second_image_its_own_image_entry(tmp_path: Path) -> None:
    from annotation.coco import coco_from_benchmark
    from annotation.models import Benchmark

    write_pair(tmp_path)
    run_import(write_lines(tmp_path, [two_image_line()]))
    coco = coco_from_benchmark(Benchmark.objects.get(slug="bench"))
    assert [(i["file_name"], i["width"], i["height"]) for i in coco["images"]] == [
        ("images/pair.png", 80, 120), ("images/pair-1.png", 160, 64)]
    assert [(a["image_id"], a["bbox"]) for a in coco["annotations"]] == [(1, [5, 5, 35, 35]), (2, [10, 20, 140, 40])]


def test_the_database_keeps_media_well_formed(tmp_path: Path) -> None:
    from django.db import IntegrityError, transaction

    write_pair(tmp_path)
    run_import(write_lines(tmp_path, [two_image_line()]))
    sample = Sample.objects.get(uid="pair")
    first = SampleMedia.objects.get(sample=sample, position=0)
    bad = [
        {"position": 0},  # a second img0
        {"position": 5, "kind": "video"},  # a video without its frames (no poster)
        {"position": 5, "frames": [{"name": "x.jpg", "time": 0}]},  # frames on an image
        {"position": 5, "kind": "audio"},
        {"position": 5, "width": 0},
    ]
    for change in bad:
        fields = {"sample": sample, "position": 0, "kind": "image", "file": first.file.name, "sha256": first.sha256,
                  "width": 10, "height": 10, "frames": [], **change}
        with pytest.raises(IntegrityError), transaction.atomic():
            SampleMedia.objects.create(**fields)
