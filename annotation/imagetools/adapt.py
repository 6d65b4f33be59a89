"""AdaptMMBench's tools (zoom by bbox, contrast, brightness, gamma, auxiliary lines for geometry)
and Agent-X's model-free image operations (a labelled box, a text overlay)."""

from __future__ import annotations

import cv2
import numpy as np

from annotation.imagetools import checks, colors
from annotation.imagetools.context import ToolContext, ToolOutput
from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.geometry import resize_to
from annotation.imagetools.images import as_bgr, size_of
from annotation.imagetools.registry import tool
from annotation.imagetools.schema import (arguments, bbox, boolean, color, coordinate, integer,
                                          number, text)

FONT = cv2.FONT_HERSHEY_SIMPLEX


def _zoom_form(args: dict) -> dict:
    return checks.box_from_xywh(checks.rename(args, "bbox_2d", "bbox"), "bbox")


@tool("zoom_in", "adapt",
      "Cut out a box [x1, y1, x2, y2] (pixels of the input) and optionally enlarge it by a scale.",
      arguments({"bbox": bbox("box [x1, y1, x2, y2] in pixels of the input image"),
                 "scale": number("enlargement of the cut-out", exclusive_minimum=0, maximum=8,
                                 default=1.0),
                 "label": text("what the box is said to contain (kept for the record, unused)",
                               max_length=200)},
                required=("bbox",)),
      measures=True,
      aliases=("Zoom in", "image_zoom_in_tool", "zoom", "zoomin", "image_zoom_in", "zoom_in_tool",
               "crop_and_zoom"),
      example={"bbox": [100, 80, 340, 260]},
      normalize=_zoom_form,
      check=lambda a: checks.box_order("bbox", a["bbox"]))
def zoom_in(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    x1, y1, x2, y2 = checks.pixel_box("bbox", args["bbox"], image)
    out = np.ascontiguousarray(image[y1:y2, x1:x2])
    scale = args["scale"]
    if scale != 1.0:
        width, height = max(1, round((x2 - x1) * scale)), max(1, round((y2 - y1) * scale))
        out = resize_to(out, *ctx.output_size("scale", width, height))
    return ToolOutput(out, {"bbox": [x1, y1, x2, y2]})


def _lut(image: np.ndarray, values: np.ndarray) -> np.ndarray:
    return cv2.LUT(image, np.clip(np.rint(values), 0, 255).astype(np.uint8))


_LEVELS = np.arange(256, dtype=np.float64)


@tool("contrast", "adapt", "Linear contrast: alpha * pixel + beta, clipped to 0-255.",
      arguments({"alpha": number("gain: above 1 raises contrast, below 1 lowers it", minimum=0,
                                 maximum=10),
                 "beta": number("offset added after the gain", minimum=-255, maximum=255,
                                default=0)},
                required=("alpha",)),
      aliases=("adjust_contrast", "Contrast", "change_contrast", "enhance_contrast"),
      example={"alpha": 1.8, "beta": 0})
def contrast(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    return ToolOutput(_lut(image, args["alpha"] * _LEVELS + args["beta"]))


def _brightness_check(args: dict) -> None:
    if not args["additive"] and not 0 <= args["beta"] <= 10:
        raise ToolArgumentError("beta", f"with additive false beta is a factor from 0 to 10, "
                                        f"got {args['beta']}")


@tool("brightness", "adapt",
      "Brighten or darken: pixel + beta (additive), or pixel * beta (additive false); clipped.",
      arguments({"beta": number("amount added (additive) or factor (additive false)",
                                minimum=-255, maximum=255),
                 "additive": boolean("add beta (true) or multiply by it (false)", default=True)},
                required=("beta",)),
      aliases=("change_brightness", "set_brightness", "brighten"),
      example={"beta": 40},
      check=_brightness_check)
def brightness(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    beta = args["beta"]
    return ToolOutput(_lut(image, _LEVELS + beta if args["additive"] else _LEVELS * beta))


@tool("gamma", "adapt",
      "Power-law (gamma) transform: 255 * (pixel / 255) ^ gamma; gamma below 1 brightens the "
      "shadows, above 1 darkens them.",
      arguments({"gamma": number("exponent: below 1 brightens, above 1 darkens", minimum=0.05,
                                 maximum=20)},
                required=("gamma",)),
      aliases=("gamma_correction", "adjust_gamma", "Gamma", "gamma_correct", "power_law"),
      example={"gamma": 0.6})
def gamma(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    # The textbook power law s = 255 (r / 255)^gamma (Gonzalez & Woods), the convention of the
    # benchmark files' `transform`: an image darkened by gamma g is recovered by gamma 1 / g.
    return ToolOutput(_lut(image, 255.0 * (_LEVELS / 255.0) ** args["gamma"]))


def extend_to_border(image: np.ndarray, p1: tuple[int, int], p2: tuple[int, int],
                     ) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The line through p1 and p2, clipped to the image (None when it misses the image)."""
    width, height = size_of(image)
    dx, dy = p2[0] - p1[0], p2[1] - p1[1]
    reach = 4 * (width + height + abs(p1[0]) + abs(p1[1])) / max(abs(dx), abs(dy))
    far1 = (round(p1[0] - dx * reach), round(p1[1] - dy * reach))
    far2 = (round(p2[0] + dx * reach), round(p2[1] + dy * reach))
    inside, a, b = cv2.clipLine((0, 0, width, height), far1, far2)
    return ((int(a[0]), int(a[1])), (int(b[0]), int(b[1]))) if inside else None


def _aux_check(args: dict) -> None:
    colors.check_color(args["color"], "color")
    if (args["x1"], args["y1"]) == (args["x2"], args["y2"]):
        raise ToolArgumentError("x2", "the two points are the same, so they give no line")


@tool("draw_aux_line", "adapt",
      "Draw an auxiliary line for a geometry problem through two points, optionally extended "
      "to the image border.",
      arguments({"x1": coordinate("first point, column"), "y1": coordinate("first point, row"),
                 "x2": coordinate("second point, column"), "y2": coordinate("second point, row"),
                 "extend": boolean("extend the line across the whole image", default=False),
                 "color": color(default="red"),
                 "thickness": integer("line width in pixels", minimum=1, maximum=50, default=2)},
                required=("x1", "y1", "x2", "y2")),
      measures=True,
      aliases=("auxiliary_line", "draw_auxiliary_line", "aux_line", "add_auxiliary_line",
               "draw_auxiliary"),
      example={"x1": 100, "y1": 400, "x2": 500, "y2": 100, "extend": True},
      check=_aux_check)
def draw_aux_line(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    p1, p2 = (args["x1"], args["y1"]), (args["x2"], args["y2"])
    out = as_bgr(image).copy()
    if args["extend"]:
        clipped = extend_to_border(image, p1, p2)
        if clipped is None:
            raise ToolArgumentError("x1", "the line does not cross the image")
        p1, p2 = clipped
    cv2.line(out, p1, p2, colors.bgr(args["color"], "color"), args["thickness"], cv2.LINE_AA)
    return ToolOutput(out, {"line": [int(p1[0]), int(p1[1]), int(p2[0]), int(p2[1])]})


def _ascii(value: str) -> str:
    # OpenCV's Hershey fonts draw ASCII only.
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in value)


def _ink_for(bgr: tuple[int, int, int]) -> tuple[int, int, int]:
    b, g, r = bgr
    return (0, 0, 0) if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (255, 255, 255)


def _draw_bbox_check(args: dict) -> None:
    checks.box_order("bbox", args["bbox"])
    colors.check_color(args["color"], "color")


@tool("draw_bbox", "adapt", "Draw a box [x1, y1, x2, y2] with an optional label above it.",
      arguments({"bbox": bbox(), "label": text("text shown above the box", max_length=200),
                 "color": color(default="red"),
                 "thickness": integer("line width in pixels", minimum=1, maximum=50, default=2)},
                required=("bbox",)),
      aliases=("draw_box", "draw_rectangle", "draw_bounding_box", "bounding_box", "rectangle",
               "draw_rect"),
      example={"bbox": [100, 80, 340, 260], "label": "cat"},
      normalize=lambda a: checks.rename(a, "bbox_2d", "bbox"),
      check=_draw_bbox_check)
def draw_bbox(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    x1, y1, x2, y2 = checks.pixel_box("bbox", args["bbox"], image)
    out = as_bgr(image).copy()
    ink = colors.bgr(args["color"], "color")
    cv2.rectangle(out, (x1, y1), (x2 - 1, y2 - 1), ink, args["thickness"])
    if args.get("label"):
        label = _ascii(args["label"])
        scale = max(0.4, min(2.0, out.shape[0] / 900))
        (tw, th), base = cv2.getTextSize(label, FONT, scale, 1)
        top = y1 - th - base - 4 if y1 - th - base - 4 >= 0 else y1  # above, or inside at the top
        cv2.rectangle(out, (x1, top), (x1 + tw + 4, top + th + base + 4), ink, -1)
        cv2.putText(out, label, (x1 + 2, top + th + 2), FONT, scale, _ink_for(ink), 1, cv2.LINE_AA)
    return ToolOutput(out)


@tool("draw_text", "adapt", "Write text with its top-left corner at (x, y); ASCII only.",
      arguments({"text": text("the text; new lines start new rows", max_length=500),
                 "x": coordinate("left edge of the text"), "y": coordinate("top edge of the text"),
                 "color": color(default="red"),
                 "scale": number("font scale (1 is about 22 pixels tall)", minimum=0.1,
                                 maximum=10, default=1.0),
                 "thickness": integer("stroke width", minimum=1, maximum=20, default=2)},
                required=("text", "x", "y")),
      aliases=("put_text", "puttext", "add_text", "overlay_text", "write_text", "text_overlay"),
      example={"text": "A", "x": 50, "y": 50},
      check=lambda a: colors.check_color(a["color"], "color"))
def draw_text(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    out = as_bgr(image).copy()
    ink, scale, thickness = colors.bgr(args["color"], "color"), args["scale"], args["thickness"]
    y = args["y"]
    for line in args["text"].replace("\r", "").split("\n"):
        line = _ascii(line)
        (_, th), base = cv2.getTextSize(line or " ", FONT, scale, thickness)
        cv2.putText(out, line, (args["x"], y + th), FONT, scale, ink, thickness, cv2.LINE_AA)
        y += th + base + max(2, th // 3)
    return ToolOutput(out)
