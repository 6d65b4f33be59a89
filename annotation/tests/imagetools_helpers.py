"""Synthetic images with known answers, shared by the imagetools tests."""

from __future__ import annotations

import numpy as np

from annotation.imagetools import REGISTRY, ToolOutput


def call(name: str, image: np.ndarray, **args: object) -> ToolOutput:
    """Runs one registered tool (validating its arguments as the runner does)."""
    return REGISTRY[name](image, args)


def canvas(width: int = 200, height: int = 120, value: int | tuple = 0) -> np.ndarray:
    image = np.zeros((height, width, 3), np.uint8)
    image[:] = value
    return image


def marked(width: int = 200, height: int = 120, x: int = 30, y: int = 10) -> np.ndarray:
    """Black, with one white pixel at (x, y)."""
    image = canvas(width, height)
    image[y, x] = 255
    return image


def where_white(image: np.ndarray) -> list[tuple[int, int]]:
    """(x, y) of every pure white pixel."""
    plane = image if image.ndim == 2 else image.min(axis=2)
    ys, xs = np.nonzero(plane == 255)
    return sorted(zip(xs.tolist(), ys.tolist()))


def textured(width: int = 320, height: int = 240, seed: int = 0) -> np.ndarray:
    """Smooth random texture: every patch is distinctive (for template matching)."""
    import cv2

    rng = np.random.default_rng(seed)
    noise = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    return cv2.GaussianBlur(noise, (0, 0), 2)
