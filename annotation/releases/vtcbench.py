"""Reader for the vtcbench release (docs/formats.md)."""

from __future__ import annotations

from pathlib import Path

from annotation.releases.base import Release, ReleaseError


def read(paths: list[Path], *, workdir: Path, images_dir: Path | None = None) -> Release:
    raise ReleaseError("the vtcbench reader is not available yet")
