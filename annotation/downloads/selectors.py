"""Reads of the downloads: the key of a benchmark's current state, and the rows a page shows.

Nothing here writes: a page that finds no build for the current key says so, it never asks for one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max

from annotation.export_rows import benchmark_manifest
from annotation.models import (
    Annotation,
    AnnotationStatus,
    Benchmark,
    DataDownload,
    DownloadKind,
    DownloadStatus,
    Sample,
    Split,
)

# Bump when a writer changes what it writes: every benchmark's key moves, so the next
# `build_downloads` (or import, or approval) builds them again in the new shape.
DOWNLOADS_FORMAT = 1
KINDS = tuple(DownloadKind.values)
# The splits whose downloads carry gold; every other split's carry inputs only (docs/security.md).
GOLD_SPLITS = frozenset({Split.DEV.value})


def download_key(benchmark: Benchmark) -> str:
    """The benchmark's version and a digest of what its downloads hold: the manifest (taxonomy,
    tools, licence...), the number of samples and the newest sample change, the number of approved
    annotations and the newest of them. An import, a re-import that changes anything, an approval
    (it saves the annotation, and the sample when the answer moves) or a deletion moves it; a
    re-import of the same file does not. Four cheap queries (two aggregates, the taxonomy)."""
    samples = Sample.objects.filter(benchmark=benchmark).aggregate(n=Count("pk"), last=Max("updated_at"))
    approved = Annotation.objects.filter(sample__benchmark=benchmark, status=AnnotationStatus.APPROVED).aggregate(
        n=Count("pk"), last=Max("updated_at"))
    stamp = [DOWNLOADS_FORMAT, benchmark_manifest(benchmark), samples["n"], samples["last"], approved["n"],
             approved["last"]]
    digest = hashlib.sha256(json.dumps(stamp, sort_keys=True, default=str).encode()).hexdigest()[:24]
    return f"{benchmark.version[:40]}+{digest}"


def benchmark_splits(benchmark: Benchmark) -> list[str]:
    """The splits the benchmark has samples in, dev first."""
    present = set(Sample.objects.filter(benchmark=benchmark).values_list("split", flat=True).distinct())
    return [s for s in Split.values if s in present]


@dataclass(frozen=True, slots=True)
class DownloadState:
    """One download as a page shows it: the build of the current key (None: nothing asked for it yet)."""

    split: str
    kind: str
    row: DataDownload | None

    @property
    def status(self) -> str:
        return self.row.status if self.row is not None else "missing"

    @property
    def ready(self) -> bool:
        return self.row is not None and self.row.status == DownloadStatus.READY

    @property
    def gold(self) -> bool:
        return self.split in GOLD_SPLITS

    # A ready build's figures (None before).
    @property
    def size_bytes(self) -> int | None:
        return self.row.size_bytes if self.ready else None

    @property
    def sample_count(self) -> int | None:
        return self.row.sample_count if self.ready else None

    @property
    def built_at(self) -> datetime | None:
        return self.row.built_at if self.ready else None


def downloads_of(benchmark: Benchmark) -> list[DownloadState]:
    """Every (split, kind) of the benchmark with its build for the current key, in page order."""
    key = download_key(benchmark)
    splits = benchmark_splits(benchmark)
    rows = {(r.split, r.kind): r for r in DataDownload.objects.filter(benchmark=benchmark, key=key)}
    return [DownloadState(split, kind, rows.get((split, kind))) for split in splits for kind in KINDS]


def download_of(benchmark: Benchmark, split: str, kind: str) -> DownloadState | None:
    """The download of one split and kind (None: the benchmark has no such split or kind)."""
    if kind not in KINDS or split not in Split.values:
        return None
    if not Sample.objects.filter(benchmark=benchmark, split=split).exists():
        return None
    row = DataDownload.objects.filter(benchmark=benchmark, split=split, kind=kind, key=download_key(benchmark)).first()
    return DownloadState(split, kind, row)


def download_filename(benchmark: Benchmark, split: str, kind: str) -> str:
    """``<slug>-<version>-<split>.<kind>``; a worded version ("paper v1") with its spaces as hyphens."""
    version = "".join(c if c.isalnum() or c in "._" else "-" for c in benchmark.version.strip()) or "0"
    return f"{benchmark.slug}-{version}-{split}.{kind}"
