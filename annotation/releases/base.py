"""What every release reader returns: our benchmark lines, a manifest and the media folder."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


# The words of a "media file not found" message (a reader's, or benchmark_fields.parse_image's): such
# errors are counted into one line of the import's report, with where the release keeps its media.
NOT_FOUND = "not found under"


class ReleaseError(Exception):
    """The files as a whole cannot be read (wrong kind, missing part): one message for the user."""


@dataclass(slots=True)
class ReleaseLine:
    """One sample as one of our JSON Lines would hold it (docs/formats.md), or what was wrong with it.

    `errors` are (field, message) pairs naming the release's own field ("bbox", "model_tools_gt")
    for what the reader could not convert; the validator then checks `data` like any JSONL line.
    """

    number: int  # the row or task's position in its file, 1-based
    where: str  # "row 12 of VTC-Bench.tsv", "task '17' of data.json"
    data: dict | None
    errors: list[tuple[str, str]] = field(default_factory=list)
    # A digest of everything in the source that makes this sample (stored on it, Sample.source_digest), or ""
    # when something outside the line feeds it too (a file an `image_path` names, another row's image).
    digest: str = ""
    # The sha256 of each medium when the reader did not decode them: the benchmark already holds the sample of
    # this `digest` with these media (KnownRows). `data`'s media then name nothing in the work folder.
    known_media: list[str] | None = None


# digest -> [(sha256, byte size of the stored file, or -1 when it is missing)] of the media of the sample that
# digest made: what a reader needs to skip decoding a row that is unchanged since it was imported.
KnownRows = Mapping[str, list[tuple[str, int]]]


@dataclass(slots=True)
class Release:
    format: str
    name: str  # the file(s) read, for messages
    lines: list[ReleaseLine]
    root: Path  # media paths in `lines` are relative to this folder
    manifest: dict = field(default_factory=dict)  # benchmark.json's shape (name, tools, domains...)
    manifest_source: str = "the release"  # how messages about `manifest` name its origin ("toolmeta.json")
    warnings: list[str] = field(default_factory=list)
    media_hint: str = ""  # where the release keeps its media, for the one "N of M not found" message
