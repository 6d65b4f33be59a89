"""Drawing and measuring tools on images whose answer is known."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from annotation.imagetools import ToolArgumentError
from annotation.imagetools.drawing import filled_area

from .imagetools_helpers import call, canvas


def _rectangle(width: int = 300, height: int = 200) -> np.ndarray:
    image = canvas(500, 400)
    cv2.rectangle(image, (50, 60), (50 + width - 1, 60 + height - 1), (255, 255, 255), -1)
    return image


def test_measure_area_of_a_rectangle_within_one_percent():
    out = call("measure_area", _rectangle())
    assert abs(out.measurements["area"] - 60_000) / 60_000 < 0.01
    assert out.measurements["area"] == 60_000  # pixels, boundary included: exact
    assert out.measurements["contour_area"] == 299 * 199  # OpenCV's polygon area
    assert out.measurements["bbox"] == [50, 60, 350, 260]
    assert out.measurements["count"] == 1


def test_measure_area_of_a_disc_and_of_dark_shapes_on_paper():
    disc = canvas(300, 300)
    cv2.circle(disc, (150, 150), 80, (255, 255, 255), -1)
    assert abs(call("measure_area", disc).measurements["area"] - math.pi * 80 ** 2) < 0.01 * (
        math.pi * 80 ** 2)
    paper = canvas(400, 300, (250, 250, 250))
    cv2.rectangle(paper, (100, 100), (199, 149), (10, 10, 10), -1)
    cv2.rectangle(paper, (250, 50), (269, 69), (10, 10, 10), -1)
    out = call("measure_area", paper)
    assert out.measurements["areas"] == [5000, 400]
    assert out.measurements["total_area"] == 5400


def test_filled_area_matches_painting_the_contour():
    rng = np.random.default_rng(11)
    mask = (rng.random((80, 80)) < 0.3).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((2, 2), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    assert len(contours) > 20
    for contour in contours:
        painted = np.zeros_like(mask)
        cv2.drawContours(painted, [contour], -1, 255, -1)
        assert filled_area(contour) == cv2.countNonZero(painted)


def test_measure_perimeter_of_a_rectangle():
    out = call("measure_perimeter", _rectangle())
    assert abs(out.measurements["perimeter"] - 2 * (300 + 200)) / 1000 < 0.01
    assert out.measurements["count"] == 1


def test_draw_contours_counts_and_draws():
    image = canvas(300, 200)
    cv2.rectangle(image, (20, 20), (80, 80), (255, 255, 255), -1)
    cv2.rectangle(image, (150, 40), (250, 160), (255, 255, 255), -1)
    out = call("draw_contours", image, color="red", thickness=1)
    assert out.measurements["count"] == 2
    assert [c["bbox"] for c in out.measurements["contours"]] == [[150, 40, 251, 161],
                                                                 [20, 20, 81, 81]]
    assert tuple(out.image[40, 200]) == (0, 0, 255)    # on the outline, red in BGR
    assert tuple(out.image[100, 200]) == (255, 255, 255)  # inside untouched


def test_draw_contours_tree_mode_sees_holes():
    ring = canvas(200, 200)
    cv2.circle(ring, (100, 100), 60, (255, 255, 255), 10)
    assert call("draw_contours", ring, mode="external").measurements["count"] == 1
    assert call("draw_contours", ring, mode="tree").measurements["count"] == 2


@pytest.mark.parametrize(("points", "vertices"), [
    ([(100, 20), (30, 180), (190, 170)], 3),
    ([(40, 40), (180, 40), (180, 150), (40, 150)], 4),
    ([(100, 20), (180, 80), (150, 180), (50, 180), (20, 80)], 5),
])
def test_approx_polygon_counts_the_corners(points, vertices):
    image = canvas(220, 220)
    cv2.fillPoly(image, [np.array(points, np.int32)], (255, 255, 255))
    out = call("approx_polygon", image, epsilon_ratio=0.02)
    assert out.measurements["vertex_count"] == vertices
    for px, py in points:
        assert min(math.hypot(px - x, py - y) for x, y in out.measurements["vertices"]) <= 3


def test_draw_line_and_circle_paint_where_asked():
    line = call("draw_line", canvas(), x1=10, y1=50, x2=190, y2=50, color=[0, 255, 0],
                thickness=3).image
    assert tuple(line[50, 100]) == (0, 255, 0)
    assert tuple(line[10, 100]) == (0, 0, 0)
    circle = call("draw_circle", canvas(), x=100, y=60, radius=30, color="#0000ff",
                  thickness=2).image
    assert tuple(circle[60, 130]) == (255, 0, 0)  # BGR of RGB blue, on the rim
    assert tuple(circle[60, 100]) == (0, 0, 0)    # the centre stays
    filled = call("draw_circle", canvas(), x=100, y=60, radius=30, thickness=-1).image
    assert tuple(filled[60, 100]) == (0, 0, 255)


def test_drawing_leaves_the_input_alone_and_turns_gray_to_colour():
    gray = np.zeros((50, 50), np.uint8)
    out = call("draw_line", gray, x1=0, y1=0, x2=49, y2=49).image
    assert out.shape == (50, 50, 3) and gray.max() == 0


def test_bad_colour_names_the_argument():
    with pytest.raises(ToolArgumentError, match='argument "color": "mauve" is not a colour'):
        call("draw_line", canvas(), x1=0, y1=0, x2=5, y2=5, color="mauve")
    with pytest.raises(ToolArgumentError, match='argument "thickness"'):
        call("draw_circle", canvas(), x=5, y=5, radius=3, thickness=0)
