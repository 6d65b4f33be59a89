"""V* Bench as its authors release it (Hugging Face craigwu/vstar_bench; README of penghao-wu/vstar).

One folder per subtask (`direct_attributes`, `relative_position`), holding image files and, beside
each, a JSON annotation of the same name: `target_object` (names), `bbox` (the targets as
`[x, y, w, h]` in pixels), `question`, and `options`, **the correct one first**.

The authors score a likelihood over the options (the option of lowest loss, right when it is the first),
so the order never shows; a generated answer would find the correct option always at A. The options
are therefore shown in an order drawn from the uid (`option_order`, stable: the same uid gives the same
order, which the converter of the authors' `eval_result.json` reads back), and the answer letter follows.
The authors' order stays in `meta.vstar_options`. The boxes become the sample's regions (`[x1, y1, x2,
y2]`); the subtask is the category. uid: `<subtask>:<file name without extension>`.

The VLMEvalKit `VStarBench.tsv` is a VLMEvalKit dataset (vlmevalkit.py). Both are scored with
VLMEvalKit's matching (`vlmevalkit` profile), which is how VLMEvalKit scores VStarBench.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from pathlib import Path
from typing import Any

from annotation.releases.base import NOT_FOUND, Release, ReleaseError, ReleaseLine
from annotation.releases.media import MediaFolder
from annotation.releases.sniff import MEDIA_SUFFIXES, is_vstar_annotation, release_files
from annotation.taxonomy import ONE_LEVEL_DOMAIN

MEDIA_HINT = ("V* Bench keeps each image beside its annotation (direct_attributes/sa_123.jpg beside sa_123.json): "
              "import the folder holding the subtask folders")
IMAGE_SUFFIXES = tuple(sorted(s for s in MEDIA_SUFFIXES if s not in {".mp4", ".avi", ".mov", ".mkv", ".webm"}))


def option_order(uid: str, n: int) -> list[int]:
    """The authors' option indices in the order shown (position 0 is option A): a permutation drawn from
    the uid's sha256, so the reader and the converter agree without sharing state."""
    order = list(range(n))
    random.Random(int.from_bytes(hashlib.sha256(uid.encode()).digest()[:8], "big")).shuffle(order)
    return order


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None) -> Release:
    files = [f for f in release_files(paths) if f.suffix.lower() == ".json"]
    annotations = [f for f in files if _load(f) is not None]
    if not annotations:
        raise ReleaseError(f"{', '.join(p.name for p in paths)}: no V* annotation (a JSON with question, options, "
                           "target_object and bbox beside its image)")
    media = MediaFolder(workdir)
    lines = [_line(number, path, media, images_dir) for number, path in enumerate(annotations, start=1)]
    return Release(format="vstar", name=f"{len(annotations)} V* annotations", lines=lines, root=workdir,
                   manifest={"name": "V* Bench", "scoring": "vlmevalkit"}, media_hint=MEDIA_HINT)


def _load(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) and is_vstar_annotation(value) else None


def _image(path: Path, images_dir: Path | None) -> Path | None:
    for folder in [path.parent] + ([images_dir / path.parent.name, images_dir] if images_dir else []):
        for suffix in IMAGE_SUFFIXES + tuple(s.upper() for s in IMAGE_SUFFIXES):
            candidate = folder / (path.stem + suffix)
            if candidate.is_file():
                return candidate
    return None


def _line(number: int, path: Path, media: MediaFolder, images_dir: Path | None) -> ReleaseLine:
    where = f"{path.parent.name}/{path.name}"
    value = _load(path)
    assert value is not None
    errors: list[tuple[str, str]] = []
    subtask = path.parent.name
    uid = f"{subtask}:{path.stem}"
    image = _image(path, images_dir)
    if image is None:
        errors.append(("image", f"image file {path.stem}.* {NOT_FOUND} {path.parent}"))
    options = value.get("options")
    shown: dict[str, str] | None = None
    answer = None
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
        errors.append(("options", "expected a list of at least two option texts, the correct one first"))
    else:
        order = option_order(uid, len(options))
        shown = {string.ascii_uppercase[i]: options[k] for i, k in enumerate(order)}
        answer = string.ascii_uppercase[order.index(0)]
    regions: list[list[float]] = []
    boxes = value.get("bbox") or []
    if not isinstance(boxes, list) or not all(isinstance(b, list) and len(b) == 4 for b in boxes):
        errors.append(("bbox", "expected a list of [x, y, w, h] boxes"))
    else:
        for i, (x, y, w, h) in enumerate(boxes):
            if not all(isinstance(v, (int, float)) for v in (x, y, w, h)) or w <= 0 or h <= 0:
                errors.append((f"bbox[{i + 1}]", f"expected [x, y, w, h] with w, h > 0, got {[x, y, w, h]}"))
                continue
            regions.append([x, y, x + w, y + h])
    meta: dict[str, Any] = {"vstar_options": options, "target_object": value.get("target_object"),
                            "bbox": boxes, "file": path.stem}
    data = {
        "uid": uid,
        "image": media.adopt(image) if image is not None else None,
        "question": value.get("question"),
        "options": shown,
        "answer": answer,
        "domain": ONE_LEVEL_DOMAIN,
        "category": subtask,
        "split": "test",
        "source": "V* Bench",
        "meta": meta,
    }
    if regions:
        data["regions"] = regions
    return ReleaseLine(number=number, where=where, data=data, errors=errors)
