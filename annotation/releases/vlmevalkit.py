"""A VLMEvalKit dataset TSV (MMReason, VL-RouterBench's datasets, any VLMEvalKit dataset).

One row per sample under a header: `index`, `image` (base64; a value of 64 characters or fewer is
the `index` of another row whose image it shares; a Python list of base64 strings for several
images) or `image_path`, `question`, `answer`, options as columns `A`, `B`, ... (empty or NaN:
absent), and maybe `hint`, `category`, `l2-category`, `split`, MMReason's `discipline`.
Taxonomy: `l2-category` (else `discipline`) is the domain and `category` the category; with one
level only, it is the category and the domain is "All" (`--domain-of` groups them).
Columns with our own field names (`regions`, `transform`, `key_steps`, `toolchain`, `meta` as our
JSON; `answer_type`, `tolerance`, `aux_line`, `source`), which `export_benchmark --format
vlmevalkit` writes, are taken back as they are, so ours -> VLMEvalKit TSV -> ours is the same benchmark.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from annotation.releases.base import NOT_FOUND, KnownRows, Release, ReleaseError, ReleaseLine
from annotation.releases.common import LETTER_COLUMN, choice_answer, empty_word_errors, letter_columns, text
from annotation.releases.encoded import Unreadable, is_blank, load_structure
from annotation.releases.media import MediaFolder, find_media
from annotation.releases.sniff import release_files
from annotation.releases.tables import tsv_rows
from annotation.taxonomy import ONE_LEVEL_DOMAIN

MEDIA_HINT = ("a VLMEvalKit dataset carries its images as base64 in the `image` column; an `image_path` is relative "
              "to the TSV's folder or to VLMEvalKit's LMUData/images/<dataset>/: pass that folder with --images DIR")
IMAGE_REFERENCE_MAX = 64  # VLMEvalKit: an `image` this short is another row's index
CONVERTED = {"index", "image", "image_path", "question", "answer", "category", "l2-category", "discipline", "split"}
# Columns with our own field names, as `export_benchmark --format vlmevalkit` writes them (our JSON).
OUR_JSON = ("regions", "transform", "key_steps", "toolchain", "meta")
OUR_COLUMNS = {*OUR_JSON, "answer_type", "tolerance", "aux_line", "source"}
# HR-Bench's column: the rotation cycle a row belongs to (its scoring averages the cycles' accuracies).
CYCLE = "cycle_category"
# TreeBench's column: the target boxes, a Python list of [x1, y1, x2, y2] in pixels.
TARGETS = "target_instances"
DEV_SPLITS = {"dev", "val", "validation", "minival", "train"}
# Part of every row's digest (ReleaseLine.digest): change it when this reader reads a row differently, and every
# row of a re-import is read (its image decoded and checked) in full again.
READER_VERSION = "vlmevalkit/2"  # 2: HR-Bench's cycle_category and TreeBench's target_instances read
NO_ROWS: Mapping[str, list[tuple[str, int]]] = {}


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None, known_rows: KnownRows = NO_ROWS) -> Release:
    """`known_rows`: rows the benchmark holds unchanged (by digest); their images are not decoded again."""
    files = [f for f in release_files(paths) if f.suffix.lower() == ".tsv"]
    if not files:
        raise ReleaseError(f"{', '.join(p.name for p in paths)}: no .tsv file to read as a VLMEvalKit dataset")
    media = MediaFolder(workdir)
    lines: list[ReleaseLine] = []
    mmreason = False
    read = [(path, *_read_file(path, media, images_dir, known_rows)) for path in files]
    uids = [line.data.get("uid") for _, _, file_lines in read for line in file_lines if line.data is not None]
    # Our own export's files of one benchmark (one per kind: answer_type column, uids distinct) keep their uids.
    ours = all("answer_type" in columns for _, columns, _ in read) and len(set(uids)) == len(uids)
    hrbench = treebench = False
    for path, columns, file_lines in read:
        mmreason = mmreason or "discipline" in columns
        hrbench = hrbench or CYCLE in columns
        treebench = treebench or TARGETS in columns
        if len(files) > 1 and not ours:
            # Several datasets number their rows alike: the uid is "<dataset>:<index>" (VL-RouterBench
            # writes "<Dataset>/<id>"; a uid has no "/"), and the dataset is the domain when none is given.
            for line in file_lines:
                if line.data is not None and line.data.get("uid") is not None:
                    line.data["uid"] = f"{path.stem}:{line.data['uid']}"
                    if line.data["domain"] == ONE_LEVEL_DOMAIN:
                        line.data["domain"] = path.stem
        lines += file_lines
    name = files[0].name if len(files) == 1 else f"{len(files)} TSV files"
    # The authors' answer rules by default (metrics.md section 13): VLMEvalKit's matching, or MMReason's.
    manifest: dict = {"name": files[0].stem, "scoring": "vlmevalkit"}
    if mmreason:  # MMReason's own column: its step score is labelled as such (docs/metrics.md, section 6)
        manifest["figures"] = ["mmreason"]
        manifest["scoring"] = "mmreason"
    if hrbench:  # HR-Bench's own columns: its cycle combination (docs/metrics.md, "HR-Bench")
        manifest["scoring"] = "hrbench"
    elif treebench:  # TreeBench's target boxes: its letter rule and mean IoU (docs/metrics.md, "TreeBench")
        manifest["scoring"] = "treebench"
    return Release(format="vlmevalkit", name=name, lines=lines, root=workdir, manifest=manifest, media_hint=MEDIA_HINT)


def _read_file(path: Path, media: MediaFolder, images_dir: Path | None,
               known_rows: KnownRows) -> tuple[list[str], list[ReleaseLine]]:
    columns, rows = tsv_rows(path)
    missing = {"index", "question", "answer"} - set(columns)
    if missing or not ({"image", "image_path"} & set(columns)):
        need = ", ".join(sorted(missing | ({"image or image_path"} if not {"image", "image_path"} & set(columns) else set())))
        raise ReleaseError(f"{path.name}: a TSV without VLMEvalKit's columns (missing {need}; it has {', '.join(columns[:12])})")
    # Streamed: each image is written to the work folder as its row is read, so only names stay in memory.
    # A row may share an image by naming another row's index (VLMEvalKit's shorthand): it takes that row's
    # media, once the row has been read (a reference to a later row is resolved at the end).
    bases = [b for b in (images_dir, path.parent) if b is not None]
    # index of a row with a full image -> its media names, and their sha256 when it was not decoded (known)
    saved: dict[str | None, tuple[list[str], list[str] | None]] = {}
    lines: list[ReleaseLine] = []
    later: list[tuple[ReleaseLine, str]] = []
    header = "\t".join(columns)
    for number, row in rows:
        value = row.get("image") or ""
        ref = value.strip() if not is_blank(value) and len(value) <= IMAGE_REFERENCE_MAX else None
        # One image in the row itself: the row's text is all that makes the sample, so its digest says whether
        # the benchmark holds it unchanged (then its image, the same bytes, is neither decoded nor checked again).
        inline = ref is None and not is_blank(value) and not value.lstrip().startswith("[")
        digest = _digest(path.name, header, row) if inline else ""
        known = known_rows.get(digest) if digest else None
        if known is not None and [size for _, size in known] != [_decoded_size(value)]:
            known = None  # a stored copy is missing or of another length: decode the row, which stores it again
        shas = [sha for sha, _ in known] if known is not None else None
        line = _line(path.name, number, row, columns, media, bases, shas if shas is not None else
                     saved[ref][0] if ref is not None and ref in saved else None)
        line.digest = digest
        line.known_media = shas if shas is not None else saved[ref][1] if ref is not None and ref in saved else None
        if ref is not None and ref not in saved:
            later.append((line, ref))
        elif ref is None and line.data is not None and line.data.get("image") is not None:
            saved[text(row.get("index"))] = (line.data.get("images") or [line.data["image"]], line.known_media)
        lines.append(line)
    for line, ref in later:
        _share(line, ref, saved.get(ref))
    return columns, lines


def _digest(file_name: str, header: str, row: dict) -> str:
    """The row's digest: this reader's version, the file's name and header, every cell (ReleaseLine.digest)."""
    digest = hashlib.sha256(f"{READER_VERSION}\x1f{file_name}\x1f{header}\x1e".encode())
    digest.update("\t".join(row.values()).encode())
    return digest.hexdigest()


def _decoded_size(value: str) -> int:
    """How many bytes the base64 cell decodes to, without decoding it (whitespace inside it makes this wrong,
    so such a row is decoded in full)."""
    value = value.strip()
    return len(value) * 3 // 4 - (2 if value.endswith("==") else 1 if value.endswith("=") else 0)


def _share(line: ReleaseLine, ref: str, found: tuple[list[str], list[str] | None] | None) -> None:
    """A row whose image names another row's index: that row's media, or the error."""
    if found is None:
        line.errors.append(("image", f"{ref!r} is short, so it names another row's index, but no row with index "
                                     f"{ref!r} has an image"))
        return
    assert line.data is not None
    names, line.known_media = found
    line.data["image"] = names[0]
    if len(names) > 1:
        line.data["images"] = list(names)


def _line(
    file_name: str, number: int, row: dict, columns: list[str], media: MediaFolder, bases: list[Path],
    shared: list[str] | None,
) -> ReleaseLine:
    errors = empty_word_errors(row, {"index": "the uid", "question": "the question", "answer": "the answer"})
    images = list(shared) if shared is not None else _images(row, media, bases, errors)
    options = letter_columns(row, columns)
    category, domain = text(row.get("category")), text(row.get("l2-category")) or text(row.get("discipline"))
    if category is None:
        category, domain = domain, None
    split = (text(row.get("split")) or "test").lower()
    meta = {k: v for k, v in row.items()
            if k not in CONVERTED and k not in OUR_COLUMNS and not LETTER_COLUMN.match(k) and not is_blank(v)}
    if split not in ("dev", "test"):
        meta["split"] = row.get("split")
    data = {
        "uid": text(row.get("index")),
        "image": images[0] if images else None,
        "question": text(row.get("question")),
        "options": options,
        "answer": choice_answer(text(row.get("answer")), options),
        "domain": domain or ONE_LEVEL_DOMAIN,
        "category": category or file_name.rsplit(".", 1)[0],
        "split": "dev" if split in DEV_SPLITS else "test",
        "source": file_name,
        "meta": meta,
    }
    ours = _our_columns(row, errors)
    data.update({**ours, "meta": {**meta, **ours.get("meta", {})}})
    if len(images) > 1:
        data["images"] = images
    if text(row.get("discipline")) and text(row.get("l2-category")):
        meta["discipline"] = row["discipline"]
    if CYCLE in columns:  # HR-Bench: the task type (single, cross) is the domain, the cycle its category
        data["domain"] = text(row.get("category")) or ONE_LEVEL_DOMAIN
        data["category"] = text(row.get(CYCLE)) or CYCLE
        data["meta"]["category"] = text(row.get("category"))
    if TARGETS in columns:  # TreeBench: "Perception/Attributes" is domain/category; the targets are the regions
        task, _, subtask = (text(row.get("category")) or "").partition("/")
        if subtask:
            data["domain"], data["category"] = task, subtask
        boxes = _target_boxes(row.get(TARGETS), errors)
        if boxes:
            data["regions"] = boxes
    return ReleaseLine(number=number, where=f"row {number} of {file_name}", data=data, errors=errors)


def _target_boxes(value: str | None, errors: list) -> list[list[float]]:
    """TreeBench's `target_instances`: a Python (or JSON) list of [x1, y1, x2, y2] boxes; empty: none."""
    if is_blank(value):
        return []
    try:
        boxes = load_structure(str(value))[0]
    except Unreadable as exc:
        errors.append((TARGETS, f"cannot read {str(value)[:60]!r}: {exc}"))
        return []
    if not isinstance(boxes, list) or not all(
            isinstance(b, (list, tuple)) and len(b) == 4 and all(isinstance(v, (int, float)) for v in b) for b in boxes):
        errors.append((TARGETS, f"expected a list of [x1, y1, x2, y2] boxes, got {str(value)[:60]!r}"))
        return []
    return [list(b) for b in boxes]


def _our_columns(row: dict, errors: list) -> dict:
    """The fields our own export adds (docs/formats.md, "Export as a VLMEvalKit dataset TSV"), as they are;
    the benchmark validator then checks them like a JSON Lines line."""
    out: dict = {}
    for key in OUR_JSON:
        if not is_blank(row.get(key)):
            try:
                out[key] = json.loads(row[key])
            except ValueError as exc:
                errors.append((key, f"not valid JSON ({exc})"))
    if not isinstance(out.get("meta", {}), dict):
        errors.append(("meta", f"expected a JSON object, got {type(out.pop('meta')).__name__}"))
    for key in ("answer_type", "source"):
        if not is_blank(row.get(key)):
            out[key] = text(row[key])
    if not is_blank(row.get("tolerance")):
        try:
            out["tolerance"] = float(row["tolerance"])
        except ValueError:
            errors.append(("tolerance", f"expected a number, got {row['tolerance']!r}"))
    if not is_blank(row.get("aux_line")):
        out["aux_line"] = text(row["aux_line"]).lower() in ("true", "1", "yes")
    return out


def _images(row: dict, media: MediaFolder, bases: list[Path], errors: list) -> list[str]:
    """The row's own media (not a reference to another row's: `_share`)."""
    value = row.get("image")
    if not is_blank(value):
        field = "image"
        if len(value) <= IMAGE_REFERENCE_MAX:
            return []  # another row's image: filled in by _read_file
        values = _list_or_one(value, field, errors)
        out = []
        for i, item in enumerate(values):
            try:
                out.append(media.save_base64(item))
            except Unreadable as exc:
                errors.append((field if len(values) == 1 else f"{field}[{i + 1}]", f"the base64 image is {exc}"))
        return out
    value = row.get("image_path")
    if is_blank(value):
        errors.append(("image", "missing (required): neither image nor image_path has a value"))
        return []
    out = []
    for item in _list_or_one(value, "image_path", errors):
        found = find_media(item, bases)
        if found is None:
            errors.append(("image_path", f"image file {item!r} {NOT_FOUND} {' or '.join(str(b) for b in bases)}"))
        else:
            out.append(media.adopt(found))
    return out


def _list_or_one(value: str, field: str, errors: list) -> list[str]:
    if value.strip().startswith("["):
        try:
            items = load_structure(value)[0]
        except Unreadable as exc:
            errors.append((field, f"starts like a list but is not one ({exc})"))
            return []
        if isinstance(items, list) and all(isinstance(i, str) for i in items):
            return items
        errors.append((field, "expected a list of strings"))
        return []
    return [value.strip()]
