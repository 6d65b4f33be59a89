"""What a tool gets besides its image and arguments: the limits and the named images."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotation.imagetools.errors import ToolArgumentError

DEFAULT_MAX_PIXELS = 64_000_000
# Measurement lists (boxes, lines, contours ...) keep at most this many items, largest first;
# the `count` beside them is always the full number.
MAX_LISTED = 200


@dataclass(frozen=True)
class Limits:
    """Bounds on one run. Kernel sizes and iterations can only tighten the schemas' ranges
    (the schema maximum is the absolute cap); the time limit is for the whole chain."""

    max_pixels: int = DEFAULT_MAX_PIXELS  # per image, input or output
    max_chain_length: int = 32
    max_kernel_size: int = 31
    max_iterations: int = 20
    time_limit_s: float = 20.0
    # All images a chain keeps at once (img0, extras and every output), so that a long chain
    # of large images cannot hold gigabytes.
    max_total_pixels: int = 400_000_000


@dataclass
class ToolOutput:
    """A tool's result: an image (uint8, 2-D or 3-channel BGR) and, for measuring tools,
    plain JSON-ready numbers."""

    image: np.ndarray
    measurements: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolContext:
    limits: Limits = field(default_factory=Limits)
    images: Mapping[str, np.ndarray] = field(default_factory=dict)

    def kernel(self, argument: str, size: int) -> int:
        if size > self.limits.max_kernel_size:
            raise ToolArgumentError(argument, f"{size} exceeds the kernel size limit "
                                              f"{self.limits.max_kernel_size}")
        return size

    def iterations(self, argument: str, count: int) -> int:
        if count > self.limits.max_iterations:
            raise ToolArgumentError(argument, f"{count} exceeds the iteration limit "
                                              f"{self.limits.max_iterations}")
        return count

    def output_size(self, argument: str, width: int, height: int) -> tuple[int, int]:
        """Refuses an output image before allocating it when it would be too large."""
        if width < 1 or height < 1:
            raise ToolArgumentError(argument, f"the output would be empty ({width}x{height})")
        if width * height > self.limits.max_pixels:
            raise ToolArgumentError(argument, f"the output would be {width}x{height} = "
                                              f"{width * height:,} pixels, above the limit "
                                              f"{self.limits.max_pixels:,}")
        return width, height

    def image(self, argument: str, ref: str) -> np.ndarray:
        if ref not in self.images:
            known = ", ".join(sorted(self.images)) or "none"
            raise ToolArgumentError(argument, f'"{ref}" is not a known image (known: {known})')
        return self.images[ref]
