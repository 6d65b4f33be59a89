"""Colour arguments. Tools take RGB (as people and models write colours) and draw in OpenCV's
BGR order; this is the one place that converts."""

from __future__ import annotations

import re
from typing import Any

from annotation.imagetools.errors import ToolArgumentError

NAMED_COLORS: dict[str, tuple[int, int, int]] = {
    "red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255), "yellow": (255, 255, 0),
    "cyan": (0, 255, 255), "magenta": (255, 0, 255), "white": (255, 255, 255),
    "black": (0, 0, 0), "gray": (128, 128, 128), "grey": (128, 128, 128),
    "orange": (255, 165, 0), "purple": (128, 0, 128), "pink": (255, 192, 203),
    "brown": (165, 42, 42), "lime": (0, 255, 0),
}
# What the tools draw their findings in (BGR, for OpenCV).
BGR_RED, BGR_GREEN = (0, 0, 255), (0, 255, 0)
_HEX = re.compile(r"^#?([0-9a-fA-F]{6})$")


def rgb(value: Any, argument: str) -> tuple[int, int, int]:
    """An RGB triple from [r, g, b], a colour name or "#rrggbb"."""
    if isinstance(value, str):
        name = value.strip().lower()
        if name in NAMED_COLORS:
            return NAMED_COLORS[name]
        match = _HEX.match(name)
        if match:
            digits = match.group(1)
            return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
        raise ToolArgumentError(argument, f'"{value}" is not a colour: give [r, g, b], "#rrggbb" '
                                f'or one of {", ".join(sorted(NAMED_COLORS))}')
    r, g, b = (int(v) for v in value)
    return r, g, b


def bgr(value: Any, argument: str) -> tuple[int, int, int]:
    r, g, b = rgb(value, argument)
    return b, g, r


def check_color(value: Any, argument: str) -> None:
    # Shortcuts for what `rgb` accepts without a doubt: a lowercase name, three ints.
    if type(value) is str:
        if value in NAMED_COLORS:
            return
    elif type(value) is list and len(value) == 3 and \
            type(value[0]) is int and type(value[1]) is int and type(value[2]) is int:
        return
    rgb(value, argument)
