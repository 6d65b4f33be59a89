"""VTC-Bench's drawing module: contours and their measures (area, perimeter, polygon), lines
and circles.

The shape tools threshold the image first (see segment.py) and work on the objects' outer
contours. Areas are in pixels enclosed by the contour, boundary included (a filled 300x200
rectangle has area 60000); `contour_area` is OpenCV's polygon area through the boundary
pixels' centres ((300-1) x (200-1) for the same rectangle), kept for comparison with OpenCV code.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from annotation.imagetools import colors
from annotation.imagetools.context import MAX_LISTED, ToolContext, ToolOutput
from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.images import as_bgr
from annotation.imagetools.registry import tool
from annotation.imagetools.schema import arguments, choice, color, coordinate, integer, number
from annotation.imagetools.segment import SEGMENT_PROPERTIES, foreground_mask

_RETRIEVAL = {"external": cv2.RETR_EXTERNAL, "tree": cv2.RETR_TREE, "list": cv2.RETR_LIST,
              "ccomp": cv2.RETR_CCOMP}
SHAPE_PROPERTIES: dict[str, dict] = {
    **SEGMENT_PROPERTIES,
    "min_area": integer("objects enclosing fewer pixels are ignored", minimum=0,
                        maximum=1_000_000_000, default=0),
}
GREEN, RED = colors.BGR_GREEN, colors.BGR_RED


def filled_area(contour: np.ndarray) -> int:
    """Pixels enclosed by the contour, boundary included: what filling it would paint.

    By Pick's theorem (area = interior + boundary / 2 - 1 for a lattice polygon), the painted
    pixels are the polygon's area + boundary points / 2 + 1; with CHAIN_APPROX_NONE every
    boundary pixel is a contour point (one-pixel-wide parts are walked there and back, which
    the count handles too). The test suite checks this against filling, pixel for pixel.
    """
    if len(contour) == 1:
        return 1
    return int(round(cv2.contourArea(contour) + len(contour) / 2 + 1))


def find_shapes(image: np.ndarray, args: dict, mode: str = "external") -> list[dict]:
    """The objects' contours, largest first, each with its measures."""
    contours, _ = cv2.findContours(foreground_mask(image, args), _RETRIEVAL[mode],
                                   cv2.CHAIN_APPROX_NONE)
    ranked = sorted(contours, key=cv2.contourArea, reverse=True)
    shapes = []
    for contour in ranked:
        area = filled_area(contour)
        if area < args["min_area"]:
            continue
        x, y, w, h = cv2.boundingRect(contour)
        shapes.append({"contour": contour, "area": area,
                       "contour_area": float(cv2.contourArea(contour)),
                       "perimeter": round(float(cv2.arcLength(contour, True)), 2),
                       "bbox": [x, y, x + w, y + h]})
    return shapes


def _listed(shapes: list[dict], *keys: str) -> list[dict]:
    return [{k: s[k] for k in keys} for s in shapes[:MAX_LISTED]]


def _outline(image: np.ndarray, shapes: list[dict], thickness: int = 2) -> np.ndarray:
    """The input with every contour in green and the largest in red."""
    out = as_bgr(image).copy()
    cv2.drawContours(out, [s["contour"] for s in shapes[1:]], -1, GREEN, thickness)
    if shapes:
        cv2.drawContours(out, [shapes[0]["contour"]], -1, RED, thickness)
    return out


def _draw_contours_check(args: dict) -> None:
    colors.check_color(args["color"], "color")
    _nonzero_thickness(args)


@tool("draw_contours", "drawing",
      "Find the objects' contours after thresholding and draw them; reports how many and each "
      "one's area, perimeter and box.",
      arguments({"mode": choice("external: outer contours only; tree, list, ccomp: holes too",
                                list(_RETRIEVAL), default="external"),
                 "color": color(default="green"),
                 "thickness": integer("line width; -1 fills", minimum=-1, maximum=50, default=2),
                 **SHAPE_PROPERTIES}),
      measures=True,
      aliases=("Draw Contours", "contours", "find_contours", "findcontours", "drawcontours",
               "contour", "contour_detection"),
      example={"mode": "external"},
      check=_draw_contours_check)
def draw_contours(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    shapes = find_shapes(image, args, args["mode"])
    out = as_bgr(image).copy()
    cv2.drawContours(out, [s["contour"] for s in shapes], -1, colors.bgr(args["color"], "color"),
                     args["thickness"])
    return ToolOutput(out, {"count": len(shapes),
                            "contours": _listed(shapes, "area", "perimeter", "bbox")})


@tool("measure_area", "drawing",
      "Area in pixels of the largest object (boundary included), with every object's area.",
      arguments(dict(SHAPE_PROPERTIES)),
      measures=True,
      aliases=("Measure Area", "contour_area", "contourarea", "area", "compute_area"),
      example={})
def measure_area(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    shapes = find_shapes(image, args)
    largest = shapes[0] if shapes else None
    return ToolOutput(_outline(image, shapes), {
        "area": largest["area"] if largest else 0,
        "contour_area": largest["contour_area"] if largest else 0.0,
        "bbox": largest["bbox"] if largest else None,
        "total_area": sum(s["area"] for s in shapes),
        "count": len(shapes),
        "areas": [s["area"] for s in shapes[:MAX_LISTED]],
    })


@tool("measure_perimeter", "drawing",
      "Perimeter in pixels (closed contour length) of the largest object, with every object's.",
      arguments(dict(SHAPE_PROPERTIES)),
      measures=True,
      aliases=("Measure Perimeter", "arc_length", "arclength", "perimeter", "compute_perimeter"),
      example={})
def measure_perimeter(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    shapes = find_shapes(image, args)
    largest = shapes[0] if shapes else None
    return ToolOutput(_outline(image, shapes), {
        "perimeter": largest["perimeter"] if largest else 0.0,
        "bbox": largest["bbox"] if largest else None,
        "total_perimeter": round(sum(s["perimeter"] for s in shapes), 2),
        "count": len(shapes),
        "perimeters": [s["perimeter"] for s in shapes[:MAX_LISTED]],
    })


@tool("approx_polygon", "drawing",
      "Simplify each object's contour to a polygon (cv2.approxPolyDP with epsilon = ratio x "
      "perimeter); reports the vertices, largest object first.",
      arguments({"epsilon_ratio": number("tolerance as a fraction of the perimeter", minimum=0.001,
                                         maximum=0.5, default=0.02),
                 **SHAPE_PROPERTIES}),
      measures=True,
      aliases=("Approximate Polygon", "approx_poly", "approxpolydp", "approx_poly_dp",
               "polygon_approximation", "approximate_polygon"),
      example={"epsilon_ratio": 0.02})
def approx_polygon(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    shapes = find_shapes(image, args)
    out = as_bgr(image).copy()
    polygons: list[dict[str, Any]] = []
    for shape in shapes:
        epsilon = args["epsilon_ratio"] * cv2.arcLength(shape["contour"], True)
        polygon = cv2.approxPolyDP(shape["contour"], epsilon, True)
        cv2.polylines(out, [polygon], True, GREEN if polygons else RED, 2)
        polygons.append({"vertices": polygon.reshape(-1, 2).tolist(),
                         "vertex_count": len(polygon), "bbox": shape["bbox"]})
    largest = polygons[0] if polygons else {"vertices": [], "vertex_count": 0}
    return ToolOutput(out, {"vertices": largest["vertices"],
                            "vertex_count": largest["vertex_count"],
                            "count": len(polygons), "polygons": polygons[:MAX_LISTED]})


def _nonzero_thickness(args: dict) -> None:
    if args.get("thickness") == 0:
        raise ToolArgumentError("thickness", "0 draws nothing; give a width, or -1 to fill")


def _drawing_check(args: dict) -> None:
    colors.check_color(args["color"], "color")
    _nonzero_thickness(args)


@tool("draw_line", "drawing", "Draw a straight segment between two points.",
      arguments({"x1": coordinate("start column"), "y1": coordinate("start row"),
                 "x2": coordinate("end column"), "y2": coordinate("end row"),
                 "color": color(default="red"),
                 "thickness": integer("line width in pixels", minimum=1, maximum=50, default=2)},
                required=("x1", "y1", "x2", "y2")),
      aliases=("Draw Line", "drawline", "add_line"),
      example={"x1": 20, "y1": 400, "x2": 600, "y2": 60, "color": "red", "thickness": 2},
      check=_drawing_check)
def draw_line(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    out = as_bgr(image).copy()
    cv2.line(out, (args["x1"], args["y1"]), (args["x2"], args["y2"]),
             colors.bgr(args["color"], "color"), args["thickness"], cv2.LINE_AA)
    return ToolOutput(out)


@tool("draw_circle", "drawing", "Draw a circle (outline, or filled with thickness -1).",
      arguments({"x": coordinate("centre column"), "y": coordinate("centre row"),
                 "radius": integer("radius in pixels", minimum=1, maximum=100_000),
                 "color": color(default="red"),
                 "thickness": integer("line width; -1 fills", minimum=-1, maximum=50, default=2)},
                required=("x", "y", "radius")),
      aliases=("Draw Circle", "drawcircle", "add_circle"),
      example={"x": 320, "y": 240, "radius": 80},
      check=_drawing_check)
def draw_circle(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    out = as_bgr(image).copy()
    cv2.circle(out, (args["x"], args["y"]), args["radius"], colors.bgr(args["color"], "color"),
               args["thickness"], cv2.LINE_AA)
    return ToolOutput(out)
