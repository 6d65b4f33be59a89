"""Builds small benchmark files on disk for tests: valid by default, broken on request."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image


def sample_line(uid: str, **overrides: object) -> dict:
    line = {
        "uid": uid,
        "image": f"images/{uid}.png",
        "question": f"How many squares are in image {uid}?",
        "options": None,
        "answer": "3",
        "answer_type": "number",
        "tolerance": None,
        "domain": "real_world",
        "category": "counting",
        "regions": [[10, 10, 60, 40]],
        "transform": [{"op": "rotate", "angle": 90}],
        "key_steps": ["Rotate the image upright.", "Count the squares."],
        "toolchain": [
            {"tool": "rotate", "args": {"angle": 90}, "input": "img0", "output": "img1"},
            {"tool": "zoom_in", "args": {"bbox": [10, 10, 60, 40]}, "input": "img1", "output": "img2"},
        ],
        "aux_line": False,
        "split": "dev",
        "source": "test",
        "meta": {},
    }
    line.update(overrides)
    return line


def write_benchmark(
    folder: Path, lines: list[dict | str], *, size: tuple[int, int] = (80, 120), manifest: dict | None = None
) -> Path:
    """Write benchmark.jsonl (dicts as JSON, strings verbatim), an image for every dict line, and
    benchmark.json when a manifest is given."""
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    rendered = []
    for index, line in enumerate(lines):
        if isinstance(line, dict):
            image_name = Path(str(line.get("image", f"images/{line.get('uid')}.png"))).name
            Image.new("RGB", size, (index * 7 % 255, 90, 160)).save(images / image_name)
            rendered.append(json.dumps(line))
        else:
            rendered.append(line)
    if manifest is not None:
        (folder / "benchmark.json").write_text(json.dumps(manifest), encoding="utf-8")
    path = folder / "benchmark.jsonl"
    path.write_text("\n".join(rendered) + "\n", encoding="utf-8")
    return path
