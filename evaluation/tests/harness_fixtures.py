"""Shared by the harness tests: real images on disk, their key, and the simulated model as a
separate server process (evaluation/harness/simulated.py) speaking the OpenAI API."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

from evaluation.harness.items import Medium, RunItem
from evaluation.harness.loop import Protocol, oracle_png
from evaluation.harness.simulated import serving

ROOT = Path(__file__).resolve().parents[2]


def write_items(folder: Path, n: int = 8) -> tuple[list[RunItem], Path]:
    """``n`` samples with real PNG images (a tilted label, a dim patch), half multiple-choice, and the
    simulated model's key beside them. Even samples have a reference chain (rotate, then zoom)."""
    folder.mkdir(parents=True, exist_ok=True)
    items, key = [], []
    for i in range(n):
        image = np.full((120 + 8 * i, 160 + 10 * i, 3), 40 + 10 * i, np.uint8)
        cv2.rectangle(image, (20, 20), (90 + i, 70), (0, 0, 255 - 20 * i), -1)
        cv2.putText(image, f"N{i}", (30, 60), cv2.FONT_HERSHEY_SIMPLEX, 1, (255, 255, 255), 2)
        path = folder / f"s{i}.png"
        cv2.imwrite(str(path), image)
        uid = f"s{i:02d}"
        options = {"A": "red", "B": "green", "C": "blue"} if i % 2 else None
        answer = "A" if options else str(10 + i)
        chain = ([{"tool": "rotate", "args": {"angle": 90}}, {"tool": "zoom_in", "args": {"bbox": [0, 0, 60, 60]}}]
                 if i % 2 == 0 else [])
        items.append(RunItem(uid=uid, question=f"What does label {i} show?", options=options,
                             answer_type="choice" if options else "number",
                             media=(Medium(ref="img0", path=str(path), width=image.shape[1], height=image.shape[0]),),
                             transform=[{"op": "rotate", "angle": 90}] if i % 3 == 0 else [],
                             regions=[[0, 0, 50, 50]] if i % 3 == 0 else []))
        key.append({"uid": uid, "question": f"What does label {i} show?", "options": options, "answer": answer,
                    "answer_type": "choice" if options else "number",
                    "img0_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                    "oracle_sha256": hashlib.sha256(oracle_png(items[-1], Protocol())).hexdigest(),
                    "width": image.shape[1], "height": image.shape[0], "toolchain": chain})
    key_path = folder / "key.jsonl"
    key_path.write_text("".join(json.dumps(k) + "\n" for k in key))
    return items, key_path


@contextmanager
def simulated_model(key: Path, log: Path, *args: str) -> Iterator[str]:
    """The simulated model in its own process, logging every request to ``log``."""
    with serving(key, *args, log=log) as url:
        yield url


def log_lines(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_for(predicate, timeout: float = 30.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")
