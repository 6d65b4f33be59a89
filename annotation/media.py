"""A sample's media as the pages and exports read them (docs/formats.md, "Several images or a video").

`media_of(sample)` is the ordered list every reader uses: the imported SampleMedia rows, or, for
a sample that has none (built by hand or by a test factory), its one `image`. `chain_inputs`
gives the tool runner the stills of them all: img0 and the others as extra images, a video
standing for its poster.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.imagetools import load_image
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
