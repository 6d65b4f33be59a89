"""Small media files for tests: videos written by OpenCV, damaged and oversized images."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

FOURCC = {".mp4": "mp4v", ".mov": "mp4v", ".avi": "MJPG"}


def frame_color(index: int) -> tuple[int, int, int]:
    """The BGR colour of frame `index` of `write_video`: blue rises, red falls, so frames differ."""
    return (min(255, index * 8), 60, max(0, 240 - index * 8))


def write_video(path: Path, *, frames: int = 30, size: tuple[int, int] = (64, 48), fps: float = 10.0) -> Path:
    """A small video whose frame `i` is filled with frame_color(i)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*FOURCC.get(path.suffix, "mp4v")), fps, size)
    assert writer.isOpened(), f"OpenCV cannot write {path.suffix}"
    for index in range(frames):
        writer.write(np.full((size[1], size[0], 3), frame_color(index), np.uint8))
    writer.release()
    return path


def write_image(path: Path, size: tuple[int, int] = (80, 120), color: tuple[int, int, int] = (200, 90, 30)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, "PNG")  # PNG whatever the name says
    return path


def truncated(fmt: str, size: tuple[int, int] = (300, 200)) -> bytes:
    """An image of noise in `fmt` (JPEG, PNG), cut in half: its header reads, its pixels do not."""
    pixels = np.random.default_rng(7).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, fmt)
    data = buffer.getvalue()
    return data[: len(data) // 2]


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height (what a decompression bomb looks like)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
