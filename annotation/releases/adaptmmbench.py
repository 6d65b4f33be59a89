"""AdaptMMBench as released on Hugging Face: parquet files, one per domain (releases.md).

Columns: `uid`, `image` (the Hugging Face Image struct `{bytes, path}`), and strings `question`,
`options`, `answer`, `domain`, `category`, `type_label`, `bbox`, `transform`, `textproblem`,
`textoptions`, `key_step`. The string encodings are not published, so `annotation.releases.encoded`
reads the variants; a transform label it cannot map is kept in `meta` and named in a warning.
Columns with our own names (`regions`, `key_steps`, `toolchain`, `split`, ...) are read too.
"""

from __future__ import annotations

import re
from pathlib import Path

from annotation.releases import encoded
from annotation.releases.base import NOT_FOUND, Release, ReleaseError, ReleaseLine
from annotation.releases.common import choice_answer, convert, json_safe, text
from annotation.releases.encoded import Unreadable, is_blank
from annotation.releases.media import MediaFolder, find_media
from annotation.releases.sniff import release_files
from annotation.releases.tables import parquet_rows

# Read by this module; every other column goes to `meta` as it is.
CONVERTED = {"uid", "image", "question", "options", "answer", "domain", "category", "bbox", "regions", "transform",
             "key_step", "key_steps", "toolchain", "split", "source"}  # fmt: skip
REQUIRED_COLUMNS = {"uid", "image", "question", "answer"}
DOMAIN_FROM_NAME = re.compile(r"AdaptMMBench_([A-Za-z0-9_-]+)\.parquet$", re.IGNORECASE)


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None) -> Release:
    files = [f for f in release_files(paths) if f.suffix.lower() == ".parquet"]
    if not files:
        raise ReleaseError(f"{', '.join(p.name for p in paths)}: no .parquet file to read as AdaptMMBench")
    media = MediaFolder(workdir)
    lines: list[ReleaseLine] = []
    unmapped: list[str] = []
    for path in files:
        columns, rows = parquet_rows(path)
        missing = REQUIRED_COLUMNS - set(columns)
        if missing:
            raise ReleaseError(
                f"{path.name}: a parquet file without AdaptMMBench's columns (missing {', '.join(sorted(missing))}; "
                f"it has {', '.join(columns[:12])})"
            )
        file_domain = _domain_from_name(path)
        bases = [b for b in (images_dir, path.parent) if b is not None]
        for number, row in rows:
            line = _line(row, number, path.name, file_domain, media, bases)
            if line.data is not None and "transform_label" in line.data.get("meta", {}) and line.data.get("transform") is None:
                unmapped.append(str(line.data.get("uid")))
            lines.append(line)
    warnings = []
    if unmapped:
        shown = ", ".join(unmapped[:20]) + (f" and {len(unmapped) - 20} more" if len(unmapped) > 20 else "")
        warnings.append(
            f"{len(unmapped)} sample(s) have a transform label that could not be mapped to operations "
            f"(kept in meta.transform_label, imported without a transform): {shown}"
        )
    name = files[0].name if len(files) == 1 else f"{len(files)} parquet files"
    return Release(format="adaptmmbench", name=name, lines=lines, root=workdir,
                   manifest={"name": "AdaptMMBench"}, warnings=warnings)  # fmt: skip


def _domain_from_name(path: Path) -> str | None:
    match = DOMAIN_FROM_NAME.search(path.name)
    return match.group(1) if match else None


def _line(row: dict, number: int, file_name: str, file_domain: str | None, media: MediaFolder, bases: list[Path]) -> ReleaseLine:
    where = f"row {number} of {file_name}"
    errors: list[tuple[str, str]] = []
    options = convert(errors, "options", encoded.parse_options, row.get("options"))
    answer = choice_answer(text(row.get("answer")), options)
    regions_raw = row.get("bbox") if "bbox" in row else row.get("regions")
    regions = convert(errors, "bbox" if "bbox" in row else "regions", encoded.parse_boxes, regions_raw)
    steps_raw = row.get("key_step") if "key_step" in row else row.get("key_steps")
    key_steps = convert(errors, "key_step" if "key_step" in row else "key_steps", encoded.parse_key_steps, steps_raw)
    meta = {k: json_safe(v) for k, v in row.items() if k not in CONVERTED}
    transform_raw = row.get("transform")
    transform = convert(errors, "transform", encoded.parse_transform, transform_raw)
    if isinstance(transform_raw, str) and transform_raw.strip() and not transform_raw.strip().startswith(("[", "{")):
        # A label: the raw text is kept, whatever it mapped to. An unmapped one (transform None)
        # imports without E and is named in the release's warning.
        meta["transform_label"] = transform_raw
    data = {
        "uid": text(row.get("uid")),
        "image": convert(errors, "image", lambda v: _image(v, media, bases), row.get("image"), quote=False),
        "question": text(row.get("question")),
        "options": options,
        "answer": answer,
        "domain": text(row.get("domain")) or file_domain,
        "category": text(row.get("category")),
        "regions": regions,
        "transform": transform,
        "key_steps": key_steps,
        "split": text(row.get("split")) or "test",
        "source": text(row.get("source")) or "AdaptMMBench",
        "meta": meta,
    }
    if "toolchain" in row and not is_blank(row.get("toolchain")):
        data["toolchain"] = convert(errors, "toolchain",
                                    lambda v: encoded.load_structure(v)[0] if isinstance(v, str) else v, row["toolchain"])
    return ReleaseLine(number=number, where=where, data=data, errors=errors)


def _image(value: object, media: MediaFolder, bases: list[Path]) -> str | None:
    """The Hugging Face Image struct ({bytes, path}), raw bytes, or a path."""
    if is_blank(value):
        return None
    if isinstance(value, dict):
        if value.get("bytes"):
            try:
                return media.save(value["bytes"])
            except Unreadable as exc:
                raise Unreadable(f"the image bytes of {value.get('path') or 'the struct'}: {exc}") from None
        value = value.get("path")
        if is_blank(value):
            raise Unreadable("an image struct with neither bytes nor a path")
    if isinstance(value, (bytes, bytearray)):
        return media.save(bytes(value))
    if isinstance(value, str):
        found = find_media(value, bases)
        if found is None:
            raise Unreadable(f"image file {value!r} {NOT_FOUND} {' or '.join(str(b) for b in bases)}")
        return media.adopt(found)
    raise Unreadable(f"expected the image struct {{bytes, path}}, got {type(value).__name__}")
