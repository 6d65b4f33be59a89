"""Feature-extraction tools on images whose answer is known."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from annotation.imagetools import REGISTRY, ToolArgumentError

from .imagetools_helpers import call, canvas, textured


def test_edges_follow_a_square_outline():
    image = np.zeros((100, 100), np.uint8)
    image[30:70, 30:70] = 255
    out = call("edge_detect", image)
    edges = out.image
    assert set(np.unique(edges).tolist()) == {0, 255}
    assert edges[45:55, 45:55].max() == 0            # no edge inside
    assert edges[0:20].max() == 0                    # none in the background
    assert edges[50, 28:32].max() == 255             # one on the left side
    assert 140 <= out.measurements["edge_pixels"] <= 170  # about the 4 x 40 outline


def test_edge_thresholds_must_be_ordered():
    with pytest.raises(ToolArgumentError, match='argument "threshold_high"'):
        call("edge_detect", canvas(), threshold_low=200, threshold_high=100)


def test_line_detect_finds_a_drawn_segment():
    image = canvas(400, 200)
    cv2.line(image, (50, 100), (350, 100), (255, 255, 255), 3)
    cv2.line(image, (200, 20), (200, 80), (255, 255, 255), 3)
    out = call("line_detect", image, threshold=50, min_line_length=40)
    lines = out.measurements["lines"]
    assert out.measurements["count"] == len(lines) >= 2
    x1, y1, x2, y2 = lines[0]  # longest first
    assert abs(y1 - 100) <= 3 and abs(y2 - 100) <= 3 and abs(x2 - x1) >= 280
    assert any(abs(ln[0] - 200) <= 3 and abs(ln[2] - 200) <= 3 and abs(ln[3] - ln[1]) >= 50
               for ln in lines)


def test_circle_detect_finds_the_centre_within_two_pixels():
    image = canvas(320, 240, (30, 30, 30))
    cv2.circle(image, (150, 120), 40, (220, 220, 220), -1)
    out = call("circle_detect", image, min_dist=50, param2=25, min_radius=20, max_radius=80)
    assert out.measurements["count"] >= 1
    x, y, r = min(out.measurements["circles"], key=lambda c: math.hypot(c[0] - 150, c[1] - 120))
    assert math.hypot(x - 150, y - 120) <= 2
    assert abs(r - 40) <= 3


def test_circle_radius_bounds_are_checked():
    with pytest.raises(ToolArgumentError, match='argument "max_radius"'):
        call("circle_detect", canvas(), min_radius=50, max_radius=10)


def test_gradients_respond_to_the_edge_direction():
    image = np.zeros((40, 40), np.uint8)
    image[:, 20:] = 200  # a vertical edge
    sobel_x = call("gradients", image, mode="sobel_x").image
    sobel_y = call("gradients", image, mode="sobel_y").image
    laplacian = call("gradients", image, mode="laplacian").image
    magnitude = call("gradients", image, mode="magnitude").image
    assert sobel_x[:, 19:21].min() == 255 and sobel_x[:, :17].max() == 0
    assert sobel_y.max() == 0
    assert laplacian[:, 19:21].max() > 0 and laplacian[:, :17].max() == 0
    assert magnitude[:, 19:21].min() > 100


def test_template_match_finds_a_named_template():
    image = textured()
    template = image[45:65, 120:150].copy()
    out = REGISTRY["template_match"](image, {"template": "tpl"}, images={"tpl": template})
    assert out.measurements["location"] == [120, 45]
    assert out.measurements["bbox"] == [120, 45, 150, 65]
    assert out.measurements["score"] > 0.99


@pytest.mark.parametrize("method", ["sqdiff", "sqdiff_normed", "ccorr_normed", "ccoeff",
                                    "TM_CCOEFF_NORMED"])
def test_template_match_methods_agree_on_the_location(method):
    image = textured(seed=5)
    template = image[100:130, 200:240].copy()
    out = REGISTRY["template_match"](image, {"template": "t", "method": method},
                                     images={"t": template})
    assert out.measurements["location"] == [200, 100]


def test_template_match_with_a_box_counts_the_repeats():
    image = canvas(300, 100, (255, 255, 255))
    stamp = textured(30, 30, seed=9)
    for x in (20, 130, 240):
        image[35:65, x:x + 30] = stamp
    out = call("template_match", image, template=[130, 35, 160, 65], threshold=0.9)
    assert out.measurements["count"] == 3
    assert sorted(m["bbox"][0] for m in out.measurements["matches"]) == [20, 130, 240]


def test_template_larger_than_the_image():
    with pytest.raises(ToolArgumentError, match='argument "template": the template'):
        REGISTRY["template_match"](canvas(20, 20), {"template": "big"},
                                   images={"big": canvas(40, 40)})
    with pytest.raises(ToolArgumentError, match='argument "template": "nope" is not a known image'):
        call("template_match", canvas(), template="nope")


def _discs(*centres: tuple[int, int], radius: int = 40, size=(400, 200)) -> np.ndarray:
    image = canvas(*size)
    for centre in centres:
        cv2.circle(image, centre, radius, (255, 255, 255), -1)
    return image


def test_watershed_splits_two_touching_discs():
    image = _discs((140, 100), (250, 100), radius=60, size=(400, 220))
    # One blob for connected components...
    assert call("connected_components", image).measurements["count"] == 1
    # ...two regions for watershed.
    out = call("watershed", image)
    assert out.measurements["count"] == 2
    xs = sorted(r["centroid"][0] for r in out.measurements["regions"])
    assert abs(xs[0] - 140) < 15 and abs(xs[1] - 250) < 15
    assert (out.image[:, :, 2] == 255).sum() > 0  # boundaries drawn in red


def test_watershed_max_regions_keeps_the_largest_seeds():
    image = _discs((60, 100), (200, 100), (330, 100), radius=30, size=(400, 200))
    assert call("watershed", image).measurements["count"] == 3
    # Seeds are cut by the largest distance: all three discs are the same, keep two.
    assert call("watershed", image, max_regions=2).measurements["count"] == 2


def test_grabcut_separates_a_disc_from_a_textured_background():
    image = textured(200, 160, seed=1) // 3  # dark, busy background
    cv2.circle(image, (100, 80), 40, (40, 200, 240), -1)
    out = call("grabcut", image, rect=[50, 30, 150, 130], iterations=3)
    truth = np.zeros(image.shape[:2], bool)
    cv2.circle(truth.view(np.uint8), (100, 80), 40, 1, -1)
    found = out.image.max(axis=2) > 0
    iou = (found & truth).sum() / (found | truth).sum()
    assert iou > 0.85
    assert out.measurements["foreground_pixels"] == int(found.sum())


def test_grabcut_downscales_a_large_image_and_scales_the_mask_back():
    image = canvas(800, 600, (20, 20, 20))
    cv2.circle(image, (400, 300), 150, (230, 230, 230), -1)
    out = call("grabcut", image, rect=[200, 100, 600, 500], iterations=2)
    assert out.image.shape == image.shape
    x1, y1, x2, y2 = out.measurements["bbox"]
    assert abs(x1 - 250) <= 6 and abs(x2 - 551) <= 6 and abs(y1 - 150) <= 6


def test_connected_components_counts_blobs_exactly():
    image = canvas(300, 200)
    rng = np.random.default_rng(0)
    for i in range(7):
        x, y = 20 + 40 * i, int(rng.integers(20, 170))
        cv2.rectangle(image, (x, y), (x + 20, y + 10), (255, 255, 255), -1)
    cv2.circle(image, (150, 100), 3, (255, 255, 255), -1)
    out = call("connected_components", image)
    assert out.measurements["count"] == 8
    areas = sorted(c["area"] for c in out.measurements["components"])
    assert areas[1:] == [21 * 11] * 7
    assert call("connected_components", image, min_area=100).measurements["count"] == 7


def test_connected_components_connectivity_and_dark_objects():
    diagonal = np.zeros((10, 10), np.uint8)
    diagonal[2, 2] = diagonal[3, 3] = 255
    assert call("connected_components", diagonal, connectivity=8).measurements["count"] == 1
    assert call("connected_components", diagonal, connectivity=4).measurements["count"] == 2
    page = np.full((60, 120), 250, np.uint8)  # dark ink on white: auto picks the ink
    for x in (10, 50, 90):
        page[20:40, x:x + 15] = 20
    assert call("connected_components", page).measurements["count"] == 3


def test_frequency_transform_finds_the_stripe_frequency():
    x = np.arange(256)
    stripes = (127 + 100 * np.cos(2 * np.pi * x / 16)).astype(np.uint8)
    image = np.tile(stripes, (128, 1))
    out = call("frequency_transform", image)
    assert out.image.shape == image.shape and out.image.dtype == np.uint8
    assert out.measurements["peak_frequency"] == [256 // 16, 0]
    assert out.measurements["peak_period_px"] == 16.0
    # Zero frequency sits at the centre; the two stripe peaks are the brightest points besides.
    spectrum = out.image.astype(int)
    assert spectrum[64, 128] == 255
    spectrum[63:66, 127:130] = 0
    assert spectrum[64, 128 + 16] == spectrum[64, 128 - 16] == spectrum.max()
