"""Times the item page's transform preview on a 12-megapixel image (target: < 200 ms server time).

Runs the view path without HTTP: annotation.workbench.previews.transform_preview (the
downscaled source from the in-memory cache, the recovery transform through the tool registry,
JPEG encoding, which is what GET /annotate/samples/<id>/image.png serves), and separately the
cold first view of a sample (decode the full image, shrink it, write the on-disk cache). With
--png it also times the exact-pixel PNG variant (`?format=png`, what every view served before).
Usage: .venv/bin/python bench/bench_transform_preview.py [--repeat N] [--png]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from django.test import override_settings  # noqa: E402

from annotation.models import Sample  # noqa: E402
from annotation.workbench import previews  # noqa: E402

WIDTH, HEIGHT = 4000, 3000  # 12 Mpx
TRANSFORMS = {
    "none": [],
    "rotate 90": [{"op": "rotate", "angle": 90}],
    "rotate 90 + contrast + gamma": [{"op": "rotate", "angle": 90}, {"op": "contrast", "alpha": 1.6},
                                     {"op": "gamma", "gamma": 1.4}],
    "rotate 17 (free angle)": [{"op": "rotate", "angle": 17}],
    "flip + brightness": [{"op": "flip", "direction": "horizontal"}, {"op": "brightness", "beta": 30}],
}


def timed(fn, repeat: int) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def photo() -> np.ndarray:
    """Smooth content plus sensor-like noise: the worst case for PNG (a photo)."""
    rng = np.random.default_rng(0)
    base = cv2.resize(rng.integers(0, 255, (300, 400, 3), dtype=np.uint8), (WIDTH, HEIGHT))
    return cv2.add(base, rng.integers(0, 20, (HEIGHT, WIDTH, 3), dtype=np.uint8))


def document() -> np.ndarray:
    """A page of text lines and a table on white: what OCR and chart samples look like."""
    image = np.full((HEIGHT, WIDTH, 3), 250, np.uint8)
    for row in range(60, HEIGHT - 60, 48):
        for col in range(80, WIDTH - 400, 260):
            cv2.putText(image, "Total 831K", (col, row), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (30, 30, 30), 2)
    for x in range(0, WIDTH, 400):
        cv2.line(image, (x, 0), (x, HEIGHT), (120, 120, 120), 2)
    return image


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15, help="timed runs per warm case")
    ap.add_argument("--png", action="store_true", help="also time the PNG (exact pixels) variant")
    opts = ap.parse_args()
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for name, make in (("photo-like", photo), ("document-like", document)):
        print(f"--- {name} content")
        run(make(), opts.repeat, opts.png)
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


def run(image: np.ndarray, repeat: int, png: bool) -> None:
    with tempfile.TemporaryDirectory() as media, override_settings(MEDIA_ROOT=media):
        path = Path(media) / "big.png"
        cv2.imwrite(str(path), image)
        sample = Sample(pk=1, width=WIDTH, height=HEIGHT, image_sha256="bench")
        sample.image.name = "big.png"

        def cold() -> None:
            previews._cache.clear()
            for p in (Path(media) / "previews").glob("*"):
                p.unlink()
            previews.transform_preview(sample, [])

        def disk() -> None:  # another worker process: the shrunk copy is on disk, not in memory
            previews._cache.clear()
            previews.transform_preview(sample, [])

        print(f"image {WIDTH}x{HEIGHT} = {WIDTH * HEIGHT / 1e6:.0f} Mpx, PNG {path.stat().st_size / 1e6:.1f} MB; "
              f"preview side {previews.PREVIEW_MAX_SIDE}")
        cold_ms = timed(cold, 3)
        print(f"{'cold (decode 12 Mpx, shrink, cache)':40s} median {statistics.median(cold_ms):7.1f} ms")
        disk_ms = timed(disk, 5)
        print(f"{'warm from the disk cache':40s} median {statistics.median(disk_ms):7.1f} ms")
        variants = [("", previews.transform_preview, previews.oracle_preview)]
        if png:
            variants.append((" [png]", previews.transform_preview_png, previews.oracle_preview_png))
        for tag, preview, oracle in variants:
            size = len(preview(sample, []))
            print(f"{'preview size' + tag:40s} {size / 1e6:7.2f} MB")
            for name, ops in TRANSFORMS.items():
                ms = timed(lambda ops=ops, preview=preview: preview(sample, ops), repeat)
                print(f"{'warm, ' + name + tag:40s} median {statistics.median(ms):7.1f} ms  "
                      f"max {max(ms):7.1f} ms")
            ms = timed(lambda oracle=oracle: oracle(sample, TRANSFORMS["rotate 90"], [[500, 500, 2500, 2000]]),
                       repeat)
            print(f"{'warm, oracle image (rotate 90 + cut)' + tag:40s} median {statistics.median(ms):7.1f} ms")


if __name__ == "__main__":
    main()
