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
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.benchmark_fields import (
    KeyStepIn,
    with_declared,
    ToolRegistryView,
    default_registry_view,
    frame_size,
    infer_answer_type,
    is_number,
    kind_of,
    parse_key_steps,
    parse_located_regions,
    parse_number,
    parse_options,
    parse_string,
    parse_toolchain,
    parse_transform,
    region_entry,
)
from annotation.benchmark_media import MediumIn, media_refs, parse_media
from annotation.declared_tools import DeclaredTool, declared_from_dicts, read_declared_tool
from annotation.declared_tools import fold as fold_tool_name
from annotation.taxonomy import ADAPTMMBENCH_DOMAINS

__all__ = [  # frame_size, KeyStepIn and the registry view are part of this module's interface too
    "BenchmarkBundle", "BenchmarkFileError", "FieldError", "KeyStepIn", "Manifest", "SampleRecord", "SourceFiles",
    "ToolRegistryView", "default_registry_view", "frame_size", "open_benchmark_source", "read_benchmark", "read_manifest",
]

MANIFEST_NAME = "benchmark.json"
JSONL_NAME = "benchmark.jsonl"
KNOWN_FIELDS = (
    "uid", "image", "images", "question", "options", "answer", "answer_type", "tolerance", "domain", "category",
    "regions", "transform", "key_steps", "toolchain", "aux_line", "split", "source", "meta",
)  # fmt: skip
REQUIRED_FIELDS = ("uid", "question", "answer", "domain", "category")  # and `image` or `images`
UID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
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


@dataclass(slots=True)
class SampleRecord:
    line: int
    uid: str
    # Sample.image: the first medium's still. For a video that is its poster (media[0].frames[0]),
    # and image_path is None.
    image_path: Path | None
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
    regions: list[list | dict]  # region_entry form: a box on img0, else {"box", "image"}
    transform: list[dict]
    key_steps: list[KeyStepIn]
    toolchain: list[dict]
    aux_line: bool
    split: str
    source: str
    meta: dict
    media: list[MediumIn] = field(default_factory=list)  # in order: img0, img1, ...


@dataclass(slots=True)
class Manifest:
    slug: str | None = None
    name: str | None = None
    version: str = "1.0"
    description: str = ""
    license: str = ""
    citation: str = ""
    tools: list[str] = field(default_factory=list)
    # Tools declared by the benchmark and not run here: {"name", "description", "args_schema"}.
    declared_tools: list[dict] = field(default_factory=list)
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
            errors.append(FieldError(None, key, f"expected a string, got {kind_of(value)}"))
        else:
            setattr(manifest, key, value)
    _read_tools(data.get("tools", []), manifest, resolve_tool, errors)
    for key in ("cost_min", "cost_max"):
        value = data.get(key)
        if value is not None and (not is_number(value) or value <= 0):
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


def _read_tools(value: Any, manifest: Manifest, resolve_tool: Callable[[str], str | None], errors: list[FieldError]) -> None:
    """`tools`: registry names (strings) and declared tools (objects with an argument schema, or
    Agent-X toolmeta.json entries). A string may also name a tool declared in the same list."""
    if not isinstance(value, list):
        errors.append(FieldError(None, "tools", "expected a list of tool names or tool declarations"))
        return

    def err(where: str, message: str) -> None:
        errors.append(FieldError(None, where, message))

    declared: dict[str, DeclaredTool] = {}
    for index, item in enumerate(value, start=1):
        if isinstance(item, str):
            continue
        tool = read_declared_tool(item, err, f"tools[{index}]")
        if tool is None:
            continue
        if fold_tool_name(tool.name) in declared:
            err(f"tools[{index}].name", f"{tool.name!r} is declared twice")
            continue
        declared[fold_tool_name(tool.name)] = tool
    manifest.declared_tools = [t.as_dict() for t in declared.values()]
    for index, item in enumerate(value, start=1):
        if not isinstance(item, str):
            continue
        if fold_tool_name(item) in declared:
            continue
        canonical = resolve_tool(item)
        if canonical is None:
            hint = "; to declare a tool the registry does not run, give an object {name, description, args_schema}"
            err("tools", f"unknown tool {item!r} (see GET /api/v1/tools/){hint}")
        elif canonical not in manifest.tools:
            manifest.tools.append(canonical)


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
    registry = with_declared(registry, declared_from_dicts(manifest.declared_tools))
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
        errors.add(number, "", f"expected a JSON object, got {kind_of(data)}")
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
    question = parse_string(data, "question", err)
    answer_raw = data["answer"]
    answer = str(answer_raw).strip() if isinstance(answer_raw, (str, int, float)) and not isinstance(answer_raw, bool) else None
    if answer is None:
        err("answer", f"expected a string or a number, got {kind_of(answer_raw)}")

    options = parse_options(data.get("options"), err)
    answer_type = infer_answer_type(data.get("answer_type"), options, answer, err)
    if answer_type == "choice" and options and answer is not None:
        if answer.upper() not in options:
            err("answer", f"{answer!r} is not one of the option letters {', '.join(options)}")
        else:
            answer = answer.upper()
    if answer_type == "number" and answer is not None and parse_number(answer) is None:
        err("answer", f"{answer!r} is not a number but answer_type is 'number'")
    tolerance = data.get("tolerance")
    if tolerance is not None and (not is_number(tolerance) or tolerance < 0 or not math.isfinite(tolerance)):
        err("tolerance", "expected null or a non-negative number")
        tolerance = None

    domain, category = data["domain"], data["category"]
    if domain not in manifest.domains:
        err("domain", f"unknown domain {domain!r}; expected one of {', '.join(manifest.domains)}")
    elif category not in manifest.domains[domain]["categories"]:
        known = ", ".join(manifest.domains[domain]["categories"])
        err("category", f"unknown category {category!r} in domain {domain!r}; expected one of {known}")

    media = parse_media(data, root, err, max_pixels)
    transform = parse_transform(data.get("transform"), registry, err)
    regions = None
    if media is not None and transform is not None:
        # The transform applies to img0 only; boxes on the other media are in their own pixels.
        frames = {ref: (m.width, m.height) for ref, m in zip(media_refs(len(media)), media, strict=True)}
        frames["img0"] = frame_size(media[0].width, media[0].height, transform)
        located = parse_located_regions(data.get("regions"), frames, err)
        regions = None if located is None else [region_entry(ref, box) for ref, box in located]
    key_steps = parse_key_steps(data.get("key_steps"), err)
    toolchain = parse_toolchain(data.get("toolchain"), registry, err, inputs=media_refs(len(media) if media else 1))
    aux_line = data.get("aux_line", False)
    if not isinstance(aux_line, bool):
        err("aux_line", f"expected true or false, got {kind_of(aux_line)}")
    split = data.get("split", "test")
    if split not in ("dev", "test"):
        err("split", f"expected 'dev' or 'test', got {split!r}")
    source = data.get("source") or ""
    if not isinstance(source, str):
        err("source", f"expected a string, got {kind_of(source)}")
    meta = data.get("meta") or {}
    if not isinstance(meta, dict):
        err("meta", f"expected an object, got {kind_of(meta)}")
        meta = {}
    # Unknown fields are kept, never an error (formats.md).
    meta = {**{k: v for k, v in data.items() if k not in KNOWN_FIELDS and k not in meta}, **meta}

    if len(errors.items) > before or errors.full:
        return None
    assert media is not None and transform is not None and regions is not None
    assert key_steps is not None and toolchain is not None and answer is not None and question is not None
    first = media[0]
    if first.kind == "video":
        still_path, still_sha, still_ext = None, hashlib.sha256(first.frames[0]).hexdigest(), ".jpg"
    else:
        still_path, still_sha, still_ext = first.path, first.sha256, first.ext
    return SampleRecord(
        line=number, uid=uid, image_path=still_path, image_sha256=still_sha, image_ext=still_ext,
        width=first.width, height=first.height, media=media, question=question, options=options, answer=answer,
        answer_type=answer_type, tolerance=float(tolerance) if tolerance is not None else None,
        domain=domain, category=category, regions=regions, transform=transform, key_steps=key_steps,
        toolchain=toolchain, aux_line=aux_line, split=split, source=source, meta=meta,
    )  # fmt: skip


