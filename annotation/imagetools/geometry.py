"""VTC-Bench's geometry module: rotate, crop, resize, flip, translate, image pyramid."""

from __future__ import annotations

import math

import cv2
import numpy as np

from annotation.imagetools import checks, colors
from annotation.imagetools.context import ToolContext, ToolOutput
from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.images import size_of
from annotation.imagetools.registry import tool
from annotation.imagetools.schema import arguments, choice, color, integer, number

# cv2.rotate for k quarter turns counter-clockwise (k = 0 is a copy).
_QUARTER_TURNS = {1: cv2.ROTATE_90_COUNTERCLOCKWISE, 2: cv2.ROTATE_180, 3: cv2.ROTATE_90_CLOCKWISE}


def fill_value(image: np.ndarray, rgb: tuple[int, int, int]) -> tuple[int, ...] | int:
    """A colour as OpenCV wants it for this image: BGR, or its luminance for a gray image."""
    r, g, b = rgb
    if image.ndim == 2:
        return int(round(0.299 * r + 0.587 * g + 0.114 * b))
    return b, g, r


def rotated_size(width: int, height: int, angle: float) -> tuple[int, int]:
    """The canvas of a rotation by `angle` degrees: the rotated image's bounding box, rounded
    up so no pixel is cut (right angles swap or keep the sides exactly)."""
    quarters = angle / 90.0
    if abs(quarters - round(quarters)) < 1e-9:
        return (height, width) if round(quarters) % 2 else (width, height)
    rad = math.radians(angle)
    cos, sin = abs(math.cos(rad)), abs(math.sin(rad))
    return (math.ceil(width * cos + height * sin - 1e-6),
            math.ceil(width * sin + height * cos - 1e-6))


def rotate_image(image: np.ndarray, angle: float, *, fill: tuple[int, int, int] = (0, 0, 0),
                 ctx: ToolContext | None = None) -> np.ndarray:
    """Counter-clockwise by `angle` degrees. Multiples of 90 are exact pixel moves; other angles
    enlarge the canvas to the rotated bounding box, so nothing is cut."""
    quarters = angle / 90.0
    if abs(quarters - round(quarters)) < 1e-9:
        k = round(quarters) % 4
        return image.copy() if k == 0 else cv2.rotate(image, _QUARTER_TURNS[k])
    width, height = size_of(image)
    new_width, new_height = rotated_size(width, height, angle)
    (ctx or ToolContext()).output_size("angle", new_width, new_height)
    matrix = cv2.getRotationMatrix2D(((width - 1) / 2, (height - 1) / 2), angle, 1.0)
    matrix[0, 2] += (new_width - width) / 2
    matrix[1, 2] += (new_height - height) / 2
    return cv2.warpAffine(image, matrix, (new_width, new_height), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=fill_value(image, fill))


@tool("rotate", "geometry",
      "Rotate counter-clockwise by an angle in degrees; multiples of 90 are exact and lossless, "
      "other angles enlarge the canvas so nothing is cut.",
      arguments({"angle": number("degrees counter-clockwise; negative turns clockwise",
                                 minimum=-3600, maximum=3600),
                 "fill": color("RGB colour of the corners uncovered by a non-right angle",
                               default="black")},
                required=("angle",)),
      aliases=("Rotate", "rotate_image", "image_rotate", "rotation"),
      example={"angle": 90},
      check=lambda a: colors.check_color(a["fill"], "fill"))
def rotate(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    fill = colors.rgb(args["fill"], "fill")
    return ToolOutput(rotate_image(image, float(args["angle"]), fill=fill, ctx=ctx))


def _crop_form(args: dict) -> dict:
    """crop also takes a box [x1, y1, x2, y2] (as `bbox` or `bbox_2d`)."""
    for key in ("bbox", "bbox_2d"):
        if key not in args:
            continue
        if "x" in args or "y" in args or "width" in args or "height" in args:
            raise ToolArgumentError(key, "give either a box or x, y, width and height, not both")
        box = args[key]
        if not (isinstance(box, list) and len(box) == 4 and checks.all_numbers(box)):
            raise ToolArgumentError(key, "expected [x1, y1, x2, y2], four numbers")
        checks.box_order(key, box)
        x1, y1 = math.floor(box[0]), math.floor(box[1])
        out = dict(args)
        del out[key]
        out["x"], out["y"] = x1, y1
        out["width"], out["height"] = math.ceil(box[2]) - x1, math.ceil(box[3]) - y1
        return out
    return args


@tool("crop", "geometry",
      "Cut out a rectangle given by its top-left corner and size (or a bbox [x1, y1, x2, y2]).",
      arguments({"x": integer("left edge in pixels", minimum=0, maximum=1_000_000),
                 "y": integer("top edge in pixels", minimum=0, maximum=1_000_000),
                 "width": integer("width in pixels", minimum=1, maximum=1_000_000),
                 "height": integer("height in pixels", minimum=1, maximum=1_000_000)},
                required=("x", "y", "width", "height")),
      aliases=("Crop", "crop_image", "image_crop"),
      example={"x": 100, "y": 50, "width": 200, "height": 150},
      normalize=_crop_form)
def crop(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    width, height = size_of(image)
    x, y, w, h = args["x"], args["y"], args["width"], args["height"]
    checks.point_inside(image, x, y)
    if x + w > width:
        raise ToolArgumentError("width", f"x + width ({x + w}) is outside the image width {width}")
    if y + h > height:
        raise ToolArgumentError("height",
                                f"y + height ({y + h}) is outside the image height {height}")
    return ToolOutput(np.ascontiguousarray(image[y:y + h, x:x + w]))


def _resize_check(args: dict) -> None:
    has_size = "width" in args or "height" in args
    if "preset" in args and has_size:
        raise ToolArgumentError("preset", "give either a preset or width/height, not both")
    if not has_size and "preset" not in args:
        raise ToolArgumentError("width", "give width and/or height, or a preset (half, double)")


def resize_to(image: np.ndarray, width: int, height: int) -> np.ndarray:
    old_width, old_height = size_of(image)
    shrinking = width * height < old_width * old_height
    return cv2.resize(image, (width, height),
                      interpolation=cv2.INTER_AREA if shrinking else cv2.INTER_CUBIC)


@tool("resize", "geometry",
      "Scale to a width and/or height (one alone keeps the aspect ratio), or by a preset.",
      arguments({"width": integer("new width in pixels", minimum=1, maximum=100_000),
                 "height": integer("new height in pixels", minimum=1, maximum=100_000),
                 "preset": choice("half or double size", ["half", "double"])}),
      aliases=("Resize", "resize_image", "image_resize"),
      example={"preset": "half"},
      check=_resize_check)
def resize(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    old_width, old_height = size_of(image)
    if "preset" in args:
        factor = 0.5 if args["preset"] == "half" else 2.0
        width, height = max(1, round(old_width * factor)), max(1, round(old_height * factor))
        argument = "preset"
    else:
        width = args.get("width") or max(1, round(old_width * args["height"] / old_height))
        height = args.get("height") or max(1, round(old_height * args["width"] / old_width))
        argument = "width" if "width" in args else "height"
    ctx.output_size(argument, width, height)
    return ToolOutput(resize_to(image, width, height))


_FLIP_CODES = {"horizontal": 1, "vertical": 0, "both": -1}


@tool("flip", "geometry", "Mirror left-right (horizontal), top-bottom (vertical) or both.",
      arguments({"direction": choice("horizontal mirrors left-right, vertical top-bottom",
                                     list(_FLIP_CODES), default="horizontal")}),
      aliases=("Flip", "flip_image", "mirror"),
      example={"direction": "horizontal"})
def flip(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    return ToolOutput(cv2.flip(image, _FLIP_CODES[args["direction"]]))


@tool("translate", "geometry",
      "Shift the content by a distance in pixels; the uncovered part is black, the size is kept.",
      arguments({"direction": choice("where the content moves", ["left", "right", "up", "down"]),
                 "distance": integer("pixels", minimum=0, maximum=100_000)},
                required=("direction", "distance")),
      aliases=("Translate", "shift", "translate_image"),
      example={"direction": "right", "distance": 40})
def translate(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    width, height = size_of(image)
    d = args["distance"]
    out = np.zeros_like(image)
    match args["direction"]:
        case "right" if d < width:
            out[:, d:] = image[:, :width - d]
        case "left" if d < width:
            out[:, :width - d] = image[:, d:]
        case "down" if d < height:
            out[d:] = image[:height - d]
        case "up" if d < height:
            out[:height - d] = image[d:]
    return ToolOutput(out)


@tool("pyramid", "geometry",
      "One or more Gaussian pyramid levels: pyr_down halves the size, pyr_up doubles it.",
      arguments({"mode": choice("pyr_down halves, pyr_up doubles", ["pyr_down", "pyr_up"],
                                default="pyr_down"),
                 "levels": integer("how many levels to apply", minimum=1, maximum=4, default=1)}),
      aliases=("Image Pyramid", "image_pyramid", "gaussian_pyramid"),
      example={"mode": "pyr_down"})
def pyramid(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    width, height = size_of(image)
    factor = 2 ** args["levels"]
    if args["mode"] == "pyr_up":
        ctx.output_size("levels", width * factor, height * factor)
    out = image
    for _ in range(args["levels"]):
        if min(size_of(out)) < 2 and args["mode"] == "pyr_down":
            raise ToolArgumentError("levels", f"the image is too small for {args['levels']} levels")
        out = cv2.pyrUp(out) if args["mode"] == "pyr_up" else cv2.pyrDown(out)
    return ToolOutput(out)
