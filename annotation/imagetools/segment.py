"""Foreground masks for the tools that find shapes (contours, components, watershed, measures)."""

from __future__ import annotations

import cv2
import numpy as np

from annotation.imagetools.images import as_gray
from annotation.imagetools.schema import choice, integer

SEGMENT_PROPERTIES: dict[str, dict] = {
    "threshold_mode": choice("how the image is split into foreground and background: otsu, "
                             "binary (at threshold_value) or nonzero (every non-black pixel)",
                             ["otsu", "binary", "nonzero"], default="otsu"),
    "threshold_value": integer("threshold for threshold_mode binary", minimum=0, maximum=255,
                               default=127),
    "foreground": choice("which side is the objects: auto (the smaller of the two classes), "
                         "light or dark", ["auto", "light", "dark"], default="auto"),
}


def foreground_mask(image: np.ndarray, args: dict) -> np.ndarray:
    """`args` holds SEGMENT_PROPERTIES (defaults filled in). A 0/255 mask of the objects. With
    foreground auto, the objects are the class covering
    less of the image (dark text on white paper, bright blobs on black); with threshold_mode
    nonzero they are the non-black pixels."""
    gray = as_gray(image)
    mode, foreground = args["threshold_mode"], args["foreground"]
    if mode == "nonzero":
        # OpenCV takes a scalar operand; its stubs list arrays only.
        mask: np.ndarray = cv2.compare(gray, 0, cv2.CMP_GT)  # type: ignore[call-overload]
        return cv2.bitwise_not(mask) if foreground == "dark" else mask
    if mode == "otsu":
        _, mask = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    else:
        _, mask = cv2.threshold(gray, args["threshold_value"], 255, cv2.THRESH_BINARY)
    if foreground == "dark" or (foreground == "auto" and cv2.countNonZero(mask) * 2 > mask.size):
        mask = cv2.bitwise_not(mask)
    return mask
