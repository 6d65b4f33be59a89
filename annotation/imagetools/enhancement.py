"""VTC-Bench's enhancement module: colour spaces, brightness, histogram equalisation,
binarisation, morphology, blur, denoising, sharpening, inpainting, colour filtering, flood fill."""

from __future__ import annotations

import cv2
import numpy as np

from annotation.imagetools import checks, colors
from annotation.imagetools.context import ToolContext, ToolOutput
from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.images import as_bgr, as_gray
from annotation.imagetools.registry import tool
from annotation.imagetools.schema import (arguments, bbox, boolean, choice, color, integer,
                                          integer_choice, number, triple)

_TO_SPACE = {"gray": cv2.COLOR_BGR2GRAY, "hsv": cv2.COLOR_BGR2HSV, "lab": cv2.COLOR_BGR2LAB}


@tool("convert_color", "enhancement",
      "Convert to gray, HSV or Lab (OpenCV's 8-bit ranges: hue 0-179).",
      arguments({"space": choice("target colour space", list(_TO_SPACE), default="gray")}),
      aliases=("Convert Color", "colorspace", "color_space", "cvtcolor", "convert_colour",
               "grayscale", "to_gray"),
      example={"space": "gray"})
def convert_color(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    if args["space"] == "gray":
        return ToolOutput(image.copy() if image.ndim == 2 else as_gray(image))
    return ToolOutput(cv2.cvtColor(as_bgr(image), _TO_SPACE[args["space"]]))


@tool("adjust_brightness", "enhancement",
      "Scale and shift the pixel values: |alpha * pixel + beta|, saturated (cv2.convertScaleAbs).",
      arguments({"alpha": number("gain (contrast)", minimum=0, maximum=10, default=1.0),
                 "beta": number("offset (brightness)", minimum=-255, maximum=255, default=0)}),
      aliases=("Adjust Brightness", "convertscaleabs", "convert_scale_abs", "brightness_contrast"),
      example={"alpha": 1.3, "beta": 20})
def adjust_brightness(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    return ToolOutput(cv2.convertScaleAbs(image, alpha=args["alpha"], beta=args["beta"]))


def equalize(image: np.ndarray, mode: str, clip_limit: float = 2.0, tiles: int = 8) -> np.ndarray:
    """Histogram equalisation of the luminance (YCrCb's Y), leaving the colours' hue alone."""
    if mode == "clahe":
        apply = cv2.createCLAHE(clipLimit=clip_limit, tileGridSize=(tiles, tiles)).apply
    else:
        apply = cv2.equalizeHist
    if image.ndim == 2:
        return apply(image)
    # In place where OpenCV allows it (each output pixel depends on its own input pixel only,
    # once CLAHE's tile tables are built): two fewer full-size arrays, the same pixels.
    ycc = cv2.cvtColor(image, cv2.COLOR_BGR2YCrCb)
    luma = cv2.extractChannel(ycc, 0)
    apply(luma, dst=luma)
    cv2.insertChannel(luma, ycc, 0)
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR, dst=ycc)


@tool("histogram_eq", "enhancement",
      "Histogram equalisation of the luminance, global (equalize) or adaptive (clahe).",
      arguments({"mode": choice("equalize (global) or clahe (adaptive, by tiles)",
                                ["equalize", "clahe"], default="equalize"),
                 "clip_limit": number("CLAHE contrast limit", minimum=0.1, maximum=40, default=2.0),
                 "tile_grid_size": integer("CLAHE tiles per side", minimum=1, maximum=64,
                                           default=8)}),
      aliases=("Histogram Eq", "histogram", "histogram_equalization", "equalize_hist",
               "equalizehist", "histogram_equalisation", "hist_eq"),
      example={"mode": "clahe", "clip_limit": 2.0, "tile_grid_size": 8})
def histogram_eq(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    return ToolOutput(equalize(image, args["mode"], args["clip_limit"], args["tile_grid_size"]))


_ADAPTIVE = {"adaptive_mean": cv2.ADAPTIVE_THRESH_MEAN_C,
             "adaptive_gaussian": cv2.ADAPTIVE_THRESH_GAUSSIAN_C}


@tool("binarize", "enhancement",
      "Threshold to black and white: fixed (binary), Otsu, or adaptive (mean or Gaussian).",
      arguments({"mode": choice("binary uses threshold_value; otsu picks it; adaptive_* compare "
                                "each pixel with its neighbourhood",
                                ["binary", "otsu", *_ADAPTIVE], default="otsu"),
                 "threshold_value": integer("threshold for mode binary (pixel > value is white)",
                                            minimum=0, maximum=255, default=127),
                 "invert": boolean("swap black and white", default=False),
                 "block_size": integer("adaptive neighbourhood size (odd)", minimum=3,
                                       maximum=255, default=11),
                 "c": number("adaptive: subtracted from the neighbourhood mean", minimum=-100,
                             maximum=100, default=2)}),
      aliases=("Binarize", "threshold", "binarise", "binarization", "thresholding",
               "adaptive_threshold"),
      example={"mode": "otsu"},
      check=lambda a: checks.odd(a, "block_size"))
def binarize(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    gray = as_gray(image)
    kind = cv2.THRESH_BINARY_INV if args["invert"] else cv2.THRESH_BINARY
    mode = args["mode"]
    if mode in _ADAPTIVE:
        out = cv2.adaptiveThreshold(gray, 255, _ADAPTIVE[mode], kind, args["block_size"], args["c"])
        return ToolOutput(out)
    flags = kind | (cv2.THRESH_OTSU if mode == "otsu" else 0)
    used, out = cv2.threshold(gray, args["threshold_value"], 255, flags)
    return ToolOutput(out, {"threshold": float(used)})


_MORPH_OPS = {"erode": cv2.MORPH_ERODE, "dilate": cv2.MORPH_DILATE, "open": cv2.MORPH_OPEN,
              "close": cv2.MORPH_CLOSE, "gradient": cv2.MORPH_GRADIENT,
              "tophat": cv2.MORPH_TOPHAT, "blackhat": cv2.MORPH_BLACKHAT}
_SHAPES = {"rect": cv2.MORPH_RECT, "ellipse": cv2.MORPH_ELLIPSE, "cross": cv2.MORPH_CROSS}


@tool("morphology", "enhancement",
      "Erode, dilate, open, close (or gradient, top-hat, black-hat) with a structuring element.",
      arguments({"op": choice("the operation", list(_MORPH_OPS)),
                 "kernel_size": integer("structuring element size", minimum=1, maximum=31,
                                        default=3),
                 "iterations": integer("times applied", minimum=1, maximum=20, default=1),
                 "kernel_shape": choice("structuring element shape", list(_SHAPES),
                                        default="rect")},
                required=("op",)),
      aliases=("Morphology", "morphological", "morphology_ex", "morphologyex", "morph"),
      example={"op": "close", "kernel_size": 3})
def morphology(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    size = ctx.kernel("kernel_size", args["kernel_size"])
    iterations = ctx.iterations("iterations", args["iterations"])
    kernel = cv2.getStructuringElement(_SHAPES[args["kernel_shape"]], (size, size))
    return ToolOutput(cv2.morphologyEx(image, _MORPH_OPS[args["op"]], kernel,
                                       iterations=iterations))


@tool("blur", "enhancement", "Smooth with a box (average), Gaussian, median or bilateral filter.",
      arguments({"method": choice("the filter", ["average", "gaussian", "median", "bilateral"],
                                  default="gaussian"),
                 "ksize": integer("kernel size (odd; bilateral: neighbourhood diameter)",
                                  minimum=1, maximum=31, default=5)}),
      aliases=("Blur", "smooth", "gaussian_blur", "gaussianblur", "median_blur", "medianblur"),
      example={"method": "gaussian", "ksize": 5},
      check=lambda a: checks.odd(a, "ksize"))
def blur(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    k = ctx.kernel("ksize", args["ksize"])
    match args["method"]:
        case "average":
            out = cv2.blur(image, (k, k))
        case "gaussian":
            out = cv2.GaussianBlur(image, (k, k), 0)
        case "median":
            out = cv2.medianBlur(image, k)
        case _:
            out = cv2.bilateralFilter(image, k, 75, 75)
    return ToolOutput(out)


@tool("denoise", "enhancement",
      "Non-local means denoising (cv2.fastNlMeansDenoising, Colored for colour images).",
      arguments({"h": number("filter strength: higher removes more noise and more detail",
                             minimum=1, maximum=50, default=10),
                 "template_window": integer("patch size (odd)", minimum=3, maximum=21, default=7),
                 "search_window": integer("search area size (odd)", minimum=3, maximum=31,
                                          default=21)}),
      aliases=("Denoise", "fastnlmeansdenoising", "fast_nl_means_denoising", "noise_reduction",
               "remove_noise"),
      example={"h": 10},
      check=lambda a: checks.odd(a, "template_window", "search_window"))
def denoise(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    template = ctx.kernel("template_window", args["template_window"])
    search = ctx.kernel("search_window", args["search_window"])
    if image.ndim == 2:
        return ToolOutput(cv2.fastNlMeansDenoising(image, None, args["h"], template, search))
    return ToolOutput(cv2.fastNlMeansDenoisingColored(image, None, args["h"], args["h"], template,
                                                      search))


@tool("sharpen", "enhancement",
      "Unsharp mask: pixel + amount * (pixel - Gaussian blur of sigma).",
      arguments({"amount": number("strength", minimum=0, maximum=10, default=1.0),
                 "sigma": number("blur radius of the mask, in pixels", minimum=0.1, maximum=20,
                                 default=1.0)}),
      aliases=("Sharpen", "unsharp_mask", "unsharp", "sharpening"),
      example={"amount": 1.0, "sigma": 1.0})
def sharpen(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    blurred = cv2.GaussianBlur(image, (0, 0), args["sigma"])
    amount = args["amount"]
    return ToolOutput(cv2.addWeighted(image, 1.0 + amount, blurred, -amount, 0))


def _inpaint_check(args: dict) -> None:
    if ("bbox" in args) == ("color" in args):
        raise ToolArgumentError("bbox", 'give the area to repair as "bbox" or as "color" '
                                        '(exactly one)')
    if "bbox" in args:
        checks.box_order("bbox", args["bbox"])
    else:
        colors.check_color(args["color"], "color")


@tool("inpaint", "enhancement",
      "Repair an area (a box, or every pixel near a colour) from its surroundings.",
      arguments({"bbox": bbox("area to repair [x1, y1, x2, y2]"),
                 "color": color("repair every pixel within tolerance of this RGB colour"),
                 "tolerance": integer("per-channel distance still counted as the colour",
                                      minimum=0, maximum=255, default=30),
                 "radius": integer("neighbourhood used for each repaired pixel", minimum=1,
                                   maximum=25, default=3),
                 "method": choice("telea or ns (Navier-Stokes)", ["telea", "ns"],
                                  default="telea")}),
      aliases=("Inpaint", "inpainting", "remove_watermark"),
      example={"bbox": [300, 200, 340, 230]},
      check=_inpaint_check)
def inpaint(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    mask: np.ndarray = np.zeros(image.shape[:2], np.uint8)
    if "bbox" in args:
        x1, y1, x2, y2 = checks.pixel_box("bbox", args["bbox"], image)
        mask[y1:y2, x1:x2] = 255
    else:
        target = np.array(colors.bgr(args["color"], "color"), np.int16)
        if image.ndim == 2:
            target = np.array([round(0.114 * target[0] + 0.587 * target[1] + 0.299 * target[2])])
        tol = args["tolerance"]
        low = np.clip(target - tol, 0, 255).astype(np.uint8)
        high = np.clip(target + tol, 0, 255).astype(np.uint8)
        mask = cv2.inRange(image, low, high)
    method = cv2.INPAINT_TELEA if args["method"] == "telea" else cv2.INPAINT_NS
    out = cv2.inpaint(image, mask, args["radius"], method)
    return ToolOutput(out, {"repaired_pixels": int(cv2.countNonZero(mask))})


_CONVERSIONS = {"hsv": cv2.COLOR_BGR2HSV, "lab": cv2.COLOR_BGR2LAB}
_FILTER_SPACES = (*_CONVERSIONS, "rgb")  # rgb: the BGR channels reversed, no conversion


def _color_filter_check(args: dict) -> None:
    lower, upper = args["lower"], args["upper"]
    hsv = args["colorspace"] == "hsv"
    for i, (low, high) in enumerate(zip(lower, upper)):
        if hsv and i == 0:
            for name, value in (("lower", low), ("upper", high)):
                if value > 179:
                    raise ToolArgumentError(name, f"item 1: hue {value} is above 179 "
                                                  "(OpenCV's hue runs 0-179)")
            continue  # lower hue > upper hue wraps around red
        if low > high:
            raise ToolArgumentError("upper", f"item {i + 1}: {high} is below lower ({low})")


@tool("color_filter", "enhancement",
      "Keep the pixels whose colour lies between two bounds (cv2.inRange); in HSV a lower hue "
      "above the upper one wraps around red.",
      arguments({"colorspace": choice("space of the bounds (hsv uses hue 0-179)",
                                      list(_FILTER_SPACES), default="hsv"),
                 "lower": triple("lower bound, one value per channel"),
                 "upper": triple("upper bound, one value per channel"),
                 "output": choice("mask (white where the colour is) or masked (the image "
                                  "where the colour is, black elsewhere)", ["mask", "masked"],
                                  default="mask")},
                required=("lower", "upper")),
      measures=True,
      aliases=("Color Filter", "inrange_color", "inrange", "in_range", "color_mask",
               "colour_filter", "color_threshold"),
      example={"colorspace": "hsv", "lower": [0, 100, 100], "upper": [10, 255, 255]},
      check=_color_filter_check)
def color_filter(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    bgr = as_bgr(image)
    lower, upper = list(args["lower"]), list(args["upper"])
    space = args["colorspace"]
    if space == "rgb":
        converted, lower, upper = bgr, lower[::-1], upper[::-1]
    else:
        converted = cv2.cvtColor(bgr, _CONVERSIONS[space])
    if space == "hsv" and lower[0] > upper[0]:
        mask = cv2.bitwise_or(cv2.inRange(converted, np.array(lower, np.uint8),
                                          np.array([179, *upper[1:]], np.uint8)),
                              cv2.inRange(converted, np.array([0, *lower[1:]], np.uint8),
                                          np.array(upper, np.uint8)))
    else:
        mask = cv2.inRange(converted, np.array(lower, np.uint8), np.array(upper, np.uint8))
    pixels = int(cv2.countNonZero(mask))
    out = mask if args["output"] == "mask" else cv2.bitwise_and(image, image, mask=mask)
    return ToolOutput(out, {"pixels": pixels, "fraction": pixels / mask.size})


@tool("flood_fill", "enhancement",
      "Fill the connected area around a seed point whose colour is close to its neighbours'.",
      arguments({"x": integer("seed column", minimum=0, maximum=1_000_000),
                 "y": integer("seed row", minimum=0, maximum=1_000_000),
                 "lo_diff": integer("how much darker a neighbour may be", minimum=0, maximum=255,
                                    default=10),
                 "up_diff": integer("how much brighter a neighbour may be", minimum=0,
                                    maximum=255, default=10),
                 "new_val": color("RGB fill colour", default="red"),
                 "connectivity": integer_choice("4 or 8 neighbours", [4, 8], default=4)},
                required=("x", "y")),
      measures=True,
      aliases=("Flood Fill", "floodfill", "fill", "bucket_fill"),
      example={"x": 10, "y": 10, "new_val": [255, 0, 0]},
      check=lambda a: colors.check_color(a["new_val"], "new_val"))
def flood_fill(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    checks.point_inside(image, args["x"], args["y"])
    out = as_bgr(image).copy()
    mask = np.zeros((out.shape[0] + 2, out.shape[1] + 2), np.uint8)
    area, _, _, rect = cv2.floodFill(out, mask, (args["x"], args["y"]),
                                     colors.bgr(args["new_val"], "new_val"),
                                     (args["lo_diff"],) * 3, (args["up_diff"],) * 3,
                                     args["connectivity"])
    x, y, w, h = (int(v) for v in rect)
    return ToolOutput(out, {"area": int(area), "bbox": [x, y, x + w, y + h]})

