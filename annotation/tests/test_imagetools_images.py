"""Reading, refusing, encoding and previewing images."""

from __future__ import annotations

import io
import struct
import time
import tracemalloc
import zlib

import cv2
import numpy as np
import pytest
from PIL import Image

from annotation.imagetools import (ImageDecodeError, ImageTooLarge, encode_jpeg, encode_png,
                                   load_image, make_preview)

from .imagetools_helpers import textured


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height RGB pixels (its data is a few bytes)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + _chunk(b"IEND", b""))


def test_a_decompression_bomb_is_refused_from_its_header(monkeypatch):
    bomb = png_claiming(100_000, 100_000)
    assert len(bomb) < 200
    monkeypatch.setattr(cv2, "imdecode", lambda *a, **k: pytest.fail("decoded a bomb"))
    tracemalloc.start()
    began = time.perf_counter()
    with pytest.raises(ImageTooLarge, match="claims 10,000,000,000 pixels, above the limit"):
        load_image(bomb)
    elapsed = time.perf_counter() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 0.5 and peak < 5_000_000


def test_an_image_over_the_limit_is_refused_before_decoding(monkeypatch, tmp_path):
    path = tmp_path / "big.png"
    path.write_bytes(png_claiming(3000, 2000))
    monkeypatch.setattr(cv2, "imdecode", lambda *a, **k: pytest.fail("decoded"))
    with pytest.raises(ImageTooLarge, match=r"3000x2000 = 6,000,000 pixels, above the limit of "
                                            r"5,000,000"):
        load_image(path, max_pixels=5_000_000)
    with pytest.raises(ImageTooLarge):
        load_image(str(path), max_pixels=5_000_000)


def test_load_png_and_jpeg_from_bytes_and_paths(tmp_path):
    image = textured(64, 48)
    png = encode_png(image)
    assert np.array_equal(load_image(png), image)
    (tmp_path / "a.png").write_bytes(png)
    assert np.array_equal(load_image(tmp_path / "a.png"), image)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    loaded = load_image(jpeg.tobytes())
    assert loaded.shape == (48, 64, 3) and np.abs(loaded.astype(int) - image).mean() < 6


def test_gray_and_transparent_images_become_bgr():
    gray = np.full((10, 12), 77, np.uint8)
    loaded = load_image(encode_png(gray))
    assert loaded.shape == (10, 12, 3) and (loaded == 77).all()
    rgba = Image.new("RGBA", (8, 8), (255, 0, 0, 0))  # fully transparent red
    rgba.putpixel((0, 0), (255, 0, 0, 255))
    buffer = io.BytesIO()
    rgba.save(buffer, "PNG")
    loaded = load_image(buffer.getvalue())
    assert tuple(loaded[0, 0]) == (0, 0, 255)       # opaque red, BGR
    assert tuple(loaded[4, 4]) == (255, 255, 255)   # transparent: laid on white


def test_exif_orientation_is_applied_as_browsers_do():
    picture = Image.new("RGB", (40, 20), (0, 0, 0))
    picture.putpixel((0, 0), (255, 255, 255))
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: display rotated 90 degrees clockwise
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", exif=exif, quality=100)
    loaded = load_image(buffer.getvalue())
    assert loaded.shape == (40, 20, 3)
    assert loaded[0, 19].min() > 200  # the top-left pixel is now top-right


def test_garbage_is_a_decode_error():
    with pytest.raises(ImageDecodeError):
        load_image(b"this is not an image")


def test_preview_scale_maps_boxes_back_to_full_pixels():
    image = np.zeros((3000, 4000, 3), np.uint8)
    preview = make_preview(image, max_side=1600)
    assert preview.image.shape == (1200, 1600, 3)
    assert preview.scale == 0.4
    assert preview.to_full([160, 80, 400, 200]) == [400, 200, 1000, 500]
    assert preview.to_preview([400, 200, 1000, 500]) == [160, 80, 400, 200]
    small = make_preview(np.zeros((100, 50, 3), np.uint8))
    assert small.scale == 1.0 and small.image.shape == (100, 50, 3)


def test_encode_png_roundtrip_of_single_channel_results():
    mask = (np.arange(100).reshape(10, 10) % 2 * 255).astype(np.uint8)
    decoded = cv2.imdecode(np.frombuffer(encode_png(mask), np.uint8), cv2.IMREAD_UNCHANGED)
    assert np.array_equal(decoded, mask)


def test_encode_jpeg_is_a_close_preview_of_colour_and_gray_images():
    image = cv2.GaussianBlur(textured(160, 120), (5, 5), 0)
    jpeg = encode_jpeg(image)
    assert jpeg.startswith(b"\xff\xd8")
    decoded = load_image(jpeg)
    assert decoded.shape == image.shape
    assert np.abs(decoded.astype(int) - image.astype(int)).mean() < 4  # lossy, but close
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    flat = cv2.imdecode(np.frombuffer(encode_jpeg(gray, quality=95), np.uint8), cv2.IMREAD_UNCHANGED)
    assert flat.shape == gray.shape
    assert len(encode_jpeg(image, quality=30)) < len(jpeg)
    with pytest.raises(ValueError):
        encode_jpeg(image, quality=0)
