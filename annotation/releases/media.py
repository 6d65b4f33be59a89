"""Media in releases: told by content (a `.jpg` may be a PNG or WebP), decoded from base64 or
parquet bytes into a work folder, or left where they are."""

from __future__ import annotations

import binascii
import hashlib
import shutil
from pathlib import Path

from annotation.releases.encoded import Unreadable

VIDEO_SUFFIXES = {".mp4", ".avi", ".mov", ".mkv", ".webm"}


def media_ext(data: bytes) -> str | None:
    """The extension the bytes really have, from their first bytes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ".png"
    if data.startswith(b"\xff\xd8\xff"):
        return ".jpg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    if data.startswith(b"GIF8"):
        return ".gif"
    if data.startswith(b"BM"):
        return ".bmp"
    if data.startswith((b"II*\x00", b"MM\x00*")):
        return ".tif"
    if data[4:8] == b"ftyp":
        return ".mov" if data[8:10] == b"qt" else ".mp4"
    if data[:4] == b"RIFF" and data[8:11] == b"AVI":
        return ".avi"
    if data.startswith(b"\x1aE\xdf\xa3"):
        return ".webm"
    return None


class MediaFolder:
    """A work folder for media that arrive as bytes; file names are content hashes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def save(self, data: bytes) -> str:
        """Write the bytes (named by hash and their real kind); the path relative to `root`."""
        ext = media_ext(data)
        if ext is None:
            raise Unreadable("not an image or video this platform reads (PNG, JPEG, WebP, GIF, BMP, TIFF, MP4, AVI, MOV)")
        name = hashlib.sha256(data).hexdigest() + ext
        target = self.root / name
        if not target.exists():
            target.write_bytes(data)
        return name

    def save_base64(self, text: str) -> str:
        return self.save(decode_base64(text))

    def adopt(self, path: Path) -> str:
        """Copy a file into the folder (for a release whose media mix bytes and paths)."""
        name = f"files/{hashlib.sha256(str(path).encode()).hexdigest()[:16]}/{path.name}"
        target = self.root / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        return name


def decode_base64(text: str) -> bytes:
    """The bytes of a base64 cell (whitespace inside it ignored), or Unreadable. binascii's strict mode accepts
    what ``b64decode(validate=True)`` does, without its regular expression over the whole cell (which took
    twice as long as the decoding)."""
    try:
        try:
            return binascii.a2b_base64(text, strict_mode=True)
        except binascii.Error:  # maybe only wrapped over lines: decode it without the whitespace
            return binascii.a2b_base64("".join(text.split()), strict_mode=True)
    except (binascii.Error, ValueError):
        raise Unreadable("not base64") from None


def find_media(relative: str, bases: list[Path]) -> Path | None:
    """The first base under which `relative` exists (a release may give paths from its repository's
    root or from the data folder)."""
    for base in bases:
        candidate = base / relative
        if candidate.is_file():
            return candidate
    return None
