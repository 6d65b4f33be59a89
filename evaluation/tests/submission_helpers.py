"""Shared by the submission tests: a small benchmark in the database and prediction lines."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.files.base import ContentFile

from annotation.models import Benchmark
from annotation.services import benchmark_import
from annotation.tests.benchmark_files import sample_line, write_benchmark

BAD_FILES = Path(__file__).resolve().parent / "bad_files"
# Six samples: s1-s3 on the dev split (details may be shown), s4-s6 on test (never shown).
UIDS = ("s1", "s2", "s3", "s4", "s5", "s6")
DEV = ("s1", "s2", "s3")
SLUG = "tiny"


def make_benchmark(folder: Path, slug: str = SLUG) -> Benchmark:
    lines = [sample_line(uid, split="dev" if uid in DEV else "test",
                         answer=str(i + 1), question=f"How many squares in {uid}?")
             for i, uid in enumerate(UIDS)]
    path = write_benchmark(folder, lines)
    benchmark_import(path=path, slug=slug)
    return Benchmark.objects.get(slug=slug)


def answer_of(uid: str) -> str:
    return str(UIDS.index(uid) + 1)


def prediction(uid: str, mode: str = "adaptive", *, right: bool = True, **extra: object) -> dict:
    line: dict = {
        "sample_id": uid,
        "mode": mode,
        "answer": f"<answer>{answer_of(uid) if right else '99'}</answer>",
        "usage": {"input_tokens": 1000, "output_tokens": 100},
    }
    if mode == "adaptive":
        line["steps"] = [
            {"thought": "Rotate the image upright.", "tool": {"name": "rotate", "args": {"angle": 90}}},
            {"thought": "Count the squares."},
        ]
    line.update(extra)
    return line


def jsonl(lines: list[dict | str]) -> bytes:
    return ("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n").encode()


def good_file(modes: tuple[str, ...] = ("text", "adaptive"), wrong: tuple[str, ...] = ("s2", "s5")) -> bytes:
    return jsonl([prediction(uid, mode, right=uid not in wrong) for mode in modes for uid in UIDS])


def upload(content: bytes, name: str = "predictions.jsonl") -> ContentFile:
    return ContentFile(content, name=name)
