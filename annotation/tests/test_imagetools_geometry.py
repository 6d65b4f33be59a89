"""Geometry tools on images whose answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.imagetools import ToolArgumentError, rotated_size

from .imagetools_helpers import call, canvas, marked, where_white

W, H, X, Y = 200, 120, 30, 10


@pytest.mark.parametrize(("angle", "expected_shape", "expected_point"), [
    (90, (W, H, 3), (Y, W - 1 - X)),          # counter-clockwise: top-left goes bottom-left
    (-90, (W, H, 3), (H - 1 - Y, X)),
    (270, (W, H, 3), (H - 1 - Y, X)),
    (180, (H, W, 3), (W - 1 - X, H - 1 - Y)),
    (450, (W, H, 3), (Y, W - 1 - X)),
    (0, (H, W, 3), (X, Y)),
])
def test_right_angle_rotation_moves_a_marked_pixel_exactly(angle, expected_shape, expected_point):
    out = call("rotate", marked(W, H, X, Y), angle=angle).image
    assert out.shape == expected_shape
    assert where_white(out) == [expected_point]


def test_four_quarter_turns_are_lossless():
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (57, 91, 3), dtype=np.uint8)
    out = image
    for _ in range(4):
        out = call("rotate", out, angle=90).image
    assert np.array_equal(out, image)


def test_other_angles_enlarge_the_canvas_and_keep_every_corner():
    image = canvas(W, H, 255)
    out = call("rotate", image, angle=30).image
    rad = math.radians(30)
    # 200 cos 30 + 120 sin 30 = 233.2 and 200 sin 30 + 120 cos 30 = 203.9, rounded up.
    assert out.shape[:2] == (204, 234)
    assert rotated_size(W, H, 30) == (234, 204) and rotated_size(W, H, -270) == (H, W)
    # Nothing cut: the white area is (almost) all of the original's.
    assert abs(np.count_nonzero(out[:, :, 0] > 127) - W * H) / (W * H) < 0.01
    # Counter-clockwise: a point right of the centre moves up.
    probe = canvas(201, 201)
    probe[100, 180] = 255
    moved = call("rotate", probe, angle=30).image
    ys, xs = np.nonzero(moved[:, :, 0] > 60)
    cy, cx = (moved.shape[0] - 1) / 2, (moved.shape[1] - 1) / 2
    assert abs(xs.mean() - (cx + 80 * math.cos(rad))) < 1.5
    assert abs(ys.mean() - (cy - 80 * math.sin(rad))) < 1.5


def test_rotation_fill_colour():
    out = call("rotate", canvas(50, 50), angle=45, fill="white").image
    assert tuple(out[0, 0]) == (255, 255, 255)


def test_crop_by_size_and_by_box():
    image = np.arange(H * W * 3, dtype=np.uint32).reshape(H, W, 3).astype(np.uint8)
    out = call("crop", image, x=10, y=20, width=30, height=40).image
    assert out.shape == (40, 30, 3)
    assert np.array_equal(out, image[20:60, 10:40])
    boxed = call("crop", image, bbox=[10, 20, 40, 60]).image
    assert np.array_equal(boxed, out)


def test_crop_outside_the_image_names_the_argument():
    with pytest.raises(ToolArgumentError,
                       match=r'argument "width": x \+ width \(210\) is outside the image width 200'):
        call("crop", canvas(W, H), x=10, y=0, width=200, height=10)
    with pytest.raises(ToolArgumentError, match='argument "y"'):
        call("crop", canvas(W, H), x=0, y=500, width=5, height=5)


@pytest.mark.parametrize(("args", "size"), [
    ({"width": 100, "height": 30}, (100, 30)),
    ({"width": 100}, (100, 60)),
    ({"height": 60}, (100, 60)),
    ({"preset": "half"}, (100, 60)),
    ({"preset": "double"}, (400, 240)),
])
def test_resize(args, size):
    out = call("resize", canvas(W, H), **args).image
    assert (out.shape[1], out.shape[0]) == size


def test_resize_refuses_an_output_above_the_pixel_limit():
    from annotation.imagetools import REGISTRY, Limits

    with pytest.raises(ToolArgumentError, match='argument "width".*above the limit'):
        REGISTRY["resize"](canvas(W, H), {"width": 5000, "height": 5000},
                           limits=Limits(max_pixels=1_000_000))


@pytest.mark.parametrize(("direction", "point"), [
    ("horizontal", (W - 1 - X, Y)), ("vertical", (X, H - 1 - Y)),
    ("both", (W - 1 - X, H - 1 - Y)),
])
def test_flip(direction, point):
    assert where_white(call("flip", marked(W, H, X, Y), direction=direction).image) == [point]


@pytest.mark.parametrize(("direction", "point"), [
    ("right", (X + 15, Y)), ("left", (X - 15, Y)), ("down", (X, Y + 15)),
])
def test_translate_moves_the_content_and_keeps_the_size(direction, point):
    out = call("translate", marked(W, H, X, Y), direction=direction, distance=15).image
    assert out.shape == (H, W, 3)
    assert where_white(out) == [point]


def test_translate_past_the_edge_leaves_black():
    out = call("translate", marked(W, H, X, Y), direction="up", distance=15).image
    assert where_white(out) == []


def test_pyramid_halves_and_doubles():
    assert call("pyramid", canvas(W, H), mode="pyr_down").image.shape == (H // 2, W // 2, 3)
    assert call("pyramid", canvas(W, H), mode="pyr_up").image.shape == (H * 2, W * 2, 3)
    assert call("pyramid", canvas(W, H), mode="pyr_down", levels=2).image.shape == (30, 50, 3)
