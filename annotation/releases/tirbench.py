"""TIR-Bench as its authors release it (Hugging Face Agents-X/TIR-Bench; agents-x-project/TIR-Bench).

One JSON document (`TIR-Bench.json`): a list of tasks, or an object keyed "0", "1", ... (the shape of
the response files their scripts read and write). Each task has `task` (else `category`: their
scripts read either), `prompt` (the question, options written inside it), `answer` (a letter, letters, a
number, a list of numbers as text), `image_1`, maybe `image_2` (spot-the-difference), `id` (numbered per
task, so not unique) and `meta_data` or `metadata` (jigsaw's `difficulty`). The images are paths such as
`data/maze/17.png`, under the JSON's folder, `--images DIR`, or inside a zip archive beside the JSON
(the release's image archive), from which each image is extracted as its task is read.

uid: the task's position in the list (or its key), "0", "1", ...: the keys of their response file.
The task is the category (thirteen, one level). Their scoring replaces two OCR answers in code (an
`image_1` containing `60.jpg` is `mobi`, `62.jpg` is `aires`): the reader does the same, keeping the
released answer in `meta.released_answer`, with a warning. Scoring profile `tirbench`.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from annotation.releases.base import NOT_FOUND, Release, ReleaseError, ReleaseLine
from annotation.releases.common import json_safe, text
from annotation.releases.media import MediaFolder, find_media
from annotation.releases.sniff import is_tirbench_data, release_files
from annotation.taxonomy import ONE_LEVEL_DOMAIN

MEDIA_HINT = ("TIR-Bench's images are in its Hugging Face dataset (Agents-X/TIR-Bench) as an archive of data/<task>/...: "
              "put the archive (.zip) beside the JSON, or unpack it and pass its folder with --images DIR")
# calculate_score.py's two corrections of OCR answers, by a substring of image_1 (checked in this order).
OCR_FIXES = (("60.jpg", "mobi"), ("62.jpg", "aires"))


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None) -> Release:
    files = [f for f in release_files(paths) if f.suffix.lower() == ".json"]
    data_file, tasks = None, None
    for f in files:
        tasks = _load(f)
        if tasks is not None:
            data_file = f
            break
    if data_file is None or tasks is None:
        raise ReleaseError(f"{', '.join(p.name for p in paths)}: no TIR-Bench JSON (tasks with task, prompt, answer, "
                           "image_1)")
    media = MediaFolder(workdir)
    bases = [b for b in (images_dir, data_file.parent) if b is not None]
    archives = _Archives(sorted(p for p in data_file.parent.glob("*.zip") if p.is_file()), workdir / "archive")
    fixed: list[str] = []
    try:
        lines = [_line(data_file.name, number, key, task, media, bases, archives, fixed)
                 for number, (key, task) in enumerate(tasks, start=1)]
    finally:
        archives.close()
    warnings = []
    if fixed:
        warnings.append(f"{len(fixed)} OCR answer(s) replaced as TIR-Bench's calculate_score.py replaces them "
                        f"(uids {', '.join(fixed[:10])}); the released answer is in meta.released_answer")
    return Release(format="tirbench", name=data_file.name, lines=lines, root=workdir,
                   manifest={"name": "TIR-Bench", "scoring": "tirbench"}, warnings=warnings, media_hint=MEDIA_HINT)


def _load(path: Path) -> list[tuple[str, Any]] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not is_tirbench_data(value):
        return None
    if isinstance(value, list):
        return [(str(i), t) for i, t in enumerate(value)]
    return [(str(k), t) for k, t in value.items()]


class _Archives:
    """The zip archives beside the JSON, opened once; a member is extracted when a task names it."""

    def __init__(self, paths: list[Path], target: Path) -> None:
        self.target = target
        self.zips: list[zipfile.ZipFile] = []
        self.members: dict[str, tuple[zipfile.ZipFile, str]] = {}
        for p in paths:
            try:
                z = zipfile.ZipFile(p)
            except zipfile.BadZipFile:
                continue
            self.zips.append(z)
            for name in z.namelist():
                if not name.endswith("/"):
                    self.members.setdefault(name, (z, name))

    def find(self, relative: str) -> Path | None:
        """The member named `relative`, or ending in "/<relative>" (an archive with a top folder)."""
        got = self.members.get(relative) or next(
            (v for k, v in self.members.items() if k.endswith("/" + relative)), None)
        if got is None:
            return None
        z, name = got
        out = self.target / PurePosixPath(name)
        if ".." in PurePosixPath(name).parts:
            return None
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            with z.open(name) as src, out.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        return out

    def close(self) -> None:
        for z in self.zips:
            z.close()


def _line(file_name: str, number: int, key: str, task: Any, media: MediaFolder, bases: list[Path],
          archives: _Archives, fixed: list[str]) -> ReleaseLine:
    where = f"task {key} of {file_name}"
    if not isinstance(task, dict):
        return ReleaseLine(number=number, where=where, data=None,
                           errors=[("(task)", f"expected an object, got {type(task).__name__}")])
    errors: list[tuple[str, str]] = []
    kind = text(task.get("task")) or text(task.get("category"))
    if kind is None:
        errors.append(("task", "missing (required): neither task nor category has a value"))
    answer = task.get("answer")
    gold = None if answer is None else str(answer)  # their str(item['answer']): a list reads as "[4, 1, ...]"
    meta: dict[str, Any] = {k: json_safe(v) for k, v in task.items()
                            if k not in {"prompt", "answer", "image_1", "image_2"} and v is not None}
    image_1 = text(task.get("image_1"))
    if kind == "ocr" and image_1 is not None and gold is not None:
        for needle, replacement in OCR_FIXES:
            if needle in image_1:
                meta["released_answer"], gold = gold, replacement
                fixed.append(key)
    images = []
    for field in ("image_1", "image_2"):
        rel = text(task.get(field))
        if rel is None:
            if field == "image_1":
                errors.append(("image_1", "missing (required)"))
            continue
        found = find_media(rel, bases) or archives.find(rel)
        if found is None:
            errors.append((field, f"image file {rel!r} {NOT_FOUND} {' or '.join(str(b) for b in bases)} "
                                  "nor in a .zip beside the JSON"))
        else:
            images.append(media.adopt(found))
    data: dict[str, Any] = {
        "uid": key,
        "image": images[0] if images else None,
        "question": text(task.get("prompt")),
        "answer": gold,
        "domain": ONE_LEVEL_DOMAIN,
        "category": kind,
        "split": "test",
        "source": "TIR-Bench",
        "meta": meta,
    }
    if len(images) > 1:
        data["images"] = images
    return ReleaseLine(number=number, where=where, data=data, errors=errors)
