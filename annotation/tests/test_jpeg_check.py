"""annotation/jpeg_check.py: the walk over a JPEG's markers that stands in for decoding it on import. It must call
whole every JPEG an encoder writes, and never call whole a file the decode (Pillow, libjpeg) would refuse."""

from __future__ import annotations

import io
import random
import warnings

import cv2
import numpy as np
import pytest
from PIL import Image

from annotation.jpeg_check import jpeg_whole


def encoded(mode: str = "RGB", size: tuple[int, int] = (64, 48), **options: object) -> bytes:
    pixels = np.random.default_rng(3).integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).convert(mode).save(buffer, "JPEG", **options)
    return buffer.getvalue()


KINDS = {
    "baseline": encoded(quality=80),
    "progressive": encoded(quality=80, progressive=True),
    "optimized": encoded(quality=95, optimize=True),
    "grey": encoded("L"),
    "cmyk": encoded("CMYK", progressive=True),
    "4:4:4": encoded(subsampling=0),
}


def decodes(data: bytes) -> bool | None:
    """True/False: Pillow decodes it or refuses it; None: its header is already refused (the walk never sees it)."""
    try:
        image = Image.open(io.BytesIO(data))
    except Exception:  # noqa: BLE001 - any refusal of the header
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image.draft(image.mode, (max(1, image.width // 8), max(1, image.height // 8)))
            image.load()
    except Exception:  # noqa: BLE001 - any refusal of the data
        return False
    return True


@pytest.mark.parametrize("kind", KINDS)
def test_every_encoders_jpeg_is_whole_and_every_cut_of_it_is_not(kind: str) -> None:
    data = KINDS[kind]
    assert jpeg_whole(data)
    assert not any(jpeg_whole(data[:cut]) for cut in range(len(data) - 1))


def test_opencvs_jpegs_with_restart_markers_are_whole() -> None:
    pixels = np.random.default_rng(1).integers(0, 255, (96, 128, 3), dtype=np.uint8)
    for options in ([cv2.IMWRITE_JPEG_RST_INTERVAL, 2], [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]):
        ok, data = cv2.imencode(".jpg", pixels, options)
        assert ok and jpeg_whole(data.tobytes())


def test_no_damaged_jpeg_the_decoder_refuses_is_called_whole() -> None:
    rnd = random.Random(13)
    bases = list(KINDS.values())
    refused = 0
    for _ in range(1500):
        data = bytearray(rnd.choice(bases))
        for _ in range(rnd.randint(1, 3)):  # mostly in the headers, where the decoder's refusals come from
            at = rnd.randrange(2, min(len(data), 1200)) if rnd.random() < 0.85 else rnd.randrange(2, len(data))
            data[at] = rnd.randrange(256)
        verdict = decodes(bytes(data))
        if verdict is False:
            refused += 1
            assert not jpeg_whole(bytes(data)), bytes(data).hex()
    assert refused > 50  # the damage reached the decoder's refusals often enough to mean something
