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
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.benchmark_fields import (
    KeyStepIn,
    KnownImages,
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
from annotation.releases import KnownRows, Release, ReleaseError, ReleaseLine, read_release, sniff
from annotation.releases.base import NOT_FOUND
from annotation.taxonomy import SLUG_MAX_LENGTH, TaxonomyCollector, too_long

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
MAX_UNPACKED_BYTES = 512 * 1024**2  # the default of settings.BENCHMARK_IMPORT_MAX_UNPACKED_BYTES
MEDIA_FIELDS = ("image", "images", "file_path")  # fields naming media files (image_path, images[2] too)


@dataclass(frozen=True, slots=True)
class FieldError:
    line: int | None  # None for the manifest or the file as a whole
    field: str
    message: str
    where: str | None = None  # how to name the place when not "line N": "row 12 of VTC-Bench.tsv"; "" for the file

    def __str__(self) -> str:
        if self.where is not None:
            where = self.where
        else:
            where = f"line {self.line}" if self.line is not None else MANIFEST_NAME
        if not where:
            return f"field '{self.field}': {self.message}" if self.field else self.message
        return f"{where}, field '{self.field}': {self.message}" if self.field else f"{where}: {self.message}"


def file_error(message: str) -> BenchmarkFileError:
    """The whole file is wrong (missing, of another kind, unsafe): one message, no line."""
    return BenchmarkFileError([FieldError(None, "", message, where="")])


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
    source_digest: str = ""  # Sample.source_digest: the reader's digest of the source row (ReleaseLine.digest)


# "agentx": Agent-X's Table 3 (docs/metrics.md), its own tab; "mmreason": an MMReason-shaped benchmark
# (the VLMEvalKit reader sets it on a TSV with MMReason's `discipline` column): its step score is
# labelled as MMReason's, with our judge prompt's version (the authors' prompt is unreleased).
KNOWN_FIGURES = frozenset({"agentx", "mmreason"})
# Scoring profiles (metrics.md section 13): whose rules decide answer correctness. The same names as
# evaluation/metrics/profiles.py PROFILES and annotation.models.ScoringProfile (a test keeps them equal).
SCORING_PROFILES = ("generic", "vtcbench", "vlmevalkit", "mmreason", "hrbench", "treebench", "tirbench")


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
    domains: dict[str, dict] | None = None  # None: open, the file's own (annotation/taxonomy.py)
    # Figure sets beyond the standard ones the leaderboard shows for this benchmark (KNOWN_FIGURES).
    figures: list[str] = field(default_factory=list)
    # The scoring profile the manifest (or a release's reader) declares; None: not said (a new
    # benchmark is then generic, a re-import keeps the benchmark's own).
    scoring: str | None = None
    # The benchmark's dataset on the Hugging Face Hub ("org/name"): the dataset.id of the model pages'
    # .eval_results entries (docs/interop.md); empty: not on the Hub.
    hf_dataset: str = ""


@dataclass(slots=True)
class BenchmarkBundle:
    manifest: Manifest
    samples: list[SampleRecord]
    # (domain name, samples, [(category name, samples)]), for the import's summary
    taxonomy: list[tuple[str, int, list[tuple[str, int]]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SourceFiles:
    jsonl: Path | None  # None when a release reader read the files (`release`)
    root: Path  # image paths in the file are relative to this folder
    manifest: Path | None
    release: Release | None = None

    @property
    def size(self) -> int:
        """What `read_benchmark`'s progress counts to: bytes of the JSONL, or a release's lines."""
        return self.jsonl.stat().st_size if self.jsonl is not None else len(self.release.lines) if self.release else 0


# ---------------------------------------------------------------------------------------------
# Locating the files (folder, JSONL, or zip)


@contextmanager
def open_benchmark_source(
    path: Path | list[Path],
    images_dir: Path | None = None,
    *,
    format: str | None = None,
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES,
    known_rows: KnownRows | None = None,
    workdir_in: Path | None = None,
) -> Iterator[SourceFiles]:
    """Yield where the samples, their images and the manifest are.

    `path` is our JSONL (a file, a folder or a zip) or an author's release (a file, several, a
    folder or a zip; annotation/releases). The format is recognised from the content and the
    names unless `format` forces it; a file of another kind gets one message naming its kind.
    `known_rows`: a release's rows the benchmark holds unchanged (their media are not decoded again).
    `workdir_in`: the folder to unpack and decode into (a hidden work folder is made there and removed after):
    the media storage's own file system, so that storing a decoded file is a link, not a copy.
    """
    paths = [Path(p) for p in (path if isinstance(path, list) else [path])]
    for p in paths:
        if not p.exists():
            raise file_error(f"{p} does not exist")
    if workdir_in is not None:
        workdir_in.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".partial-benchmark-import-", dir=workdir_in) as tmp:
        if len(paths) == 1 and paths[0].is_file() and sniff.kind_of_file(paths[0]).name == "zip":
            unpacked = Path(tmp) / paths[0].name  # messages about the folder then name the zip
            _safe_extract(paths[0], unpacked, max_unpacked_bytes)
            paths = [unpacked]
        try:
            fmt = format or sniff.detect_format(paths)
            if fmt == "jsonl":
                jsonl = _find_jsonl(paths)
                yield _source_for(jsonl, images_dir)
                return
            release = read_release(paths, fmt, workdir=Path(tmp) / "media", images_dir=images_dir,
                                   known_rows=known_rows)
        except ReleaseError as exc:
            raise file_error(str(exc)) from None
        yield SourceFiles(jsonl=None, root=release.root, manifest=None, release=release)


def _find_jsonl(paths: list[Path]) -> Path:
    if len(paths) != 1:
        raise ReleaseError("our JSON Lines format is one .jsonl file (or a folder or zip holding it), not several files")
    path = paths[0]
    if path.is_dir():
        candidates = sorted(path.rglob("*.jsonl"), key=lambda p: (len(p.parts), str(p)))
        if not candidates:
            raise ReleaseError(f"{path.name} holds no .jsonl file")
        path = path / JSONL_NAME if (path / JSONL_NAME).exists() else candidates[0]
    kind = sniff.kind_of_file(path)
    if kind.name != "jsonl":  # one message naming what it is, not fifty "not valid JSON" lines
        raise ReleaseError(kind.message(path))
    return path


def _source_for(jsonl: Path, images_dir: Path | None) -> SourceFiles:
    manifest = jsonl.parent / MANIFEST_NAME
    root = jsonl.parent
    if images_dir is not None:
        # --images names the folder the `image` paths are relative to, or the images themselves.
        root = Path(images_dir)
    return SourceFiles(jsonl=jsonl, root=root, manifest=manifest if manifest.exists() else None)


def _safe_extract(archive: Path, dest: Path, max_bytes: int) -> None:
    """Unpack, counting the bytes actually written: a header's sizes may lie (a zip bomb)."""
    limit = f"the limit of {max_bytes} bytes (BENCHMARK_IMPORT_MAX_UNPACKED_BYTES)"
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            claimed = sum(info.file_size for info in infos)
            if claimed > max_bytes:
                raise file_error(f"{archive.name} unpacks to {claimed} bytes, over {limit}")
            dest.mkdir(parents=True, exist_ok=True)
            dest_resolved = dest.resolve()
            written = 0
            for info in infos:
                target = (dest / info.filename).resolve()
                if not target.is_relative_to(dest_resolved):
                    raise file_error(f"the zip entry {info.filename!r} escapes its folder")
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                entry_bytes = 0
                with zf.open(info) as src, target.open("wb") as out:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        if written > max_bytes:
                            raise file_error(
                                f"{archive.name} unpacks to more than its entries claim; stopped at {limit} "
                                f"(entry {info.filename!r})"
                            )
                        out.write(chunk)
                        entry_bytes += len(chunk)
                if entry_bytes != info.file_size:
                    raise file_error(
                        f"{archive.name}: the zip entry {info.filename!r} claims {info.file_size} bytes but holds {entry_bytes}"
                    )
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, ValueError) as exc:
        # zipfile checks each entry's CRC and size as it reads: a lying header ends here.
        raise file_error(f"{archive.name} is a damaged zip ({exc})") from None


# ---------------------------------------------------------------------------------------------
# The manifest


def read_manifest(path: Path | None, *, resolve_tool: Callable[[str], str | None]) -> tuple[Manifest, list[FieldError]]:
    if path is None:
        return Manifest(), []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return Manifest(), [FieldError(None, "", f"not valid JSON ({exc})")]
    return manifest_from_data(data, resolve_tool=resolve_tool)


def manifest_from_data(data: Any, *, resolve_tool: Callable[[str], str | None]) -> tuple[Manifest, list[FieldError]]:
    """The manifest's checks, for `benchmark.json` or the manifest a release reader builds."""
    errors: list[FieldError] = []
    if not isinstance(data, dict):
        return Manifest(), [FieldError(None, "", "must be a JSON object")]
    manifest = Manifest()
    for key in ("slug", "name", "version", "description", "license", "citation", "hf_dataset"):
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
    figures = data.get("figures", [])
    if not isinstance(figures, list) or not all(isinstance(f, str) for f in figures):
        errors.append(FieldError(None, "figures", f"expected a list of figure-set names, got {kind_of(figures)}"))
    elif unknown := [f for f in figures if f not in KNOWN_FIGURES]:
        errors.append(FieldError(None, "figures", f"unknown figure set {unknown[0]!r} "
                                                  f"(known: {', '.join(sorted(KNOWN_FIGURES))})"))
    else:
        manifest.figures = list(dict.fromkeys(figures))
    scoring = data.get("scoring")
    if scoring is not None and scoring not in SCORING_PROFILES:
        errors.append(FieldError(None, "scoring", f"unknown scoring profile {scoring!r} (known: {', '.join(SCORING_PROFILES)})"))
    elif scoring is not None:
        manifest.scoring = scoring
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
    for item in value:
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
        name = str(spec.get("name") or slug)
        # The same limits as a line's names: a Domain or Category row that cannot hold them would fail the import.
        found = [(f"domains.{slug}", too_long(slug, "domain slug", SLUG_MAX_LENGTH)),
                 (f"domains.{slug}.name", too_long(name, "domain name"))]
        for c_slug, c_name in categories.items():
            found += [(f"domains.{slug}.categories.{c_slug}", too_long(c_slug, "category slug", SLUG_MAX_LENGTH)
                       or too_long(c_name, "category name"))]
        errors += [FieldError(None, where, problem) for where, problem in found if problem]
        domains[slug] = {"name": name, "categories": dict(categories)}
    return domains, errors


# ---------------------------------------------------------------------------------------------
# The samples


class _ErrorList:
    def __init__(self, limit: int) -> None:
        self.items: list[FieldError] = []
        self.limit = limit
        self.truncated = False
        self.count = 0  # every error, listed or not: a line knows it failed even past the cap
        # Media files not found: counted into one line (missing_media_error), not one per sample.
        self.missing_media: list[tuple[str, str]] = []  # (where, message) of each
        self.lines_seen = 0  # a release's lines that failed in its reader (never yielded)

    def add(self, line: int | None, field_name: str, message: str, where: str | None = None) -> None:
        self.count += 1
        if NOT_FOUND in message and field_name.startswith(MEDIA_FIELDS):
            self.missing_media.append((f"{where or f'line {line}'}, field '{field_name}'", message))
            return
        if len(self.items) < self.limit:
            self.items.append(FieldError(line, field_name, message, where))
        else:
            self.truncated = True

    @property
    def full(self) -> bool:
        return self.truncated

    def missing_media_error(self, lines: int, hint: str) -> FieldError | None:
        """One line for every medium not found: how many samples out of all, the first one, where the
        release keeps its media."""
        if not self.missing_media:
            return None
        samples = len({where for where, _ in self.missing_media})
        where, first = self.missing_media[0]
        return FieldError(None, "image", f"{samples} of {lines} samples have media not found (the first: {where}: "
                                         f"{first}). {hint[:1].upper() + hint[1:]}.", where="")


def read_benchmark(
    source: SourceFiles,
    *,
    registry: ToolRegistryView | None = None,
    max_errors: int = 50,
    max_pixels: int = 64_000_000,
    domain_of: dict[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
    known_images: KnownImages | None = None,
) -> BenchmarkBundle:
    """Parse and validate every line; raise BenchmarkFileError listing the first `max_errors`.

    `known_images` (sha256 -> width, height, extension): images the benchmark already holds, checked when
    they were first imported; a line naming the same bytes is not decoded again (a re-import).

    `domain_of` maps categories to domains (`--domain-of`): the grouping a one-level release lacks.
    """
    registry = registry or default_registry_view()
    errors = _ErrorList(max_errors)
    release = source.release
    if release is not None:
        manifest, manifest_errors = manifest_from_data(release.manifest, resolve_tool=registry.resolve)
    else:
        manifest, manifest_errors = read_manifest(source.manifest, resolve_tool=registry.resolve)
    for err in manifest_errors:
        errors.add(err.line, err.field, err.message, release.manifest_source if release is not None else err.where)
    registry = with_declared(registry, declared_from_dicts(manifest.declared_tools))
    taxonomy = TaxonomyCollector(manifest.domains, domain_of)
    samples: list[SampleRecord] = []
    seen: dict[str, str] = {}
    lines = 0
    for number, where, data, line in _lines(source, errors, progress):
        lines += 1
        known = None if line is None or line.known_media is None else _known_media(line.known_media, known_images)
        record = _read_record(number, where, data, source.root, manifest, taxonomy, registry, errors, max_pixels,
                              known_images, known_media=known, digest=line.digest if line is not None else "")
        if record is None:
            continue
        if record.uid in seen:
            errors.add(number, "uid", f"duplicate uid {record.uid!r}: already used on {seen[record.uid]}", where)
            continue
        seen[record.uid] = where or f"line {number}"
        samples.append(record)
        if errors.full:
            break
    name = source.jsonl.name if source.jsonl is not None else release.name if release is not None else "the file"
    hint = release.media_hint if release is not None and release.media_hint else (
        f"media paths are relative to the folder holding the .jsonl ({source.root}); pass their folder with --images DIR")
    missing = errors.missing_media_error(errors.lines_seen + lines, hint)
    if missing is not None:
        errors.items.insert(0, missing)
    if not samples and not errors.items:
        errors.add(None, "", f"{name} holds no samples", "")
    if errors.items:
        raise BenchmarkFileError(errors.items, truncated=errors.truncated)
    manifest.domains = taxonomy.domains()
    warnings = list(release.warnings) if release is not None else []
    warnings += [f"--domain-of names a category no sample has: {key!r}" for key in taxonomy.unused_mapping()]
    return BenchmarkBundle(manifest=manifest, samples=samples, taxonomy=taxonomy.counts(), warnings=warnings)


def _known_media(shas: list[str], known_images: KnownImages | None) -> list[MediumIn]:
    """The media of a row the benchmark holds unchanged (ReleaseLine.known_media): images checked when first
    imported, already in its storage (no path to read)."""
    assert known_images is not None, "a reader was given known rows without the benchmark's known images"
    return [MediumIn(kind="image", path=None, sha256=sha, ext=known_images[sha][2], width=known_images[sha][0],
                     height=known_images[sha][1]) for sha in shas]


def _lines(
    source: SourceFiles, errors: _ErrorList, progress: Callable[[int], None] | None
) -> Iterator[tuple[int, str | None, dict, ReleaseLine | None]]:
    """(line number, how to name it or None for "line N", the decoded line, a release's line) for JSONL or a release."""
    if source.release is not None:
        for line in source.release.lines:
            if progress is not None:
                progress(1)
            if line.errors:
                errors.lines_seen += 1
            for field_name, message in line.errors:
                errors.add(line.number, field_name, message, line.where)
            if line.data is not None and not line.errors:
                yield line.number, line.where, line.data, line
            if errors.full:
                return
        return
    assert source.jsonl is not None
    with source.jsonl.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if progress is not None:
                progress(len(raw))
            if not raw.strip():
                continue
            data = _decode_line(number, raw, errors)
            if data is not None:
                yield number, None, data, None
            if errors.full:
                return


def _decode_line(number: int, raw: bytes, errors: _ErrorList) -> dict | None:
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
    return data


def _read_record(
    number: int,
    where: str | None,
    data: dict,
    root: Path,
    manifest: Manifest,
    taxonomy: TaxonomyCollector,
    registry: ToolRegistryView,
    errors: _ErrorList,
    max_pixels: int,
    known_images: KnownImages | None = None,
    *,
    known_media: list[MediumIn] | None = None,
    digest: str = "",
) -> SampleRecord | None:
    before = errors.count
    for key in REQUIRED_FIELDS:
        if data.get(key) in (None, ""):
            errors.add(number, key, "missing (required)", where)
    if errors.count > before:
        return None

    def err(field_name: str, message: str) -> None:
        errors.add(number, field_name, message, where)

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

    placed = taxonomy.place(data["domain"], data["category"], err)
    domain, category = placed if placed is not None else ("", "")

    media = known_media if known_media is not None else parse_media(data, root, err, max_pixels, known_images)
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

    if errors.count > before:
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
        toolchain=toolchain, aux_line=aux_line, split=split, source=source, meta=meta, source_digest=digest,
    )  # fmt: skip


