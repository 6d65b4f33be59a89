"""A benchmark written as our bundle (docs/formats.md): ``benchmark.jsonl``, the media under
``images/`` and the manifest ``benchmark.json``, as a folder or a zip, streamed.

Samples come a chunk at a time (``export_rows.samples_for_export``), each medium is copied from
storage into its zip entry in blocks (stored: images and videos are compressed already), and the
JSON Lines go to a temporary file line by line before they become their own entry (a zip takes one
entry at a time). Memory stays flat whatever the benchmark's size (docs/performance.md).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import IO

from annotation.benchmark_format import JSONL_NAME, MANIFEST_NAME
from annotation.export_rows import (
    ExportSummary,
    approved_of,
    benchmark_manifest,
    bundle_record,
    media_file_names,
    samples_for_export,
)
from annotation.models import Annotation, Benchmark, Sample, sample_media_storage
from config.storages import written_whole

COPY_BLOCK = 1 << 20


class _ZipSink:
    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf

    def _info(self, name: str, size: int, compress: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
        info.compress_type = compress
        info.file_size = size  # zipfile decides on ZIP64 from it before the bytes are written
        return info

    def add_medium(self, name: str, storage_name: str) -> None:
        storage = sample_media_storage()
        info = self._info(name, storage.size(storage_name), zipfile.ZIP_STORED)
        with storage.open(storage_name, "rb") as src, self.zf.open(info, "w") as dst:
            shutil.copyfileobj(src, dst, COPY_BLOCK)

    def add_file(self, name: str, path: Path) -> None:
        info = self._info(name, path.stat().st_size, zipfile.ZIP_DEFLATED)
        with path.open("rb") as src, self.zf.open(info, "w") as dst:
            shutil.copyfileobj(src, dst, COPY_BLOCK)

    def add_bytes(self, name: str, data: bytes) -> None:
        self.zf.writestr(self._info(name, len(data), zipfile.ZIP_DEFLATED), data)


class _FolderSink:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _target(self, name: str) -> Path:
        target = self.root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def add_medium(self, name: str, storage_name: str) -> None:
        with sample_media_storage().open(storage_name, "rb") as src, self._target(name).open("wb") as dst:
            shutil.copyfileobj(src, dst, COPY_BLOCK)

    def add_file(self, name: str, path: Path) -> None:
        if path != self._target(name):
            shutil.copyfile(path, self._target(name))

    def add_bytes(self, name: str, data: bytes) -> None:
        self._target(name).write_bytes(data)


def bundle_write(*, benchmark: Benchmark, out: Path, splits: Collection[str] | None = None,
                 approved_only: bool = True, inputs_only: bool = False,
                 manifest_extra: Callable[[int, int], dict] | None = None) -> ExportSummary:
    """Write the bundle to ``out``: a zip when it ends in .zip, else a folder.

    ``approved_only`` leaves out samples without an approved annotation (the staff export); else they
    are written with the builder's answer and empty evidence. ``inputs_only`` writes no gold
    (export_rows.inputs_record). ``manifest_extra(exported, skipped)`` adds keys to the manifest.
    """
    out = Path(out)
    if out.suffix == ".zip":
        out.parent.mkdir(parents=True, exist_ok=True)
        # under a partial name until complete: a full disk leaves no half zip (config.storages.written_whole)
        with written_whole(out) as partial, zipfile.ZipFile(partial, "w") as zf, \
                tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            return _write(benchmark, out, _ZipSink(zf), Path(tmp) / JSONL_NAME, splits, approved_only,
                          inputs_only, manifest_extra)
    out.mkdir(parents=True, exist_ok=True)
    return _write(benchmark, out, _FolderSink(out), out / JSONL_NAME, splits, approved_only, inputs_only,
                  manifest_extra)


def _write(benchmark: Benchmark, out: Path, sink: _ZipSink | _FolderSink, jsonl: Path,
           splits: Collection[str] | None, approved_only: bool, inputs_only: bool,
           manifest_extra: Callable[[int, int], dict] | None) -> ExportSummary:
    exported = skipped = 0
    with jsonl.open("w", encoding="utf-8") as lines:
        for sample in samples_for_export(benchmark, splits=splits, gold=not inputs_only or approved_only):
            annotation = approved_of(sample)
            if approved_only and annotation is None:
                skipped += 1
                continue
            exported += _write_sample(sample, annotation, sink, lines, inputs_only)
    sink.add_file(JSONL_NAME, jsonl)
    manifest = benchmark_manifest(benchmark)
    if manifest_extra is not None:
        manifest.update(manifest_extra(exported, skipped))
    sink.add_bytes(MANIFEST_NAME, (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())
    return ExportSummary(path=out, exported=exported, skipped=skipped)


def _write_sample(sample: Sample, annotation: Annotation | None, sink: _ZipSink | _FolderSink, lines: IO[str],
                  inputs_only: bool) -> int:
    named = media_file_names(sample)
    for medium, name in named:
        sink.add_medium(name, medium.file.name)
    record = bundle_record(sample, annotation, [name for _, name in named], inputs_only=inputs_only)
    lines.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 1
