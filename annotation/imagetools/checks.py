"""Argument checks that a JSON Schema cannot express: box order, points and boxes inside the
image, odd kernels. Each raises ToolArgumentError naming the argument."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.images import size_of


def box_order(argument: str, box: list[float]) -> None:
    x1, y1, x2, y2 = box
    if x2 <= x1:
        raise ToolArgumentError(argument, f"x2 ({_n(x2)}) must be greater than x1 ({_n(x1)})")
    if y2 <= y1:
        raise ToolArgumentError(argument, f"y2 ({_n(y2)}) must be greater than y1 ({_n(y1)})")


def pixel_box(argument: str, box: list[float], image: np.ndarray) -> tuple[int, int, int, int]:
    """Integer [x1, y1, x2, y2] of a box that must lie inside the image. Fractional edges are
    widened to whole pixels (floor / ceil) so nothing of the box is cut."""
    box_order(argument, box)
    width, height = size_of(image)
    x1, y1, x2, y2 = box
    if x2 > width:
        raise ToolArgumentError(argument, f"x2 ({_n(x2)}) is outside the image width {width}")
    if y2 > height:
        raise ToolArgumentError(argument, f"y2 ({_n(y2)}) is outside the image height {height}")
    return math.floor(x1), math.floor(y1), math.ceil(x2), math.ceil(y2)


def point_inside(image: np.ndarray, x: int, y: int) -> None:
    """The point given by the arguments "x" and "y" must be a pixel of the image."""
    width, height = size_of(image)
    if not 0 <= x < width:
        raise ToolArgumentError("x", f"{x} is outside the image width {width}")
    if not 0 <= y < height:
        raise ToolArgumentError("y", f"{y} is outside the image height {height}")


def odd(args: dict, *names: str) -> None:
    for name in names:
        if name in args and args[name] % 2 == 0:
            raise ToolArgumentError(name, f"must be odd, got {args[name]}")


def ordered(args: dict, low: str, high: str) -> None:
    if args[low] > args[high]:
        raise ToolArgumentError(high, f"{args[high]} must not be below {low} ({args[low]})")


def box_from_xywh(args: dict, key: str) -> dict:
    """Accepts x, y, width, height for a tool that takes a box (VTC's zoom_in form)."""
    parts = ("x", "y", "width", "height")
    if key in args or not all(p in args for p in parts):
        return args
    out = {k: v for k, v in args.items() if k not in parts}
    if not all(is_number(args[p]) for p in parts):
        bad = next(p for p in parts if not is_number(args[p]))
        raise ToolArgumentError(bad, f"expected a number, got {args[bad]!r}")
    out[key] = [args["x"], args["y"], args["x"] + args["width"], args["y"] + args["height"]]
    return out


def rename(args: dict, alias: str, name: str) -> dict:
    """Accepts `alias` for the argument `name` (e.g. Qwen's bbox_2d for bbox)."""
    if alias not in args:
        return args
    if name in args:
        raise ToolArgumentError(alias, f'give either "{name}" or "{alias}", not both')
    out = {k: v for k, v in args.items() if k != alias}
    out[name] = args[alias]
    return out


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def all_numbers(values: list) -> bool:
    """all(map(is_number, values)), quicker for the usual exact ints and floats."""
    for value in values:  # noqa: SIM110 - a loop: all() over a generator is slower on this hot path
        if type(value) is not int and type(value) is not float and not is_number(value):
            return False
    return True


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
