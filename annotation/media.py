"""A sample's media as the pages and exports read them (docs/formats.md, "Several images or a video").

`media_of(sample)` is the ordered list every reader uses: the imported SampleMedia rows, or, for
a sample that has none (built by hand or by a test factory), its one `image`. `chain_inputs`
gives the tool runner the stills of them all: img0 and the others as extra images, a video
standing for its poster.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.imagetools import encode_jpeg, load_image, make_preview
from annotation.models import MediaKind, Sample, SampleMedia, sample_media_storage


def media_of(sample: Sample) -> list[SampleMedia]:
    """The sample's media in order (img0 first); uses a `media` prefetch when there is one."""
    rows = list(sample.media.all())
    if rows:
        return rows
    return [SampleMedia(sample=sample, position=0, kind=MediaKind.IMAGE, file=sample.image.name,
                        sha256=sample.image_sha256, width=sample.width, height=sample.height)]  # fmt: skip


def still_name(medium: SampleMedia) -> str:
    """Storage name of the still that stands for the medium: the image, or a video's poster."""
    return medium.poster or medium.file.name


def still_path(medium: SampleMedia) -> Path:
    return Path(sample_media_storage().path(still_name(medium)))


def load_still(medium: SampleMedia) -> np.ndarray:
    """The medium's still, decoded (BGR); raises the registry's ImageDecodeError / ImageTooLarge."""
    return load_image(still_path(medium), max_pixels=settings.IMAGE_MAX_PIXELS)


def chain_inputs(sample: Sample) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(img0, {img1: ..., img2: ...}) for run_chain: every medium's still, decoded."""
    media = media_of(sample)
    first = load_image(Path(sample.image.path), max_pixels=settings.IMAGE_MAX_PIXELS)
    return first, {m.ref: load_still(m) for m in media[1:]}


def frame_name(medium: SampleMedia, index: int) -> str | None:
    """Storage name of a video's sampled frame `index` (0 is the poster), or None."""
    if medium.kind != MediaKind.VIDEO or not 0 <= index < len(medium.frames):
        return None
    return medium.frames[index]["name"]


def read_file(name: str) -> bytes:
    with sample_media_storage().open(name, "rb") as handle:
        return handle.read()


CONTENT_TYPES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif",
    ".bmp": "image/bmp", ".tif": "image/tiff", ".mp4": "video/mp4", ".mov": "video/quicktime",
    ".avi": "video/x-msvideo", ".webm": "video/webm", ".mkv": "video/x-matroska",
}  # fmt: skip


def content_type(name: str) -> str:
    return CONTENT_TYPES.get(Path(name).suffix.lower(), "application/octet-stream")


# ---------------------------------------------------------------------------------------------
# Serving a medium's parts to pages (each app's view checks who may see the sample first)

STILL_MAX_SIDE = 1600
PARTS = ("still", "file")  # plus "frame-<i>"


def media_part(sample: Sample, position: int, part: str) -> tuple[bytes, str]:
    """(body, content type) of one part of the sample's medium `img<position>`:

    - `still`: the medium's still, at most STILL_MAX_SIDE on its longer side (JPEG);
    - `frame-<i>`: a video's sampled frame i (0 is the poster), as stored (JPEG);
    - `file`: the medium's file as uploaded (a video for the player).

    Raises LookupError for a medium or part that does not exist, and the registry's ToolError or
    OSError for a stored file that cannot be read (the views answer those with a message).
    """
    media = media_of(sample)
    if not 0 <= position < len(media):
        raise LookupError(f"the sample has no img{position}")
    medium = media[position]
    if part == "file":
        return read_file(medium.file.name), content_type(medium.file.name)
    if part.startswith("frame-") and part[6:].isdigit():
        name = frame_name(medium, int(part[6:]))
        if name is None:
            raise LookupError(f"img{position} has no frame {part[6:]}")
        return read_file(name), "image/jpeg"
    if part == "still":
        if medium.kind == MediaKind.VIDEO:
            return read_file(still_name(medium)), "image/jpeg"
        return encode_jpeg(make_preview(load_still(medium), STILL_MAX_SIDE).image, quality=90), "image/jpeg"
    raise LookupError(f"no part {part!r}")


def media_for_page(sample: Sample, url_for: Callable[[int, str], str]) -> list[dict]:
    """What a page's script needs to show the media: `url_for(position, part)` builds each URL."""
    out = []
    for m in media_of(sample):
        out.append({
            "ref": m.ref, "kind": m.kind, "width": m.width, "height": m.height,
            "still": url_for(m.position, "still"),
            "file": url_for(m.position, "file") if m.kind == MediaKind.VIDEO else None,
            "frames": [{"url": url_for(m.position, f"frame-{i}"), "time": f["time"]}
                       for i, f in enumerate(m.frames)],
            "duration": m.duration,
        })  # fmt: skip
    return out
