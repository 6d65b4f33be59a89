"""VTC-Bench's feature-extraction module: edges, lines, circles, gradients, template matching,
watershed, GrabCut, connected components and the frequency spectrum."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from annotation.imagetools import checks, colors
from annotation.imagetools.context import MAX_LISTED, ToolContext, ToolOutput
from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.images import as_bgr, as_gray, size_of
from annotation.imagetools.registry import tool
from annotation.imagetools.schema import (arguments, bbox, boolean, choice, integer, integer_choice,
                                          number)
from annotation.imagetools.segment import SEGMENT_PROPERTIES, foreground_mask

RED, GREEN = colors.BGR_RED, colors.BGR_GREEN


def _edge_check(args: dict) -> None:
    checks.ordered(args, "threshold_low", "threshold_high")


@tool("edge_detect", "feature_extraction", "Canny edges: a black image with white edge pixels.",
      arguments({"threshold_low": number("weaker hysteresis threshold", minimum=0, maximum=10_000,
                                         default=100),
                 "threshold_high": number("stronger hysteresis threshold", minimum=0,
                                          maximum=10_000, default=200),
                 "aperture_size": integer_choice("Sobel aperture", [3, 5, 7], default=3),
                 "l2_gradient": boolean("use the exact gradient magnitude", default=False)}),
      measures=True,
      aliases=("Edge Detect", "canny", "edge_detection", "edges", "detect_edges", "canny_edge"),
      example={"threshold_low": 100, "threshold_high": 200},
      check=_edge_check)
def edge_detect(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    edges = cv2.Canny(as_gray(image), args["threshold_low"], args["threshold_high"],
                      apertureSize=args["aperture_size"], L2gradient=args["l2_gradient"])
    return ToolOutput(edges, {"edge_pixels": int(cv2.countNonZero(edges))})


@tool("line_detect", "feature_extraction",
      "Straight segments by the probabilistic Hough transform on Canny edges (50/150), drawn "
      "in red.",
      arguments({"threshold": integer("votes a line needs", minimum=1, maximum=10_000, default=80),
                 "min_line_length": integer("shortest segment kept, in pixels", minimum=0,
                                            maximum=100_000, default=30),
                 "max_line_gap": integer("largest gap bridged within a segment", minimum=0,
                                         maximum=100_000, default=10)}),
      measures=True,
      aliases=("Line Detect", "hough_lines", "houghlines", "houghlinesp", "hough_lines_p",
               "line_detection", "detect_lines"),
      example={"threshold": 80, "min_line_length": 30, "max_line_gap": 10})
def line_detect(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    edges = cv2.Canny(as_gray(image), 50, 150)
    found = cv2.HoughLinesP(edges, 1, np.pi / 180, args["threshold"],
                            minLineLength=args["min_line_length"], maxLineGap=args["max_line_gap"])
    lines = [] if found is None else found.reshape(-1, 4).tolist()
    lines.sort(key=lambda s: -math.hypot(s[2] - s[0], s[3] - s[1]))
    out = as_bgr(image).copy()
    for x1, y1, x2, y2 in lines:
        cv2.line(out, (int(x1), int(y1)), (int(x2), int(y2)), RED, 2, cv2.LINE_AA)
    listed = lines[:MAX_LISTED]
    return ToolOutput(out, {"count": len(lines), "lines": listed,
                            "lengths": [round(math.hypot(s[2] - s[0], s[3] - s[1]), 2)
                                        for s in listed]})


def _circle_check(args: dict) -> None:
    if args["max_radius"] and args["max_radius"] < args["min_radius"]:
        raise ToolArgumentError("max_radius", f"{args['max_radius']} is below min_radius "
                                              f"({args['min_radius']}); 0 means no maximum")


@tool("circle_detect", "feature_extraction",
      "Circles by the Hough gradient method (after a 5-pixel median blur), drawn in green.",
      arguments({"dp": number("accumulator resolution divisor", minimum=1, maximum=4, default=1.2),
                 "min_dist": number("smallest distance between centres", minimum=1,
                                    maximum=100_000, default=20),
                 "param1": number("Canny high threshold", minimum=1, maximum=1000, default=100),
                 "param2": number("votes a centre needs (lower finds more)", minimum=1,
                                  maximum=1000, default=30),
                 "min_radius": integer("smallest radius", minimum=0, maximum=100_000, default=0),
                 "max_radius": integer("largest radius (0: no limit)", minimum=0, maximum=100_000,
                                       default=0)}),
      measures=True,
      aliases=("Circle Detect", "hough_circles", "houghcircles", "circle_detection",
               "detect_circles"),
      example={"min_dist": 20, "param2": 30},
      check=_circle_check)
def circle_detect(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    gray = cv2.medianBlur(as_gray(image), 5)
    found = cv2.HoughCircles(gray, cv2.HOUGH_GRADIENT, args["dp"], args["min_dist"],
                             param1=args["param1"], param2=args["param2"],
                             minRadius=args["min_radius"], maxRadius=args["max_radius"])
    circles = [] if found is None else [[round(float(v), 2) for v in c] for c in found[0]]
    out = as_bgr(image).copy()
    for x, y, r in circles:
        cv2.circle(out, (round(x), round(y)), round(r), GREEN, 2, cv2.LINE_AA)
        cv2.circle(out, (round(x), round(y)), 2, RED, -1)
    return ToolOutput(out, {"count": len(circles), "circles": circles[:MAX_LISTED]})


@tool("gradients", "feature_extraction",
      "Image derivatives: Sobel along x or y, their combined magnitude, or the Laplacian "
      "(absolute values, 8-bit).",
      arguments({"mode": choice("which derivative", ["sobel_x", "sobel_y", "magnitude",
                                                     "laplacian"], default="sobel_x"),
                 "ksize": integer_choice("aperture size", [1, 3, 5, 7], default=3)}),
      aliases=("Compute Gradients", "gradient", "sobel", "laplacian", "compute_gradient",
               "image_gradients"),
      example={"mode": "sobel_x"})
def gradients(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    gray, k = as_gray(image), args["ksize"]
    match args["mode"]:
        case "sobel_x":
            out = cv2.convertScaleAbs(cv2.Sobel(gray, cv2.CV_16S, 1, 0, ksize=k))
        case "sobel_y":
            out = cv2.convertScaleAbs(cv2.Sobel(gray, cv2.CV_16S, 0, 1, ksize=k))
        case "magnitude":
            gx = cv2.convertScaleAbs(cv2.Sobel(gray, cv2.CV_16S, 1, 0, ksize=k))
            gy = cv2.convertScaleAbs(cv2.Sobel(gray, cv2.CV_16S, 0, 1, ksize=k))
            out = cv2.addWeighted(gx, 0.5, gy, 0.5, 0)
        case _:
            out = cv2.convertScaleAbs(cv2.Laplacian(gray, cv2.CV_16S, ksize=k))
    return ToolOutput(out)


_MATCH_METHODS = {"sqdiff": cv2.TM_SQDIFF, "sqdiff_normed": cv2.TM_SQDIFF_NORMED,
                  "ccorr": cv2.TM_CCORR, "ccorr_normed": cv2.TM_CCORR_NORMED,
                  "ccoeff": cv2.TM_CCOEFF, "ccoeff_normed": cv2.TM_CCOEFF_NORMED}


def _match_form(args: dict) -> dict:
    method = args.get("method")
    if isinstance(method, str):  # "TM_CCOEFF_NORMED", "cv2.TM_CCOEFF_NORMED"
        folded = method.strip().lower().removeprefix("cv2.").removeprefix("tm_")
        if folded in _MATCH_METHODS:
            return {**args, "method": folded}
    return args


def _match_check(args: dict) -> None:
    if isinstance(args["template"], list):
        checks.box_order("template", args["template"])


@tool("template_match", "feature_extraction",
      "Find a template (a named image, or a box cut from the input) in the image; reports the "
      "best location and score, and every other match above the threshold (normed methods).",
      arguments({"template": {"type": ["string", "array"], "minLength": 1, "maxLength": 64,
                              "items": {"type": "number", "minimum": 0, "maximum": 1_000_000},
                              "minItems": 4, "maxItems": 4,
                              "description": "an image reference (e.g. img1) or a box "
                                             "[x1, y1, x2, y2] cut from the input"},
                 "method": choice("cv2.matchTemplate method", list(_MATCH_METHODS),
                                  default="ccoeff_normed"),
                 "threshold": number("normed methods: the lowest score (highest for "
                                     "sqdiff_normed: 1 - threshold) counted as a match",
                                     minimum=0, maximum=1, default=0.8),
                 "max_matches": integer("most matches reported", minimum=1, maximum=MAX_LISTED,
                                        default=10)},
                required=("template",)),
      measures=True,
      aliases=("Template Match", "template_matching", "match_template", "matchtemplate",
               "find_template"),
      example={"template": [100, 100, 140, 130]},
      normalize=_match_form, check=_match_check)
def template_match(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    if isinstance(args["template"], str):
        template = ctx.image("template", args["template"])
    else:
        x1, y1, x2, y2 = checks.pixel_box("template", args["template"], image)
        template = image[y1:y2, x1:x2]
    haystack = image
    if haystack.ndim != template.ndim:
        haystack, template = as_gray(haystack), as_gray(template)
    (tw, th), (iw, ih) = size_of(template), size_of(haystack)
    if tw > iw or th > ih:
        raise ToolArgumentError("template", f"the template ({tw}x{th}) is larger than the image "
                                            f"({iw}x{ih})")
    name = args["method"]
    scores = cv2.matchTemplate(haystack, template, _MATCH_METHODS[name])
    lowest_is_best = name.startswith("sqdiff")
    matches = _best_matches(scores, (tw, th), lowest_is_best, args["threshold"],
                            args["max_matches"] if name.endswith("_normed") else 1)
    best = matches[0]
    out = as_bgr(image).copy()
    for match in reversed(matches):
        x1, y1, x2, y2 = match["bbox"]
        cv2.rectangle(out, (x1, y1), (x2 - 1, y2 - 1), RED if match is best else GREEN, 2)
    return ToolOutput(out, {"location": best["bbox"][:2], "bbox": best["bbox"],
                            "score": best["score"], "count": len(matches), "matches": matches})


def _best_matches(scores: np.ndarray, size: tuple[int, int], lowest_is_best: bool,
                  threshold: float, limit: int) -> list[dict]:
    """The best score, then further peaks that pass the threshold, each suppressing the
    placements that overlap it so one object is not reported twice."""
    tw, th = size
    scores = -scores if lowest_is_best else scores.copy()
    passing = -(1.0 - threshold) if lowest_is_best else threshold
    matches: list[dict] = []
    while len(matches) < limit:
        _, value, _, (x, y) = cv2.minMaxLoc(scores)
        if matches and (value < passing or not np.isfinite(value)):
            break
        shown = -value if lowest_is_best else value
        matches.append({"bbox": [int(x), int(y), int(x + tw), int(y + th)],
                        "score": round(float(shown), 4)})
        # Every placement overlapping this one is the same object.
        scores[max(0, y - th + 1):y + th, max(0, x - tw + 1):x + tw] = -np.inf
    return matches


def _region_stats(mask: np.ndarray, connectivity: int, min_area: int = 0,
                  ) -> tuple[np.ndarray, list[dict]]:
    """Connected components of a 0/255 mask: the label image and each component (largest
    first) with its bbox [x1, y1, x2, y2], area in pixels and centroid."""
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask, connectivity=connectivity)
    regions: list[dict[str, Any]] = []
    for label in range(1, n):
        x, y, w, h, area = (int(v) for v in stats[label])
        if area >= min_area:
            cx, cy = centroids[label]
            regions.append({"label": label, "bbox": [x, y, x + w, y + h], "area": area,
                            "centroid": [round(float(cx), 2), round(float(cy), 2)]})
    regions.sort(key=lambda r: -r["area"])
    return labels, regions


def colorize_labels(labels: np.ndarray, keep: list[int]) -> np.ndarray:
    """Each kept label in its own colour, everything else black."""
    palette = np.zeros((int(labels.max()) + 1, 3), np.uint8)
    rng = np.random.default_rng(7)
    for label in keep:
        palette[label] = rng.integers(60, 256, 3)
    coloured: np.ndarray = palette[labels]
    return coloured


@tool("watershed", "feature_extraction",
      "Split touching objects: markers from the distance transform of the foreground, then "
      "cv2.watershed; boundaries drawn in red.",
      arguments({**SEGMENT_PROPERTIES,
                 "max_regions": integer("most regions kept (the largest seeds)", minimum=1,
                                        maximum=1000, default=100),
                 "seed_ratio": number("fraction of the largest distance to the background that "
                                      "marks a sure object centre", minimum=0.05, maximum=0.95,
                                      default=0.5)}),
      measures=True,
      aliases=("Watershed", "watershed_segmentation", "segment_watershed"),
      example={"max_regions": 20})
def watershed(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    mask = foreground_mask(image, args)
    small = np.ones((3, 3), np.uint8)
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, small, iterations=2)
    sure_background = cv2.dilate(opened, small, iterations=3)
    distance = cv2.distanceTransform(opened, cv2.DIST_L2, 5)
    _, seeds = cv2.threshold(distance, args["seed_ratio"] * float(distance.max()), 255,
                             cv2.THRESH_BINARY)
    seeds = seeds.astype(np.uint8)
    n, markers, stats, _ = cv2.connectedComponentsWithStats(seeds, connectivity=8)
    if n - 1 > args["max_regions"]:  # keep the largest seeds; the rest are left to the flood
        keep = 1 + np.argsort(-stats[1:, cv2.CC_STAT_AREA])[:args["max_regions"]]
        lookup = np.zeros(n, np.int32)
        lookup[keep] = np.arange(1, len(keep) + 1)
        markers = lookup[markers]
        seeds = np.where(markers > 0, 255, 0).astype(np.uint8)
    markers = markers + 1  # 1 is the background
    markers[cv2.subtract(sure_background, seeds) == 255] = 0  # unknown: for watershed to decide
    bgr = as_bgr(image)
    markers = cv2.watershed(bgr, markers)
    objects = np.where(markers > 1, 255, 0).astype(np.uint8)
    # Watershed separates regions by -1 pixels, so 4-connected components are its regions.
    _, regions = _region_stats(objects, 4)
    out = bgr.copy()
    out[markers == -1] = RED
    listed = [{k: v for k, v in r.items() if k != "label"} for r in regions[:MAX_LISTED]]
    return ToolOutput(out, {"count": len(regions), "regions": listed})


GRABCUT_MAX_PIXELS = 250_000  # GrabCut costs seconds per megapixel and iteration


@tool("grabcut", "feature_extraction",
      "Separate the object inside a box from its background (GrabCut); the background turns "
      "black. Works on a copy of at most 0.25 megapixels, the mask is scaled back.",
      arguments({"rect": bbox("box [x1, y1, x2, y2] around the object (default: the image "
                              "less a 5% margin)"),
                 "iterations": integer("GrabCut iterations", minimum=1, maximum=20, default=3)}),
      measures=True,
      aliases=("GrabCut", "grab_cut", "foreground_extraction", "extract_foreground"),
      example={"rect": [200, 120, 440, 360], "iterations": 2},
      normalize=lambda a: checks.rename(checks.rename(a, "bbox", "rect"), "bbox_2d", "rect"),
      check=lambda a: checks.box_order("rect", a["rect"]) if "rect" in a else None)
def grabcut(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    iterations = ctx.iterations("iterations", args["iterations"])
    width, height = size_of(image)
    if "rect" in args:
        x1, y1, x2, y2 = checks.pixel_box("rect", args["rect"], image)
    else:
        mx, my = round(width * 0.05), round(height * 0.05)
        x1, y1, x2, y2 = mx, my, width - mx, height - my
    bgr = as_bgr(image)
    scale = min(1.0, math.sqrt(GRABCUT_MAX_PIXELS / (width * height)))
    work = bgr if scale == 1.0 else cv2.resize(
        bgr, (max(1, round(width * scale)), max(1, round(height * scale))),
        interpolation=cv2.INTER_AREA)
    rect = (int(x1 * scale), int(y1 * scale), max(1, int((x2 - x1) * scale)),
            max(1, int((y2 - y1) * scale)))
    mask = np.zeros(work.shape[:2], np.uint8)
    try:
        cv2.grabCut(work, mask, rect, np.zeros((1, 65)), np.zeros((1, 65)), iterations,
                    cv2.GC_INIT_WITH_RECT)
    except cv2.error:
        raise ToolArgumentError("rect", "GrabCut needs some background around the box and some "
                                        "object inside it") from None
    foreground: np.ndarray = np.where((mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD), 255, 0).astype(np.uint8)
    if scale != 1.0:
        foreground = cv2.resize(foreground, (width, height), interpolation=cv2.INTER_NEAREST)
    out = cv2.bitwise_and(image, image, mask=foreground)
    pixels = int(cv2.countNonZero(foreground))
    box = cv2.boundingRect(foreground) if pixels else (0, 0, 0, 0)
    bx, by, bw, bh = (int(v) for v in box)
    return ToolOutput(out, {"foreground_pixels": pixels, "fraction": pixels / (width * height),
                            "bbox": [bx, by, bx + bw, by + bh] if pixels else None})


@tool("connected_components", "feature_extraction",
      "Count and measure the separate objects of the image after thresholding; each object is "
      "shown in its own colour.",
      arguments({**SEGMENT_PROPERTIES,
                 "connectivity": integer_choice("4 or 8 neighbours", [4, 8], default=8),
                 "min_area": integer("objects smaller than this many pixels are ignored",
                                     minimum=0, maximum=1_000_000_000, default=0)}),
      measures=True,
      aliases=("Connected Components", "connected_components_with_stats",
               "connectedcomponentswithstats", "count_objects", "label_components",
               "connected_component"),
      example={"connectivity": 8})
def connected_components(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    labels, regions = _region_stats(foreground_mask(image, args), args["connectivity"],
                                    args["min_area"])
    out = colorize_labels(labels, [r["label"] for r in regions])
    listed = [{k: v for k, v in r.items() if k != "label"} for r in regions[:MAX_LISTED]]
    return ToolOutput(out, {"count": len(regions), "components": listed})


@tool("frequency_transform", "feature_extraction",
      "Magnitude spectrum of the 2-D Fourier transform (log scale, zero frequency at the centre); "
      "reports the strongest non-zero frequency.",
      arguments({}),
      aliases=("Frequency Transform", "dft", "fft", "fourier", "fourier_transform",
               "frequency_domain", "spectrum"),
      example={})
def frequency_transform(image: np.ndarray, args: dict, ctx: ToolContext) -> ToolOutput:
    gray = as_gray(image).astype(np.float32)
    spectrum = cv2.dft(gray, flags=cv2.DFT_COMPLEX_OUTPUT)
    magnitude = np.fft.fftshift(cv2.magnitude(spectrum[:, :, 0], spectrum[:, :, 1]))
    logged = np.log1p(magnitude)
    # OpenCV allocates dst when it is None; its stubs require an array.
    out = cv2.normalize(logged, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)  # type: ignore[call-overload]
    height, width = gray.shape
    cy, cx = height // 2, width // 2
    magnitude[max(0, cy - 1):cy + 2, max(0, cx - 1):cx + 2] = 0  # the mean, not a frequency
    py, px = np.unravel_index(int(np.argmax(magnitude)), magnitude.shape)
    # Offsets in cycles per image; the spectrum is symmetric, so report the right half-plane.
    dx, dy = int(px - cx), int(py - cy)
    if dx < 0 or (dx == 0 and dy < 0):
        dx, dy = -dx, -dy
    return ToolOutput(out, {"peak_frequency": [dx, dy],
                            "peak_period_px": round(width * height / math.hypot(dx * height,
                                                                                dy * width), 2)
                            if (dx or dy) else None})
