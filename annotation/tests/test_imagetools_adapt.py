"""AdaptMMBench's and Agent-X's tools on images whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.imagetools import REGISTRY, Limits, ToolArgumentError

from .imagetools_helpers import call, canvas, marked, where_white


def test_zoom_output_size_is_the_box():
    image = np.arange(120 * 200 * 3, dtype=np.uint32).reshape(120, 200, 3).astype(np.uint8)
    out = call("zoom_in", image, bbox=[20, 10, 120, 70])
    assert out.image.shape == (60, 100, 3)
    assert np.array_equal(out.image, image[10:70, 20:120])
    assert out.measurements["bbox"] == [20, 10, 120, 70]


def test_zoom_scale_and_fractional_boxes():
    assert call("zoom_in", canvas(), bbox=[20, 10, 120, 70], scale=2).image.shape == (120, 200, 3)
    assert call("zoom_in", canvas(), bbox=[20.4, 10.6, 119.5, 69.2]).image.shape == (60, 100, 3)


def test_zoom_accepts_the_forms_models_emit():
    image = marked(200, 120, 50, 40)
    for args in ({"bbox_2d": [40, 30, 60, 50]}, {"x": 40, "y": 30, "width": 20, "height": 20},
                 {"bbox": [40, 30, 60, 50], "label": "the dot"}):
        assert where_white(REGISTRY["zoom_in"](image, args).image) == [(10, 10)]


def test_zoom_outside_the_image_names_the_argument():
    with pytest.raises(ToolArgumentError) as caught:
        call("zoom_in", canvas(1200, 800), bbox=[100, 100, 5000, 300])
    assert str(caught.value) == 'argument "bbox": x2 (5000) is outside the image width 1200'
    with pytest.raises(ToolArgumentError, match='argument "bbox": y2 \\(90\\) must be greater'):
        call("zoom_in", canvas(), bbox=[10, 100, 20, 90])


def test_zoom_scale_is_bounded_by_the_pixel_limit():
    with pytest.raises(ToolArgumentError, match='argument "scale"'):
        REGISTRY["zoom_in"](canvas(1000, 1000), {"bbox": [0, 0, 1000, 1000], "scale": 8},
                            limits=Limits(max_pixels=10_000_000))


def test_contrast_is_linear_and_saturates():
    out = call("contrast", canvas(4, 4, 100), alpha=2, beta=-50).image
    assert int(out[0, 0, 0]) == 150
    assert int(call("contrast", canvas(4, 4, 10), alpha=2, beta=-50).image[0, 0, 0]) == 0
    assert int(call("contrast", canvas(4, 4, 200), alpha=2).image[0, 0, 0]) == 255


def test_brightness_adds_or_multiplies():
    assert int(call("brightness", canvas(4, 4, 100), beta=40).image[0, 0, 0]) == 140
    assert int(call("brightness", canvas(4, 4, 100), beta=-150).image[0, 0, 0]) == 0
    assert int(call("brightness", canvas(4, 4, 100), beta=0.5, additive=False).image[0, 0, 0]) == 50
    with pytest.raises(ToolArgumentError, match='argument "beta": with additive false'):
        call("brightness", canvas(), beta=40, additive=False)


def test_gamma_is_the_power_law():
    out = call("gamma", canvas(4, 4, 64), gamma=0.5).image  # below 1 brightens
    assert int(out[0, 0, 0]) == round(255 * (64 / 255) ** 0.5)
    assert int(call("gamma", canvas(4, 4, 64), gamma=2.0).image[0, 0, 0]) == round(
        255 * (64 / 255) ** 2)
    assert int(call("gamma", canvas(4, 4, 255), gamma=3).image[0, 0, 0]) == 255
    # Gamma g then gamma 1 / g gives the image back (up to rounding).
    ramp = np.tile(np.arange(256, dtype=np.uint8), (2, 1))
    back = call("gamma", call("gamma", ramp, gamma=0.8).image, gamma=1.25).image
    assert np.abs(back.astype(int) - ramp).max() <= 2


def test_aux_line_between_points_and_extended_to_the_border():
    short = call("draw_aux_line", canvas(200, 100), x1=50, y1=50, x2=100, y2=50)
    assert short.measurements["line"] == [50, 50, 100, 50]
    assert short.image[50, 20].max() == 0
    long = call("draw_aux_line", canvas(200, 100), x1=50, y1=50, x2=100, y2=50, extend=True)
    assert long.image[50, 0, 2] > 0 and long.image[50, 199, 2] > 0
    assert long.measurements["line"][0] == 0 and long.measurements["line"][2] >= 199
    slope = call("draw_aux_line", canvas(200, 100), x1=0, y1=0, x2=10, y2=10, extend=True)
    assert slope.measurements["line"][:2] == [0, 0] and slope.measurements["line"][3] >= 99


def test_aux_line_needs_two_points():
    with pytest.raises(ToolArgumentError, match='argument "x2": the two points are the same'):
        call("draw_aux_line", canvas(), x1=5, y1=5, x2=5, y2=5, extend=True)


def test_draw_bbox_with_a_label():
    out = call("draw_bbox", canvas(200, 120), bbox=[40, 50, 160, 100], label="cat",
               color="green", thickness=1).image
    assert tuple(out[50, 100]) == (0, 255, 0) and tuple(out[99, 100]) == (0, 255, 0)
    assert tuple(out[75, 100]) == (0, 0, 0)
    label_area = out[30:50, 40:100]
    assert (label_area == (0, 255, 0)).all(axis=2).sum() > 50  # the label's background
    with pytest.raises(ToolArgumentError, match='argument "bbox": x2 \\(500\\) is outside'):
        call("draw_bbox", canvas(200, 120), bbox=[40, 50, 500, 100])


def test_draw_text_writes_near_the_point():
    out = call("draw_text", canvas(300, 100), text="Total 831K", x=20, y=30, color="white").image
    ys, xs = np.nonzero(out.max(axis=2) > 0)
    assert ys.min() >= 28 and xs.min() >= 18 and ys.max() < 60
    two_lines = call("draw_text", canvas(300, 100), text="a\nb", x=20, y=10).image
    ys, _ = np.nonzero(two_lines.max(axis=2) > 0)
    assert ys.max() - ys.min() > 30
