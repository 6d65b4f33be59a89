"""Times the reference tool chain on a 12-megapixel image.

rotate 90 -> histogram_eq (CLAHE) -> zoom_in -> binarize (Otsu) -> draw_contours -> measure_area,
run through `run_chain` exactly as the annotator and the scorer run it (thread per call, time
limit, every intermediate kept). Target (issue 3): median at most 150 ms on the 2-core machine.

    .venv/bin/python -m bench.bench_toolchain            # 20 timed runs after 3 warm-ups
    .venv/bin/python -m bench.bench_toolchain --runs 50 --json
    .venv/bin/python -m bench.bench_toolchain --threads 1     # OpenCV on one thread

No Django: the library is plain NumPy and OpenCV.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import cv2
import numpy as np

from annotation.imagetools import encode_png, load_image, run_chain

WIDTH, HEIGHT = 4000, 3000  # 12 megapixels

CHAIN = [
    {"tool": "rotate", "args": {"angle": 90}},
    {"tool": "histogram_eq", "args": {"mode": "clahe", "clip_limit": 2.0, "tile_grid_size": 8}},
    # In the upright (3000 x 4000) frame: a 1200 x 900 block of the page.
    {"tool": "zoom_in", "args": {"bbox": [600, 1500, 1800, 2400]}},
    {"tool": "binarize", "args": {"mode": "otsu"}},
    {"tool": "draw_contours", "args": {"mode": "external"}},
    {"tool": "measure_area", "args": {}},
]


def make_page(seed: int = 0) -> np.ndarray:
    """A scanned-page-like colour image, lying on its side (so the chain rotates it upright):
    text lines, a table, shapes, uneven lighting and sensor noise."""
    rng = np.random.default_rng(seed)
    page = np.full((WIDTH, HEIGHT, 3), 235, np.uint8)  # upright page: 3000 wide, 4000 tall
    for row, y in enumerate(range(150, 3900, 70)):
        words = " ".join("".join(chr(rng.integers(97, 123)) for _ in range(rng.integers(2, 9)))
                         for _ in range(9))
        cv2.putText(page, words, (120, y), cv2.FONT_HERSHEY_SIMPLEX, 1.4,
                    (30, 30, 30) if row % 7 else (150, 40, 40), 3, cv2.LINE_AA)
    for i in range(6):
        cv2.line(page, (700, 1600 + 120 * i), (1700, 1600 + 120 * i), (20, 20, 20), 3)
    for x in range(700, 1701, 250):
        cv2.line(page, (x, 1600), (x, 2200), (20, 20, 20), 3)
    cv2.circle(page, (2300, 1900), 220, (40, 120, 200), -1)
    cv2.rectangle(page, (2000, 2500), (2700, 2900), (60, 160, 60), -1)
    shading = np.linspace(0.75, 1.0, HEIGHT, dtype=np.float32)[None, :, None]
    page = np.clip(page * shading + rng.normal(0, 6, page.shape), 0, 255).astype(np.uint8)
    return cv2.rotate(page, cv2.ROTATE_90_CLOCKWISE)  # 4000 x 3000, on its side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--threads", type=int, default=None,
                        help="cv2.setNumThreads before timing (default: OpenCV's own choice)")
    options = parser.parse_args()
    if options.threads is not None:
        cv2.setNumThreads(options.threads)
    load_before = os.getloadavg()[0]

    image = make_page()
    started = time.perf_counter()
    png = encode_png(image)
    encode_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    load_image(png)
    decode_ms = (time.perf_counter() - started) * 1000

    totals: list[float] = []
    per_step: dict[str, list[float]] = {}
    for run in range(options.warmup + options.runs):
        started = time.perf_counter()
        result = run_chain(image, CHAIN)
        elapsed = (time.perf_counter() - started) * 1000
        if not result.ok:
            raise SystemExit(f"the chain failed: {result.error}")
        if run >= options.warmup:
            totals.append(elapsed)
            for step in result.steps:
                per_step.setdefault(f"{step.index} {step.tool}", []).append(step.elapsed_ms)

    figures = {
        "image": f"{WIDTH}x{HEIGHT} BGR ({WIDTH * HEIGHT / 1e6:.0f} MP)",
        "runs": options.runs,
        "median_ms": round(statistics.median(totals), 1),
        "p90_ms": round(sorted(totals)[max(0, int(len(totals) * 0.9) - 1)], 1),
        "min_ms": round(min(totals), 1),
        "max_ms": round(max(totals), 1),
        "steps_median_ms": {name: round(statistics.median(v), 1) for name, v in per_step.items()},
        "contours": result.steps[-2].measurements["count"],
        "largest_area": result.steps[-1].measurements["area"],
        "png_encode_ms": round(encode_ms, 1),
        "png_decode_ms": round(decode_ms, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "load_average_1min_at_start": round(load_before, 2),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                   f"OpenCV {cv2.__version__} ({cv2.getNumThreads()} threads), "
                   f"NumPy {np.__version__}, Python {platform.python_version()}",
    }
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"chain on {figures['image']}, {options.runs} runs: median {figures['median_ms']} ms, "
          f"p90 {figures['p90_ms']} ms, min {figures['min_ms']} ms, max {figures['max_ms']} ms")
    for name, ms in figures["steps_median_ms"].items():
        print(f"  {name:<22} {ms:7.1f} ms")
    print(f"({figures['contours']} contours; PNG encode {figures['png_encode_ms']} ms, "
          f"load_image {figures['png_decode_ms']} ms; {figures['machine']}; load average "
          f"{figures['load_average_1min_at_start']} at start, {figures['load_average_1min']} at end)")


if __name__ == "__main__":
    main()
