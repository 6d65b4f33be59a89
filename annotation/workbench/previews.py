"""Images for the item page, rendered by the tool registry (the code the scorer uses).

Large images are shown as downscaled previews. The recovery transform is applied to the
downscaled copy (rotate, flip and the pointwise photometric operations commute with scaling, so
this is the full-size result shrunk, within interpolation), which keeps a preview of a 12-megapixel
scan fast. The downscaled copy is decoded once per sample and kept on disk and in memory.
Boxes never pass through preview pixels: the page's SVG uses full-size coordinates.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation import benchmark_format as bf
from annotation.imagetools import (
    ChainResult,
    apply_transform,
    encode_jpeg,
    encode_png,
    load_image,
    make_preview,
    oracle_image,
)
from annotation.models import Sample

PREVIEW_MAX_SIDE = 1600
THUMB_MAX_SIDE = 480
# The item page's previews are JPEG: encoding a 1600-px photo takes ~6 ms instead of ~160 ms
# as PNG (see docs/performance.md, "Transform preview"). What must keep exact pixels stays PNG:
# the on-disk source cache, the chain verifier's images, the LLM's oracle image, downloads.
PREVIEW_CONTENT_TYPE = "image/jpeg"
PREVIEW_JPEG_QUALITY = 90
_CACHE_SIZE = 16
_cache: OrderedDict[tuple[str, int], tuple[np.ndarray, float]] = OrderedDict()
_lock = threading.Lock()


@dataclass(frozen=True)
class Frame:
    """The full-size frame the boxes are in (the image after the transform)."""

    width: int
    height: int


def frame_of(sample: Sample, transform: list[dict]) -> Frame:
    return Frame(*bf.frame_size(sample.width, sample.height, transform))


def full_image(sample: Sample) -> np.ndarray:
    return load_image(Path(sample.image.path), max_pixels=settings.IMAGE_MAX_PIXELS)


def _cache_path(sample: Sample, max_side: int) -> Path:
    key = sample.image_sha256 or hashlib.sha256(sample.image.name.encode()).hexdigest()
    # Beside the images, in private storage: a preview of a test image is as secret as the image.
    return Path(settings.PRIVATE_MEDIA_ROOT) / "previews" / f"{key}-{max_side}.png"


def preview_source(sample: Sample, max_side: int = PREVIEW_MAX_SIDE) -> tuple[np.ndarray, float]:
    """The sample's original image shrunk to `max_side`, and the scale (preview px / full px)."""
    key = (sample.image_sha256 or sample.image.name, max_side)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    path = _cache_path(sample, max_side)
    if path.exists():
        image = load_image(path)
        scale = image.shape[1] / sample.width
    else:
        preview = make_preview(full_image(sample), max_side)
        image, scale = preview.image, preview.scale
        if scale < 1:  # only a real reduction is worth a file
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(encode_png(image, compression=1))
            tmp.replace(path)  # atomic, so a concurrent reader never sees half a file
    with _lock:
        _cache[key] = (image, scale)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return image, scale


def transform_preview_image(sample: Sample, transform: list[dict],
                            max_side: int = PREVIEW_MAX_SIDE) -> np.ndarray:
    """The image after `transform`, at most `max_side` on its longer side. Raises ChainError."""
    image, _ = preview_source(sample, max_side)
    return apply_transform(image, transform) if transform else image


def oracle_preview_image(sample: Sample, transform: list[dict], boxes: list[list[float]],
                         max_side: int = PREVIEW_MAX_SIDE) -> np.ndarray:
    """The oracle image I_E (transform, then cut to the regions). Raises ChainError."""
    image, scale = preview_source(sample, max_side)
    scaled = [[v * scale for v in box] for box in boxes]
    return oracle_image(image, transform, scaled)


def transform_preview(sample: Sample, transform: list[dict], max_side: int = PREVIEW_MAX_SIDE) -> bytes:
    """JPEG (PREVIEW_CONTENT_TYPE) of the image after `transform`, for the item page."""
    return encode_jpeg(transform_preview_image(sample, transform, max_side), quality=PREVIEW_JPEG_QUALITY)


def oracle_preview(sample: Sample, transform: list[dict], boxes: list[list[float]],
                   max_side: int = PREVIEW_MAX_SIDE) -> bytes:
    """JPEG (PREVIEW_CONTENT_TYPE) of the oracle image I_E, for the item page."""
    return encode_jpeg(oracle_preview_image(sample, transform, boxes, max_side), quality=PREVIEW_JPEG_QUALITY)


def transform_preview_png(sample: Sample, transform: list[dict], max_side: int = PREVIEW_MAX_SIDE) -> bytes:
    """PNG (exact pixels) of the image after `transform`. Raises ChainError."""
    return encode_png(transform_preview_image(sample, transform, max_side), compression=1)


def oracle_preview_png(sample: Sample, transform: list[dict], boxes: list[list[float]],
                       max_side: int = PREVIEW_MAX_SIDE) -> bytes:
    """PNG (exact pixels) of the oracle image I_E (what the LLM draft is sent). Raises ChainError."""
    return encode_png(oracle_preview_image(sample, transform, boxes, max_side), compression=1)


@dataclass
class ChainView:
    result: ChainResult
    thumbnails: dict[str, str]  # image reference -> data: URL of a small PNG
    inputs: list[str] = field(default_factory=lambda: ["img0"])  # the sample's media, shown first


def unreadable_message(error: Exception) -> str:
    """What the page says when a stored image cannot be read (damaged or missing file)."""
    return (f"The sample's image could not be read ({error}); the chain was not run. "
            "Ask an admin to re-import the sample.")


def chain_thumbnails(result: ChainResult) -> dict[str, str]:
    """A small PNG of every image a chain run made (measurements stay in full pixels), for the page."""
    thumbnails = {}
    for ref, image in result.images.items():
        small = make_preview(image, THUMB_MAX_SIDE).image
        thumbnails[ref] = "data:image/png;base64," + base64.b64encode(encode_png(small, compression=1)).decode()
    return thumbnails
