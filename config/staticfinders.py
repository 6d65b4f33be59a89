"""Single files of installed packages served as static files (so WhiteNoise compresses them and the
manifest storage gives them a hashed, cache-forever name), without copying a package's whole folder.

plotly.js (4.8 MB) sits in the plotly package beside a 5 MB widget bundle and data sets nobody serves;
this finder publishes only ``vendor/plotly.min.js``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PREFIX = "vendor"
PACKAGE_FILES: dict[str, Path] = {
    "plotly.min.js": Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js",
}


class PackageFileFinder(BaseFinder):
    def check(self, **kwargs: object) -> list:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs: object) -> str | list[str]:
        name = path.removeprefix(f"{PREFIX}/") if path.startswith(f"{PREFIX}/") else None
        source = PACKAGE_FILES.get(name) if name else None
        if source is None or not source.is_file():
            return [] if find_all else None  # type: ignore[return-value]
        return [str(source)] if find_all else str(source)

    def list(self, ignore_patterns: list[str] | None) -> Iterator[tuple[str, FileSystemStorage]]:
        for name, source in PACKAGE_FILES.items():
            storage = FileSystemStorage(location=str(source.parent))
            storage.prefix = PREFIX  # collectstatic writes it as vendor/<name>
            yield name, storage
