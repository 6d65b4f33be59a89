"""Field-level parsing of benchmark-file lines, shared by the importer and the workbench.

Each parser takes the raw JSON value and an `err(field, message)` callback, and returns the
clean value or None after reporting what was wrong. Plain Python: no Django import.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from annotation.declared_tools import DeclaredSet, DeclaredTool
from annotation.jpeg_check import jpeg_whole
from annotation.releases.base import NOT_FOUND

# Transform operations must keep the frame computable from the image header alone:
# rotate and flip move pixels, the photometric ones keep the size.
GEOMETRIC_TRANSFORM_OPS = {"rotate", "flip"}
PHOTOMETRIC_TRANSFORM_OPS = {
    "contrast", "brightness", "gamma", "adjust_brightness", "histogram_eq", "sharpen", "denoise", "blur",
}  # fmt: skip
TRANSFORM_OPS = GEOMETRIC_TRANSFORM_OPS | PHOTOMETRIC_TRANSFORM_OPS  # what a recovery transform may hold
IMAGE_FORMATS = {"PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF"}
OPTION_LETTER = re.compile(r"^[A-Z]$")
_PILLOW_SIZE = re.compile(r"Image size \((\d+) pixels\)")
ErrorCallback = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class KeyStepIn:
    text: str
    origin: str = "human"
    verified: bool = True


@dataclass(frozen=True, slots=True)
class ToolRegistryView:
    """What validation needs from the tool registry, passed in so this module stays testable.

    `declared` holds the canonical names of the benchmark's declared tools (validated, never
    run); `with_declared` builds such a view."""

    resolve: Callable[[str], str | None]
    validate_args: Callable[[str, dict], list[str]]
    declared: frozenset[str] = frozenset()


def default_registry_view(declared: Iterable[DeclaredTool] = ()) -> ToolRegistryView:
    from annotation.imagetools import resolve_tool_name, validate_args

    return with_declared(ToolRegistryView(resolve=resolve_tool_name, validate_args=validate_args), declared)


def with_declared(view: ToolRegistryView, tools: Iterable[DeclaredTool]) -> ToolRegistryView:
    """`view` plus a benchmark's declared tools; their names come first (see declared_tools)."""
    known = DeclaredSet(tools)
    if not known:
        return view

    def resolve(name: str) -> str | None:
        tool = known.get(name)
        return tool.name if tool is not None else view.resolve(name)

    def validate_args(name: str, args: dict) -> list[str]:
        tool = known.get(name)
        if tool is not None:
            return known.problems(tool, args)
        problems = view.validate_args(name, args)
        if problems and view.resolve(name) is None and (hint := known.suggest(name)):
            return [f'unknown tool "{name}"; did you mean "{hint}"?']
        return problems

    return ToolRegistryView(resolve=resolve, validate_args=validate_args, declared=view.declared | known.names)


def unknown_tool_text(name: str, registry: ToolRegistryView) -> str:
    if registry.declared:
        return (f"unknown tool {name!r}: neither a registry tool (see GET /api/v1/tools/) nor one this benchmark "
                f"declares ({', '.join(sorted(registry.declared))})")
    return f"unknown tool {name!r} (see GET /api/v1/tools/)"


def parse_string(data: dict, key: str, err: Callable[[str, str], None]) -> str | None:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        err(key, f"expected a non-empty string, got {kind_of(value)}")
        return None
    return value


def parse_options(value: Any, err: Callable[[str, str], None]) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) < 2:
        err("options", "expected null or an object of at least two letters -> option texts")
        return None
    for letter, text in value.items():
        if not OPTION_LETTER.match(letter):
            err("options", f"bad option letter {letter!r}: expected a single capital letter A-Z")
            return None
        if not isinstance(text, str) or not text.strip():
            err("options", f"option {letter} must be a non-empty string")
            return None
    return dict(value)


def infer_answer_type(value: Any, options: dict | None, answer: str | None, err: Callable[[str, str], None]) -> str:
    inferred = "choice" if options else ("number" if answer is not None and parse_number(answer) is not None else "text")
    if value is None:
        return inferred
    if value not in ("choice", "number", "text"):
        err("answer_type", f"expected 'choice', 'number' or 'text', got {value!r}")
        return inferred
    if value == "choice" and not options:
        err("answer_type", "'choice' needs options")
    if value != "choice" and options:
        err("answer_type", f"{value!r} but the sample has options (use 'choice')")
    return value


# sha256 -> (width, height, extension) of images already checked (a re-import's): not decoded again.
KnownImages = Mapping[str, tuple[int, int, str]]


def parse_image(value: Any, root: Path, err: Callable[[str, str], None], max_pixels: int,
                known: KnownImages | None = None) -> tuple | None:
    if not isinstance(value, str):
        err("image", f"expected a relative path, got {kind_of(value)}")
        return None
    path = (root / value).resolve()
    if not path.is_relative_to(root.resolve()):
        err("image", f"{value!r} points outside the images folder")
        return None
    if not path.is_file():
        err("image", f"image file {value!r} {NOT_FOUND} {root}")
        return None
    data = path.read_bytes()  # once: hashed, then decoded from memory
    sha256 = hashlib.sha256(data).hexdigest()
    if known is not None and sha256 in known:  # the same bytes as an image this benchmark already holds
        width, height, ext = known[sha256]
        return path, sha256, ext, width, height
    checked = _decode_checked(io.BytesIO(data), value, err, max_pixels, whole=data)
    if checked is None:
        return None
    width, height, fmt = checked
    ext = {"JPEG": ".jpg", "TIFF": ".tif"}.get(fmt, "." + fmt.lower())
    return path, sha256, ext, width, height


def _decode_checked(path: Path | io.BytesIO, value: str, err: ErrorCallback, max_pixels: int,
                    whole: bytes | None = None) -> tuple[int, int, str] | None:
    """(width, height, format) of an image that decodes completely, else None after an error.

    The size comes from the header and is checked against `max_pixels` before any pixel is
    decoded; only then is the whole image decoded, so a truncated or corrupt file is refused here
    rather than failing later in the workbench or the tool runner. A JPEG whose bytes (`whole`) pass
    jpeg_check's walk over its markers is not decoded: the walk refuses what the decode would (a 55 KB
    photo: 0.04 ms instead of 0.5), and a file it refuses is decoded, for the decoder's own message.
    """
    try:
        with warnings.catch_warnings():
            # Pillow warns between its own limit and twice it, and refuses above; ours is applied below.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as img:  # reads the header only
                width, height, fmt = img.width, img.height, img.format
                if fmt not in IMAGE_FORMATS:
                    err("image", f"{value!r} is a {fmt} image; expected one of {', '.join(sorted(IMAGE_FORMATS))}")
                    return None
                if width * height > max_pixels:
                    err("image", f"{value!r} is {width}x{height} pixels, over the limit of {max_pixels}")
                    return None
                if fmt == "JPEG" and whole is not None and jpeg_whole(whole):
                    return width, height, fmt
                if fmt == "JPEG":
                    # Decoding at 1/8 scale still reads every byte of the compressed data (so a
                    # truncated file raises) and is ~10x quicker: 24 ms, not 263, for 12 Mpx.
                    img.draft(img.mode, (max(1, width // 8), max(1, height // 8)))
                img.load()  # decodes the whole file: a truncated or corrupt one raises here
    except Image.DecompressionBombError as exc:
        claimed = _PILLOW_SIZE.search(str(exc))
        size = f"{int(claimed.group(1))} pixels" if claimed else "more pixels than can be decoded"
        err("image", f"{value!r} claims {size} in its header, over the limit of {max_pixels}")
        return None
    except UnidentifiedImageError:
        err("image", f"{value!r} is not a readable image (not a format Pillow recognises)")
        return None
    except (OSError, SyntaxError, ValueError) as exc:
        err("image", f"{value!r} is damaged and cannot be decoded ({exc}); re-export or replace it")
        return None
    return width, height, fmt


def parse_transform(value: Any, registry: ToolRegistryView, err: Callable[[str, str], None]) -> list[dict] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        err("transform", f"expected a list of operations, got {kind_of(value)}")
        return None
    ops: list[dict] = []
    for index, op in enumerate(value, start=1):
        where = f"transform[{index}]"
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            err(where, "expected an object with an 'op' name")
            return None
        name = registry.resolve(op["op"])
        if name is None:
            err(f"{where}.op", f"unknown operation {op['op']!r}")
            return None
        if name not in TRANSFORM_OPS:
            allowed = ", ".join(sorted(TRANSFORM_OPS))
            err(f"{where}.op", f"{name!r} cannot be a recovery transform; use one of {allowed}")
            return None
        args = {k: v for k, v in op.items() if k != "op"}
        problems = registry.validate_args(name, args)
        if problems:
            err(where, f"{name}: {problems[0]}")
            return None
        ops.append({"op": name, **args})
    return ops


def frame_size(width: int, height: int, transform: list[dict]) -> tuple[int, int]:
    """Size of the image after the transform: the frame regions are given in.

    Only rotations change it (flips and photometric operations keep the size); the registry's
    own `rotated_size` is used so that the importer and the runner agree to the pixel.
    """
    from annotation.imagetools import rotated_size

    for op in transform:
        if op["op"] == "rotate":
            width, height = rotated_size(width, height, float(op.get("angle", 0)))
    return width, height


def parse_located_regions(
    value: Any, frames: dict[str, tuple[int, int] | None], err: Callable[[str, str], None]
) -> list[tuple[str, list[float]]] | None:
    """(image reference, box) of each region. A region is `[x1, y1, x2, y2]` on img0, or
    `{"box": [...], "image": "img<k>"}` on any medium of the sample; `frames` maps each medium's
    reference to the size its boxes must lie in (img0's after the transform; None: unchecked)."""
    if value is None:
        return []
    if not isinstance(value, list):
        err("regions", f"expected a list of [x1, y1, x2, y2] boxes, got {kind_of(value)}")
        return None
    located: list[tuple[str, list[float]]] = []
    for index, item in enumerate(value, start=1):
        where = f"regions[{index}]"
        ref, box = "img0", item
        if isinstance(item, dict):
            ref, box = item.get("image", "img0"), item.get("box")
            if ref not in frames:
                known = ", ".join(frames)
                err(f"{where}.image", f"{ref!r} is not an image of the sample (expected one of {known})")
                return None
        if not isinstance(box, list) or len(box) != 4 or not all(is_number(v) for v in box):
            err(where, "expected [x1, y1, x2, y2] of four numbers, or {\"box\": [...], \"image\": \"img1\"}")
            return None
        x1, y1, x2, y2 = (float(v) for v in box)
        if x2 <= x1 or y2 <= y1:
            err(where, f"{format_box(box)} is empty or inverted (need x1 < x2 and y1 < y2)")
            return None
        frame = frames.get(ref)
        if frame is not None and (x1 < 0 or y1 < 0 or x2 > frame[0] or y2 > frame[1]):
            after = " after the transform" if ref == "img0" else ""
            on = "the image" if len(frames) == 1 else ref
            err(where, f"{format_box(box)} lies outside {on} ({frame[0]}x{frame[1]}{after})")
            return None
        located.append((ref, [tidy_number(v) for v in (x1, y1, x2, y2)]))
    return located


def region_entry(ref: str, box: list) -> list | dict:
    """A region as the benchmark file writes it: a bare box on img0, else with its image."""
    return list(box) if ref == "img0" else {"box": list(box), "image": ref}


def parse_key_steps(value: Any, err: Callable[[str, str], None]) -> list[KeyStepIn] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        err("key_steps", f"expected a list of strings, got {kind_of(value)}")
        return None
    steps: list[KeyStepIn] = []
    for index, item in enumerate(value, start=1):
        if isinstance(item, str) and item.strip():
            steps.append(KeyStepIn(text=item.strip()))
        elif isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip():
            origin = item.get("origin", "human")
            verified = item.get("verified", origin == "human")
            if origin not in ("human", "llm") or not isinstance(verified, bool):
                err(f"key_steps[{index}]", "origin must be 'human' or 'llm' and verified a boolean")
                return None
            steps.append(KeyStepIn(text=item["text"].strip(), origin=origin, verified=verified))
        else:
            err(f"key_steps[{index}]", "expected a non-empty string")
            return None
    return steps


def parse_toolchain(
    value: Any, registry: ToolRegistryView, err: Callable[[str, str], None], *, inputs: Sequence[str] = ("img0",)
) -> list[dict] | None:
    """A reference toolchain, each call's tool resolved to its canonical name.

    A chain whose entries are all bare names (`"Crop"` or `{"tool": "Crop"}`: no args, input or
    output) is a name-only chain (VTC-Bench's): it comes back as `[{"tool": "crop"}, ...]`,
    counts for the toolset and length figures, and is never run. Otherwise every call gets its
    arguments checked and its image references filled in (formats.md). `inputs` are the
    references that exist before the first call (the sample's images).
    """
    if value is None:
        return []
    if not isinstance(value, list):
        err("toolchain", f"expected a list of tool calls, got {kind_of(value)}")
        return None
    if value and all(is_name_only_call(call) for call in value):
        return _name_only_chain(value, registry, err)
    calls: list[dict] = []
    known_refs = set(inputs)
    previous = inputs[0] if inputs else "img0"
    for index, call in enumerate(value, start=1):
        where = f"toolchain[{index}]"
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            hint = " (a chain of bare tool names is fine, but then every entry must be one)" if isinstance(call, str) else ""
            err(where, f"expected an object with a 'tool' name{hint}")
            return None
        name = registry.resolve(call["tool"])
        if name is None:
            err(f"{where}.tool", unknown_tool_text(call["tool"], registry))
            return None
        args = call.get("args") or {}
        if not isinstance(args, dict):
            err(f"{where}.args", f"expected an object, got {kind_of(args)}")
            return None
        problems = registry.validate_args(name, args)
        if problems:
            err(f"{where}.args", f"{name}: {problems[0]}")
            return None
        # Missing references follow formats.md: the previous call's output in, a new reference out.
        source = call.get("input") or previous
        output = call.get("output") or next_ref(known_refs)
        if source not in known_refs:
            err(f"{where}.input", f"{source!r} is not {' or '.join(inputs)} or the output of an earlier call")
            return None
        if output in known_refs:
            err(f"{where}.output", f"{output!r} is already defined; each call needs a new output reference")
            return None
        known_refs.add(output)
        previous = output
        calls.append({"tool": name, "args": args, "input": source, "output": output})
    return calls


def is_name_only_call(call: Any) -> bool:
    """A bare tool name: a string, or an object holding nothing but `tool`."""
    return isinstance(call, str) or (isinstance(call, dict) and set(call) == {"tool"})


def _name_only_chain(value: list, registry: ToolRegistryView, err: Callable[[str, str], None]) -> list[dict] | None:
    calls: list[dict] = []
    for index, call in enumerate(value, start=1):
        raw = call if isinstance(call, str) else call["tool"]
        if not isinstance(raw, str) or not raw.strip():
            err(f"toolchain[{index}]", f"expected a tool name, got {'an empty string' if isinstance(raw, str) else kind_of(raw)}")
            return None
        name = registry.resolve(raw)
        if name is None:
            err(f"toolchain[{index}]", unknown_tool_text(raw, registry))
            return None
        calls.append({"tool": name})
    return calls


def next_ref(known: set[str]) -> str:
    k = 1
    while f"img{k}" in known:
        k += 1
    return f"img{k}"


def parse_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def tidy_number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def format_box(box: list) -> str:
    return "[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in box) + "]"


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )
