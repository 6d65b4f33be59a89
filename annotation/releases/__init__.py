"""Readers for benchmarks as their authors release them (docs/formats.md, "Releases").

Each reader turns a release into our benchmark lines (the fields of docs/formats.md), a
manifest and the folder its media paths are relative to; `annotation.benchmark_format` then
validates them exactly like a JSON Lines file. Plain Python: no Django import.
"""

from __future__ import annotations

import functools
from pathlib import Path

from annotation.releases import sniff
from annotation.releases.base import KnownRows, Release, ReleaseError, ReleaseLine

__all__ = ["FORMATS", "KnownRows", "Release", "ReleaseError", "ReleaseLine", "read_release", "sniff"]

FORMATS = ("jsonl", "adaptmmbench", "vlmevalkit", "vtcbench", "agentx", "vstar", "tirbench")


def read_release(paths: list[Path], fmt: str, *, workdir: Path, images_dir: Path | None = None,
                 known_rows: KnownRows | None = None) -> Release:
    """Read `paths` (files or folders) as release `fmt`; decoded media are written under `workdir`.
    `known_rows`: the rows the benchmark holds unchanged, whose media a reader that digests its rows (VLMEvalKit's)
    does not decode again."""
    from annotation.releases import adaptmmbench, agentx, tirbench, vlmevalkit, vstar, vtcbench

    readers = {
        "adaptmmbench": adaptmmbench.read,
        "vlmevalkit": functools.partial(vlmevalkit.read, known_rows=known_rows or {}),
        "vtcbench": vtcbench.read,
        "agentx": agentx.read,
        "vstar": vstar.read,
        "tirbench": tirbench.read,
    }
    if fmt not in readers:
        raise ReleaseError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    workdir.mkdir(parents=True, exist_ok=True)
    return readers[fmt](paths, workdir=workdir, images_dir=images_dir)
