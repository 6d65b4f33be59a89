"""Reasoning-process figures (metrics.md section 4, AdaptMMBench Sec. 4.3) and grounding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Box = tuple[float, float, float, float]


def key_step_coverage(verdicts: Sequence[bool]) -> tuple[float | None, float | None]:
    """(kcov, kcov_any): the longest all-matched prefix k_1..k_j over m, and matched over m.

    None for a sample with no key steps: it has nothing to cover and is left out of the mean.
    """
    m = len(verdicts)
    if m == 0:
        return None, None
    run = 0
    for v in verdicts:
        if not v:
            break
        run += 1
    return run / m, sum(1 for v in verdicts if v) / m


def box_from_args(args: Mapping[str, Any]) -> Box | None:
    """A region from a zoom/crop call: ``bbox``/``box``/``region`` [x1, y1, x2, y2], or
    VTC-Bench's ``x, y, width, height``. None when the arguments name no region."""
    for key in ("bbox", "box", "region", "bbox_2d"):
        v = args.get(key)
        if isinstance(v, (list, tuple)) and len(v) == 4:
            try:
                x1, y1, x2, y2 = (float(t) for t in v)
            except (TypeError, ValueError):
                return None
            return (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
    if "width" in args and "height" in args and "x" in args and "y" in args:
        try:
            x, y = float(args["x"]), float(args["y"])
            w, h = float(args["width"]), float(args["height"])
        except (TypeError, ValueError):
            return None
        return (x, y, x + w, y + h)
    return None


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def intersection(a: Box, b: Box) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def iou(a: Box, b: Box) -> float:
    inter = intersection(a, b)
    union = _area(a) + _area(b) - inter
    return inter / union if union > 0 else 0.0


def coverage(pred: Box, region: Box) -> float:
    """Share of the annotated region's area that the predicted box covers."""
    area = _area(region)
    return intersection(pred, region) / area if area > 0 else 0.0


def best_iou(predicted: Sequence[Box], regions: Sequence[Box]) -> float | None:
    """Best IoU between any predicted box and any annotated region; None if either is empty."""
    if not predicted or not regions:
        return None
    return max(iou(p, r) for p in predicted for r in regions)


def net_rotation(transform: Sequence[Mapping[str, Any]]) -> float | None:
    """Total annotated rotation (degrees, counter-clockwise), None when the recovery has none."""
    total = None
    for op in transform:
        if op.get("op") == "rotate":
            try:
                total = (total or 0.0) + float(op.get("angle", 0.0))
            except (TypeError, ValueError):
                continue
    return total


def angle_gap(a: float, b: float) -> float:
    """Smallest absolute difference between two angles, in degrees."""
    d = (a - b) % 360.0
    return min(d, 360.0 - d)
