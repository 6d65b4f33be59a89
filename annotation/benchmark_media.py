"""A sample's media: the `image` / `images` fields of a benchmark line (docs/formats.md, "Several
images or a video").

A sample holds an ordered list of media; the references `img0`, `img1`, ... name them in that
order. Each medium is a still image or a video, told apart by the file's content (its first
bytes), never by its name alone. A video is kept as uploaded, with `VIDEO_FRAMES` frames sampled
evenly through it by OpenCV (JPEG); the first of them is its poster, the still that stands for
the video wherever one image is needed (the workbench's canvas, a tool call on its reference).

Plain Python: no Django import. Errors go to the `err(field, message)` callback of
benchmark_fields, so each names the line's field (`images[2]`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from annotation.benchmark_fields import ErrorCallback, KnownImages, kind_of, parse_image

VIDEO_FRAMES = 8  # frames sampled from a video, evenly spaced; the first is the poster
FRAME_JPEG_QUALITY = 90
MAX_MEDIA = 32  # media per sample
_MAX_SEQUENTIAL_FRAMES = 200_000  # a container without a frame count is read through once, up to this


@dataclass(slots=True)
class MediumIn:
    """One medium of a line, read and checked. For a video, `frames` are JPEG bytes (the poster
    first) and `width`/`height` the decoded frame size."""

    kind: str  # "image" or "video"
    path: Path | None  # None: already in the benchmark's storage (a re-import's unchanged row)
    sha256: str
    ext: str  # the stored file's extension, from the content (".png", ".mp4", ...)
    width: int
    height: int
    frames: list[bytes] = field(default_factory=list)
    frame_times: list[float] = field(default_factory=list)  # seconds from the start
    duration: float | None = None


def media_refs(count: int) -> list[str]:
    """`img0` .. `img<count-1>`: the references of a sample's media, in order."""
    return [f"img{k}" for k in range(count)]


def sniff_video(head: bytes) -> str | None:
    """The video container the first bytes announce, as a file extension, or None."""
    if len(head) >= 12 and head[4:8] == b"ftyp":
        return ".mov" if head[8:12] == b"qt  " else ".mp4"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return ".avi"
    if head[:4] == b"\x1a\x45\xdf\xa3":  # Matroska / WebM (EBML)
        return ".webm" if b"webm" in head[:64] else ".mkv"
    return None


def media_paths(data: dict, err: ErrorCallback) -> list[tuple[str, str]] | None:
    """The (field name, path) of each medium of a line: `images` when given (then `image`, if
    also given, must be its first entry), else `image`. None after reporting a problem."""
    image, images = data.get("image"), data.get("images")
    if images is None:
        if image in (None, ""):
            err("image", "missing (required): give `image`, or `images` for several")
            return None
        return [("image", image)]
    if not isinstance(images, list) or not images:
        err("images", f"expected a non-empty list of media paths, got {kind_of(images)}")
        return None
    if len(images) > MAX_MEDIA:
        err("images", f"{len(images)} media; at most {MAX_MEDIA} per sample")
        return None
    if image not in (None, "") and image != images[0]:
        err("image", f"{image!r} differs from images[1] {images[0]!r}; `image` is the first of `images` (or leave it out)")
        return None
    return [(f"images[{k}]", value) for k, value in enumerate(images, start=1)]


def parse_media(data: dict, root: Path, err: ErrorCallback, max_pixels: int,
                known: KnownImages | None = None) -> list[MediumIn] | None:
    """Every medium of the line, checked (images decoded fully unless ``known``, videos sampled); None on any problem."""
    paths = media_paths(data, err)
    if paths is None:
        return None
    media: list[MediumIn] = []
    ok = True
    for field_name, value in paths:
        medium = parse_medium(field_name, value, root, err, max_pixels, known)
        ok = ok and medium is not None
        if medium is not None:
            media.append(medium)
    return media if ok else None


def parse_medium(field_name: str, value: Any, root: Path, err: ErrorCallback, max_pixels: int,
                 known: KnownImages | None = None) -> MediumIn | None:
    if not isinstance(value, str) or not value:
        err(field_name, f"expected a relative path, got {kind_of(value)}")
        return None
    path = (root / value).resolve()
    if path.is_file():
        with path.open("rb") as handle:
            ext = sniff_video(handle.read(64))
        if ext is not None:
            return parse_video(field_name, value, path, ext, err, max_pixels)
    # Not a video (or not found: parse_image says so), so it must be an image.
    found = parse_image(value, root, lambda _f, message: err(field_name, message), max_pixels, known)
    if found is None:
        return None
    path, sha256, ext, width, height = found
    return MediumIn(kind="image", path=path, sha256=sha256, ext=ext, width=width, height=height)


def parse_video(field_name: str, value: str, path: Path, ext: str, err: ErrorCallback, max_pixels: int) -> MediumIn | None:
    """Open the video with OpenCV and sample its frames; a video it cannot read is an error."""
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            err(field_name, f"{value!r} looks like a {ext[1:].upper()} video but OpenCV cannot open it")
            return None
        width = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
        if width * height > max_pixels:
            err(field_name, f"{value!r} is a {width}x{height} video, over the limit of {max_pixels} pixels a frame")
            return None
        fps = capture.get(cv2.CAP_PROP_FPS)
        sampled, total = _sample_frames(capture, int(capture.get(cv2.CAP_PROP_FRAME_COUNT)))
    finally:
        capture.release()
    if not sampled:
        err(field_name, f"{value!r}: no frame of the video could be decoded")
        return None
    frames, times = [], []
    for index, frame in sampled:
        if frame.shape[0] * frame.shape[1] > max_pixels:
            err(field_name, f"{value!r} has {frame.shape[1]}x{frame.shape[0]} frames, over the limit of {max_pixels} pixels")
            return None
        ok, buffer = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, FRAME_JPEG_QUALITY])
        if not ok:
            err(field_name, f"{value!r}: frame {index} could not be encoded")
            return None
        frames.append(buffer.tobytes())
        times.append(round(index / fps, 3) if fps and math.isfinite(fps) and fps > 0 else float(index))
    height, width = sampled[0][1].shape[:2]
    duration = round(total / fps, 3) if fps and math.isfinite(fps) and fps > 0 else None
    return MediumIn(kind="video", path=path, sha256=file_sha256(path), ext=ext, width=width, height=height,
                    frames=frames, frame_times=times, duration=duration)  # fmt: skip


def _sample_frames(capture: cv2.VideoCapture, count: int) -> tuple[list[tuple[int, np.ndarray]], int]:
    """(frame index, BGR frame) for VIDEO_FRAMES indices spread evenly over the video, and its
    number of frames. Seeks when the container states its frame count; otherwise (or when a seek
    fails) reads it through once."""
    if count > 0:
        wanted = sorted({min(count - 1, int((k + 0.5) * count / VIDEO_FRAMES)) for k in range(VIDEO_FRAMES)})
        frames = []
        for index in wanted:
            capture.set(cv2.CAP_PROP_POS_FRAMES, index)
            ok, frame = capture.read()
            if not ok or frame is None:
                break
            frames.append((index, frame))
        else:
            return frames, count
        capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
    # Unknown or wrong frame count: keep a bounded reservoir of evenly spaced frames in one pass.
    kept: list[tuple[int, np.ndarray]] = []
    step = 1
    index = 0
    while index < _MAX_SEQUENTIAL_FRAMES:
        ok, frame = capture.read()
        if not ok or frame is None:
            break
        if index % step == 0:
            kept.append((index, frame))
            if len(kept) > 2 * VIDEO_FRAMES:  # thin out: keep every other one, double the step
                kept = kept[::2]
                step *= 2
        index += 1
    if len(kept) > VIDEO_FRAMES:
        picks = sorted({round(k * (len(kept) - 1) / (VIDEO_FRAMES - 1)) for k in range(VIDEO_FRAMES)})
        kept = [kept[p] for p in picks]
    return kept, index


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
