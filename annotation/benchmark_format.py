"""Reading and validating a benchmark file (docs/formats.md): JSON Lines, an images folder, a manifest.

Plain Python (no Django): it turns a file into typed records or a list of errors, each naming
the line and the field. Nothing here writes to the database; `annotation.services` does that
only once the whole file has passed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from annotation.taxonomy import ADAPTMMBENCH_DOMAINS

MANIFEST_NAME = "benchmark.json"
JSONL_NAME = "benchmark.jsonl"
KNOWN_FIELDS = (
    "uid", "image", "question", "options", "answer", "answer_type", "tolerance", "domain", "category",
    "regions", "transform", "key_steps", "toolchain", "aux_line", "split", "source", "meta",
)  # fmt: skip
REQUIRED_FIELDS = ("uid", "image", "question", "answer", "domain", "category")
# Transform operations must keep the frame computable from the image header alone:
# rotate and flip move pixels, the photometric ones keep the size.
GEOMETRIC_TRANSFORM_OPS = {"rotate", "flip"}
PHOTOMETRIC_TRANSFORM_OPS = {
    "contrast", "brightness", "gamma", "adjust_brightness", "histogram_eq", "sharpen", "denoise", "blur",
}  # fmt: skip
IMAGE_FORMATS = {"PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF"}
UID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
OPTION_LETTER = re.compile(r"^[A-Z]$")
MAX_ZIP_BYTES = 4 * 1024**3


@dataclass(frozen=True, slots=True)
class FieldError:
    line: int | None  # None for the manifest or the file as a whole
    field: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else MANIFEST_NAME
        return f"{where}, field '{self.field}': {self.message}" if self.field else f"{where}: {self.message}"


class BenchmarkFileError(Exception):
    """The benchmark file did not pass validation; nothing was written."""

    def __init__(self, errors: list[FieldError], *, truncated: bool = False) -> None:
        self.errors = errors
        self.truncated = truncated
        more = " (more errors were not listed)" if truncated else ""
        super().__init__(f"{len(errors)} error(s){more}:\n" + "\n".join(str(e) for e in errors))


@dataclass(frozen=True, slots=True)
class KeyStepIn:
    text: str
    origin: str = "human"
    verified: bool = True


@dataclass(slots=True)
class SampleRecord:
    line: int
    uid: str
    image_path: Path
    image_sha256: str
    image_ext: str
    width: int
    height: int
    question: str
    options: dict[str, str] | None
    answer: str
    answer_type: str
    tolerance: float | None
    domain: str
    category: str
    regions: list[list[float]]
    transform: list[dict]
    key_steps: list[KeyStepIn]
    toolchain: list[dict]
    aux_line: bool
    split: str
    source: str
    meta: dict


@dataclass(slots=True)
class Manifest:
    slug: str | None = None
    name: str | None = None
    version: str = "1.0"
    description: str = ""
    license: str = ""
    citation: str = ""
    tools: list[str] = field(default_factory=list)
    cost_min: float | None = None
    cost_max: float | None = None
    domains: dict[str, dict] = field(default_factory=lambda: ADAPTMMBENCH_DOMAINS)


@dataclass(slots=True)
class BenchmarkBundle:
    manifest: Manifest
    samples: list[SampleRecord]


@dataclass(frozen=True, slots=True)
class SourceFiles:
    jsonl: Path
    root: Path  # image paths in the file are relative to this folder
    manifest: Path | None


# ---------------------------------------------------------------------------------------------
# Locating the files (folder, JSONL, or zip)


@contextmanager
def open_benchmark_source(path: Path, images_dir: Path | None = None) -> Iterator[SourceFiles]:
    """Yield where the JSONL, its images and its manifest are; a zip is unpacked to a temp folder."""
    path = Path(path)
    if not path.exists():
        raise BenchmarkFileError([FieldError(None, "", f"{path} does not exist")])
    if path.is_file() and zipfile.is_zipfile(path):
        with tempfile.TemporaryDirectory(prefix="benchmark-import-") as tmp:
            _safe_extract(path, Path(tmp))
            jsonls = sorted(Path(tmp).rglob("*.jsonl"), key=lambda p: (len(p.parts), str(p)))
            if not jsonls:
                raise BenchmarkFileError([FieldError(None, "", f"{path.name} holds no .jsonl file")])
            yield _source_for(jsonls[0], images_dir)
        return
    if path.is_dir():
        candidates = sorted(path.glob("*.jsonl"))
        if not candidates:
            raise BenchmarkFileError([FieldError(None, "", f"the folder {path} holds no .jsonl file")])
        path = path / JSONL_NAME if (path / JSONL_NAME).exists() else candidates[0]
    yield _source_for(path, images_dir)


def _source_for(jsonl: Path, images_dir: Path | None) -> SourceFiles:
    manifest = jsonl.parent / MANIFEST_NAME
    root = jsonl.parent
    if images_dir is not None:
        # --images names the folder the `image` paths are relative to, or the images themselves.
        root = Path(images_dir)
    return SourceFiles(jsonl=jsonl, root=root, manifest=manifest if manifest.exists() else None)


def _safe_extract(archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        total = sum(info.file_size for info in zf.infolist())
        if total > MAX_ZIP_BYTES:
            raise BenchmarkFileError([FieldError(None, "", f"the zip unpacks to {total} bytes, over the limit")])
        dest_resolved = dest.resolve()
        for info in zf.infolist():
            target = (dest / info.filename).resolve()
            if not target.is_relative_to(dest_resolved):
                raise BenchmarkFileError([FieldError(None, "", f"the zip entry {info.filename!r} escapes its folder")])
        zf.extractall(dest)


# ---------------------------------------------------------------------------------------------
# The manifest


def read_manifest(path: Path | None, *, resolve_tool: Callable[[str], str | None]) -> tuple[Manifest, list[FieldError]]:
    if path is None:
        return Manifest(), []
    errors: list[FieldError] = []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Manifest(), [FieldError(None, "", f"not valid JSON ({exc})")]
    if not isinstance(data, dict):
        return Manifest(), [FieldError(None, "", "must be a JSON object")]
    manifest = Manifest()
    for key in ("slug", "name", "version", "description", "license", "citation"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            errors.append(FieldError(None, key, f"expected a string, got {_kind(value)}"))
        else:
            setattr(manifest, key, value)
    tools = data.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        errors.append(FieldError(None, "tools", "expected a list of tool names"))
    else:
        for name in tools:
            canonical = resolve_tool(name)
            if canonical is None:
                errors.append(FieldError(None, "tools", f"unknown tool {name!r} (see GET /api/v1/tools/)"))
            elif canonical not in manifest.tools:
                manifest.tools.append(canonical)
    for key in ("cost_min", "cost_max"):
        value = data.get(key)
        if value is not None and (not _is_number(value) or value <= 0):
            errors.append(FieldError(None, key, "expected a positive number ($ per sample)"))
        elif value is not None:
            setattr(manifest, key, float(value))
    if (manifest.cost_min is None) != (manifest.cost_max is None):
        errors.append(FieldError(None, "cost_min", "cost_min and cost_max go together"))
    elif manifest.cost_min is not None and manifest.cost_max is not None and manifest.cost_max <= manifest.cost_min:
        errors.append(FieldError(None, "cost_max", "must be greater than cost_min"))
    if "domains" in data:
        domains, domain_errors = _read_domains(data["domains"])
        errors.extend(domain_errors)
        manifest.domains = domains
    return manifest, errors


def _read_domains(value: Any) -> tuple[dict[str, dict], list[FieldError]]:
    if not isinstance(value, dict) or not value:
        return {}, [FieldError(None, "domains", "expected an object of domain slug -> {name, categories}")]
    errors: list[FieldError] = []
    domains: dict[str, dict] = {}
    for slug, spec in value.items():
        categories = spec.get("categories") if isinstance(spec, dict) else None
        if not isinstance(categories, dict) or not all(isinstance(v, str) for v in categories.values()):
            errors.append(FieldError(None, f"domains.{slug}", "expected {name, categories: {slug: name}}"))
            continue
        domains[slug] = {"name": str(spec.get("name") or slug), "categories": dict(categories)}
    return domains, errors


# ---------------------------------------------------------------------------------------------
# The samples


class _ErrorList:
    def __init__(self, limit: int) -> None:
        self.items: list[FieldError] = []
        self.limit = limit
        self.truncated = False

    def add(self, line: int | None, field_name: str, message: str) -> None:
        if len(self.items) < self.limit:
            self.items.append(FieldError(line, field_name, message))
        else:
            self.truncated = True

    @property
    def full(self) -> bool:
        return self.truncated


@dataclass(frozen=True, slots=True)
class ToolRegistryView:
    """What validation needs from the tool registry, passed in so this module stays testable."""

    resolve: Callable[[str], str | None]
    validate_args: Callable[[str, dict], list[str]]


def default_registry_view() -> ToolRegistryView:
    from annotation.imagetools import resolve_tool_name, validate_args

    return ToolRegistryView(resolve=resolve_tool_name, validate_args=validate_args)


def read_benchmark(
    source: SourceFiles,
    *,
    registry: ToolRegistryView | None = None,
    max_errors: int = 50,
    max_pixels: int = 64_000_000,
    progress: Callable[[int], None] | None = None,
) -> BenchmarkBundle:
    """Parse and validate every line; raise BenchmarkFileError listing the first `max_errors`."""
    registry = registry or default_registry_view()
    errors = _ErrorList(max_errors)
    manifest, manifest_errors = read_manifest(source.manifest, resolve_tool=registry.resolve)
    for err in manifest_errors:
        errors.add(err.line, err.field, err.message)
    samples: list[SampleRecord] = []
    seen: dict[str, int] = {}
    with source.jsonl.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if progress is not None:
                progress(len(raw))
            if not raw.strip():
                continue
            record = _read_line(number, raw, source.root, manifest, registry, errors, max_pixels)
            if record is None:
                continue
            if record.uid in seen:
                errors.add(number, "uid", f"duplicate uid {record.uid!r}: already used on line {seen[record.uid]}")
                continue
            seen[record.uid] = number
            samples.append(record)
            if errors.full:
                break
    if not samples and not errors.items:
        errors.add(None, "", f"{source.jsonl.name} holds no samples")
    if errors.items:
        raise BenchmarkFileError(errors.items, truncated=errors.truncated)
    return BenchmarkBundle(manifest=manifest, samples=samples)


def _read_line(
    number: int,
    raw: bytes,
    root: Path,
    manifest: Manifest,
    registry: ToolRegistryView,
    errors: _ErrorList,
    max_pixels: int,
) -> SampleRecord | None:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        errors.add(number, "", f"not UTF-8 text (byte {exc.start})")
        return None
    except json.JSONDecodeError as exc:
        errors.add(number, "", f"not valid JSON: {exc.msg} at column {exc.colno}")
        return None
    if not isinstance(data, dict):
        errors.add(number, "", f"expected a JSON object, got {_kind(data)}")
        return None
    before = len(errors.items)
    for key in REQUIRED_FIELDS:
        if data.get(key) in (None, ""):
            errors.add(number, key, "missing (required)")
    if len(errors.items) > before:
        return None

    def err(field_name: str, message: str) -> None:
        errors.add(number, field_name, message)

    uid = data["uid"]
    if not isinstance(uid, str) or not UID_PATTERN.match(uid):
        err("uid", "expected 1-128 characters of letters, digits, '.', '_', ':' or '-'")
    question = _string(data, "question", err)
    answer_raw = data["answer"]
    answer = str(answer_raw).strip() if isinstance(answer_raw, (str, int, float)) and not isinstance(answer_raw, bool) else None
    if answer is None:
        err("answer", f"expected a string or a number, got {_kind(answer_raw)}")

    options = _options(data.get("options"), err)
    answer_type = _answer_type(data.get("answer_type"), options, answer, err)
    if answer_type == "choice" and options and answer is not None:
        if answer.upper() not in options:
            err("answer", f"{answer!r} is not one of the option letters {', '.join(options)}")
        else:
            answer = answer.upper()
    if answer_type == "number" and answer is not None and _parse_number(answer) is None:
        err("answer", f"{answer!r} is not a number but answer_type is 'number'")
    tolerance = data.get("tolerance")
    if tolerance is not None and (not _is_number(tolerance) or tolerance < 0 or not math.isfinite(tolerance)):
        err("tolerance", "expected null or a non-negative number")
        tolerance = None

    domain, category = data["domain"], data["category"]
    if domain not in manifest.domains:
        err("domain", f"unknown domain {domain!r}; expected one of {', '.join(manifest.domains)}")
    elif category not in manifest.domains[domain]["categories"]:
        known = ", ".join(manifest.domains[domain]["categories"])
        err("category", f"unknown category {category!r} in domain {domain!r}; expected one of {known}")

    image = _image(data["image"], root, err, max_pixels)
    transform = _transform(data.get("transform"), registry, err)
    frame = frame_size(image[3], image[4], transform) if image is not None and transform is not None else None
    regions = _regions(data.get("regions"), frame, err)
    key_steps = _key_steps(data.get("key_steps"), err)
    toolchain = _toolchain(data.get("toolchain"), registry, err)
    aux_line = data.get("aux_line", False)
    if not isinstance(aux_line, bool):
        err("aux_line", f"expected true or false, got {_kind(aux_line)}")
    split = data.get("split", "test")
    if split not in ("dev", "test"):
        err("split", f"expected 'dev' or 'test', got {split!r}")
    source = data.get("source") or ""
    if not isinstance(source, str):
        err("source", f"expected a string, got {_kind(source)}")
    meta = data.get("meta") or {}
    if not isinstance(meta, dict):
        err("meta", f"expected an object, got {_kind(meta)}")
        meta = {}
    # Unknown fields are kept, never an error (formats.md).
    meta = {**{k: v for k, v in data.items() if k not in KNOWN_FIELDS and k not in meta}, **meta}

    if len(errors.items) > before or errors.full:
        return None
    assert image is not None and transform is not None and regions is not None
    assert key_steps is not None and toolchain is not None and answer is not None and question is not None
    return SampleRecord(
        line=number, uid=uid, image_path=image[0], image_sha256=image[1], image_ext=image[2],
        width=image[3], height=image[4], question=question, options=options, answer=answer,
        answer_type=answer_type, tolerance=float(tolerance) if tolerance is not None else None,
        domain=domain, category=category, regions=regions, transform=transform, key_steps=key_steps,
        toolchain=toolchain, aux_line=aux_line, split=split, source=source, meta=meta,
    )  # fmt: skip


def _string(data: dict, key: str, err: Callable[[str, str], None]) -> str | None:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        err(key, f"expected a non-empty string, got {_kind(value)}")
        return None
    return value


def _options(value: Any, err: Callable[[str, str], None]) -> dict[str, str] | None:
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


def _answer_type(value: Any, options: dict | None, answer: str | None, err: Callable[[str, str], None]) -> str:
    inferred = "choice" if options else ("number" if answer is not None and _parse_number(answer) is not None else "text")
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


def _image(value: Any, root: Path, err: Callable[[str, str], None], max_pixels: int) -> tuple | None:
    if not isinstance(value, str):
        err("image", f"expected a relative path, got {_kind(value)}")
        return None
    path = (root / value).resolve()
    if not path.is_relative_to(root.resolve()):
        err("image", f"{value!r} points outside the images folder")
        return None
    if not path.is_file():
        err("image", f"image file {value!r} not found under {root}")
        return None
    try:
        with Image.open(path) as img:  # reads the header only
            width, height, fmt = img.width, img.height, img.format
    except (UnidentifiedImageError, OSError) as exc:
        err("image", f"{value!r} is not a readable image ({exc.__class__.__name__})")
        return None
    if fmt not in IMAGE_FORMATS:
        err("image", f"{value!r} is a {fmt} image; expected one of {', '.join(sorted(IMAGE_FORMATS))}")
        return None
    if width * height > max_pixels:
        err("image", f"{value!r} is {width}x{height} pixels, over the limit of {max_pixels}")
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    ext = {"JPEG": ".jpg", "TIFF": ".tif"}.get(fmt, "." + fmt.lower())
    return path, digest.hexdigest(), ext, width, height


def _transform(value: Any, registry: ToolRegistryView, err: Callable[[str, str], None]) -> list[dict] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        err("transform", f"expected a list of operations, got {_kind(value)}")
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
        if name not in GEOMETRIC_TRANSFORM_OPS | PHOTOMETRIC_TRANSFORM_OPS:
            allowed = ", ".join(sorted(GEOMETRIC_TRANSFORM_OPS | PHOTOMETRIC_TRANSFORM_OPS))
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


def _regions(value: Any, frame: tuple[int, int] | None, err: Callable[[str, str], None]) -> list[list[float]] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        err("regions", f"expected a list of [x1, y1, x2, y2] boxes, got {_kind(value)}")
        return None
    boxes: list[list[float]] = []
    for index, box in enumerate(value, start=1):
        where = f"regions[{index}]"
        if not isinstance(box, list) or len(box) != 4 or not all(_is_number(v) for v in box):
            err(where, "expected [x1, y1, x2, y2] of four numbers")
            return None
        x1, y1, x2, y2 = (float(v) for v in box)
        if x2 <= x1 or y2 <= y1:
            err(where, f"{_fmt_box(box)} is empty or inverted (need x1 < x2 and y1 < y2)")
            return None
        if frame is not None and (x1 < 0 or y1 < 0 or x2 > frame[0] or y2 > frame[1]):
            err(where, f"{_fmt_box(box)} lies outside the image ({frame[0]}x{frame[1]} after the transform)")
            return None
        boxes.append([_tidy(v) for v in (x1, y1, x2, y2)])
    return boxes


def _key_steps(value: Any, err: Callable[[str, str], None]) -> list[KeyStepIn] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        err("key_steps", f"expected a list of strings, got {_kind(value)}")
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


def _toolchain(value: Any, registry: ToolRegistryView, err: Callable[[str, str], None]) -> list[dict] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        err("toolchain", f"expected a list of tool calls, got {_kind(value)}")
        return None
    calls: list[dict] = []
    known_refs = {"img0"}
    previous = "img0"
    for index, call in enumerate(value, start=1):
        where = f"toolchain[{index}]"
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            err(where, "expected an object with a 'tool' name")
            return None
        name = registry.resolve(call["tool"])
        if name is None:
            err(f"{where}.tool", f"unknown tool {call['tool']!r} (see GET /api/v1/tools/)")
            return None
        args = call.get("args") or {}
        if not isinstance(args, dict):
            err(f"{where}.args", f"expected an object, got {_kind(args)}")
            return None
        problems = registry.validate_args(name, args)
        if problems:
            err(f"{where}.args", f"{name}: {problems[0]}")
            return None
        # Missing references follow formats.md: the previous call's output in, a new reference out.
        source = call.get("input") or previous
        output = call.get("output") or _next_ref(known_refs)
        if source not in known_refs:
            err(f"{where}.input", f"{source!r} is not img0 or the output of an earlier call")
            return None
        if output in known_refs:
            err(f"{where}.output", f"{output!r} is already defined; each call needs a new output reference")
            return None
        known_refs.add(output)
        previous = output
        calls.append({"tool": name, "args": args, "input": source, "output": output})
    return calls


def _next_ref(known: set[str]) -> str:
    k = 1
    while f"img{k}" in known:
        k += 1
    return f"img{k}"


def _parse_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _fmt_box(box: list) -> str:
    return "[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in box) + "]"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )
