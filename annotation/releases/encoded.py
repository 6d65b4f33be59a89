"""Structures the releases encode as strings: options, boxes, key steps, transforms.

The encodings are not documented (releases.md), so each parser accepts the reasonable variants:
JSON, Python literals (through `ast.literal_eval`, never `eval`), and plain text. Each returns
the value in our line's shape, or raises `Unreadable` with what it expected.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

CURLY_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u201e": '"',
                              "\u00ab": '"', "\u00bb": '"'})
_LETTERED = re.compile(r"(?:^|(?<=\s))\(?([A-Z])[.):]\s+")
_NUMBERED = re.compile(r"^\s*(?:step\s*)?\(?\d+\s*[.):\-]\s*|^\s*[-*\u2022]\s+", re.IGNORECASE)


class Unreadable(ValueError):
    """The value could not be read; the message says what was expected."""


# How pandas and Python write an empty value, spelled exactly as pandas' reader takes them for empty
# (case matters to it: `Nan`, a name, is text to the authors' code, and so here).
EMPTY_SPELLINGS = frozenset({"nan", "NaN", "-nan", "-NaN", "None", "null", "NULL"})


def is_blank(value: Any) -> bool:
    """None, NaN (pandas' and pyarrow's empty cell), an empty value as pandas writes it, or only whitespace."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if not isinstance(value, str):
        return False
    stripped = value.strip()  # lowered only when short: a cell of base64 is 77 KB
    return not stripped or (len(stripped) <= 4 and stripped in EMPTY_SPELLINGS)


def load_structure(text: str, *, repair_quotes: bool = False) -> tuple[Any, bool]:
    """(value, repaired) for JSON or a Python literal; `repaired` when curly quotes had to be straightened."""
    text = text.strip()
    for candidate, repaired in ((text, False), (text.translate(CURLY_QUOTES), True)):
        if repaired and (not repair_quotes or candidate == text):
            continue
        try:
            return json.loads(candidate), repaired
        except (json.JSONDecodeError, RecursionError):
            pass
        try:
            return ast.literal_eval(candidate), repaired
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    raise Unreadable("neither JSON nor a Python literal")


def _structured(value: Any) -> Any:
    """A string that holds a list or a dict is decoded; anything else is returned as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{", "("):
        try:
            return load_structure(value, repair_quotes=True)[0]
        except Unreadable:
            if value.strip()[:1] in ("[", "{"):  # "(A) red (B) blue" is text; a broken list is not
                raise Unreadable("starts like a list or an object but is neither valid JSON nor a Python literal") from None
            return value
    return value


def parse_options(value: Any) -> dict[str, str] | None:
    """A dict of letters, a list (lettered A, B, ... in order), or "A. ... B. ..." text."""
    if is_blank(value):
        return None
    value = _structured(value)
    if isinstance(value, dict):
        if not value:
            return None
        options = {}
        for key, text in value.items():
            letter = str(key).strip().strip(".):").upper()
            if not re.fullmatch(r"[A-Z]", letter):
                raise Unreadable(f"option key {key!r} is not a letter")
            if not is_blank(text):
                options[letter] = str(text).strip()
        return options or None
    if isinstance(value, (list, tuple)):
        texts = [str(t).strip() for t in value if not is_blank(t)]
        if len(texts) > 26:
            raise Unreadable(f"{len(texts)} options; at most 26 (A-Z)")
        # A list of "A. text" strings keeps its own letters.
        lettered = [_LETTERED.match(t) for t in texts]
        if texts and all(lettered):
            return {m.group(1): t[m.end():].strip() for m, t in zip(lettered, texts, strict=True) if m}  # type: ignore[union-attr]
        return {chr(ord("A") + i): t for i, t in enumerate(texts)} or None
    if isinstance(value, str):
        return _lettered_text(value)
    raise Unreadable(f"expected letters -> texts, a list or 'A. ... B. ...' text, got {type(value).__name__}")


def _lettered_text(text: str) -> dict[str, str]:
    matches = list(_LETTERED.finditer(text))
    letters = [m.group(1) for m in matches]
    # The letters must run A, B, C... from the start, or this is not an option list.
    if len(matches) < 2 or letters != [chr(ord("A") + i) for i in range(len(letters))] or text[: matches[0].start()].strip():
        raise Unreadable("expected options as 'A. ... B. ...' text, a list or an object of letters")
    options = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        options[m.group(1)] = text[m.end() : end].strip().rstrip(";,").strip()
    if not all(options.values()):
        raise Unreadable("an option letter with no text")
    return options


def parse_boxes(value: Any) -> list[list[float]]:
    """One box [x1, y1, x2, y2], a list of boxes, or their text ("10, 20, 30, 40")."""
    if is_blank(value):
        return []
    value = _structured(value)
    if isinstance(value, str):
        numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
        if len(numbers) % 4 or not numbers or re.sub(r"[-\d.,;\s\[\]()]", "", value):
            raise Unreadable("expected [x1, y1, x2, y2] or a list of such boxes")
        values = [float(n) for n in numbers]
        return [values[i : i + 4] for i in range(0, len(values), 4)]
    if isinstance(value, dict):
        if {"x1", "y1", "x2", "y2"} <= set(value):
            value = [value["x1"], value["y1"], value["x2"], value["y2"]]
        elif "bbox" in value:
            return parse_boxes(value["bbox"])
    if isinstance(value, (list, tuple)):
        if not value:
            return []
        if len(value) == 4 and all(_is_num(v) for v in value):
            return [[float(v) for v in value]]
        if all(isinstance(b, (list, tuple)) and len(b) == 4 and all(_is_num(v) for v in b) for b in value):
            return [[float(v) for v in b] for b in value]
    raise Unreadable("expected [x1, y1, x2, y2] or a list of such boxes")


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def parse_key_steps(value: Any) -> list[str]:
    """A list (of strings, or of objects with a step text), or numbered lines."""
    if is_blank(value):
        return []
    value = _structured(value)
    if isinstance(value, (list, tuple)):
        steps = []
        for item in value:
            if isinstance(item, dict):
                item = next((item[k] for k in ("text", "step", "content", "description") if isinstance(item.get(k), str)), None)
                if item is None:
                    raise Unreadable("a step object without a text")
            if not isinstance(item, str):
                raise Unreadable(f"a step that is not text ({type(item).__name__})")
            text = _NUMBERED.sub("", item).strip()
            if text:
                steps.append(text)
        return steps
    if isinstance(value, str):
        lines = [line for line in value.splitlines() if line.strip()]
        if len(lines) == 1:
            # "1. Find the row. 2. Read it." on one line.
            parts = re.split(r"(?:^|\s+)(?:step\s*)?\d+\s*[.):]\s+", lines[0], flags=re.IGNORECASE)
            parts = [p.strip() for p in parts if p.strip()]
            return parts or [lines[0].strip()]
        return [_NUMBERED.sub("", line).strip() for line in lines if _NUMBERED.sub("", line).strip()]
    raise Unreadable(f"expected a list of steps or numbered lines, got {type(value).__name__}")


# Transform labels: what AdaptMMBench-like files may write instead of an operation list. Each
# maps to our recovery operation (docs/formats.md); a label we cannot map is kept in meta.
_NO_TRANSFORM = {"", "none", "original", "identity", "no", "null", "na", "n/a", "no transform", "nochange", "no_change"}


def parse_transform(value: Any) -> list[dict] | None:
    """Our operation list, or a label mapped to it; None when the label cannot be mapped."""
    if is_blank(value):
        return []
    value = _structured(value)
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, (list, tuple)):
        ops: list[dict] = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("op"), str):
                ops.append(dict(item))
            elif isinstance(item, dict) and isinstance(item.get("type") or item.get("name"), str):
                ops.append({"op": item.get("type") or item.get("name"),
                            **{k: v for k, v in item.items() if k not in ("type", "name")}})
            elif isinstance(item, str):
                mapped = transform_label(item)
                if mapped is None:
                    return None
                ops += mapped
            else:
                raise Unreadable("expected operations {\"op\": ...} or labels")
        return ops
    if isinstance(value, str):
        ops = []
        for part in re.split(r"\s*(?:[;+|]|,\s*(?=[a-zA-Z])|\bthen\b|\band\b)\s*", value):
            mapped = transform_label(part)
            if mapped is None:
                return None
            ops += mapped
        return ops
    if _is_num(value):
        return transform_label(f"rotate {value}")
    raise Unreadable(f"expected an operation list or a label, got {type(value).__name__}")


def transform_label(label: str) -> list[dict] | None:
    """`rotate 90`, `rotation_180`, `90`, `flip horizontal`, `vflip`, `contrast 1.8`, `brightness -40`, `gamma 0.5`."""
    text = label.strip().lower().replace("°", " ").replace("degrees", " ").replace("degree", " ").replace("deg", " ")
    text = re.sub(r"_+|(?<=[a-z])-(?=[a-z])", " ", text).strip()  # not the minus of "-40"
    if text in _NO_TRANSFORM:
        return []
    number = re.search(r"-?\d+(?:\.\d+)?", text)
    value = float(number.group()) if number else None
    words = re.sub(r"-?\d+(?:\.\d+)?", " ", text).split()
    joined = "".join(words)
    if value is not None and (not words or joined in ("rotate", "rotation", "rotated", "rot", "rotateccw", "ccw",
                                                      "counterclockwise")):
        return [{"op": "rotate", "angle": _tidy(value)}]
    if value is not None and joined in ("rotatecw", "cw", "clockwise", "rotateclockwise", "rotatedclockwise"):
        return [{"op": "rotate", "angle": _tidy(-value)}]
    if joined in ("upsidedown", "rotateupsidedown"):
        return [{"op": "rotate", "angle": 180}]
    flips = {
        "horizontal": ("flip", "hflip", "horizontalflip", "fliphorizontal", "fliph", "mirror", "fliplr", "flipleftright"),
        "vertical": ("vflip", "verticalflip", "flipvertical", "flipv", "flipud", "flipupdown", "fliptopbottom"),
        "both": ("flipboth", "bothflip", "hvflip"),
    }
    for direction, names in flips.items():
        if joined in names and value is None:
            return [{"op": "flip", "direction": direction}]
    if value is not None and joined in ("contrast", "adjustcontrast", "contrastalpha"):
        return [{"op": "contrast", "alpha": _tidy(value)}]
    if value is not None and joined in ("brightness", "adjustbrightness", "brighten", "brightnessbeta"):
        return [{"op": "brightness", "beta": _tidy(value)}]
    if value is not None and joined in ("darken",):
        return [{"op": "brightness", "beta": _tidy(-abs(value))}]
    if value is not None and joined in ("gamma", "gammacorrection"):
        return [{"op": "gamma", "gamma": _tidy(value)}]
    return None


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
