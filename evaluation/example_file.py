"""An example prediction file for a benchmark (docs/formats.md, "Prediction file"): what the upload form offers
to download, so a newcomer sees the format on the benchmark's own sample ids before writing theirs.

Two lines per sample, text and adaptive mode, in the benchmark's order; the answers are placeholders, never the
gold (a multiple-choice sample gets its first option's letter, a number 0, anything else "your answer"), and the
first sample's adaptive line shows a tool call (a zoom into the image's top-left quarter) and a last step.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from annotation.models import Benchmark, Sample


def _placeholder(sample: Sample) -> str:
    if sample.options:
        return str(next(iter(sample.options)))
    if sample.answer_type == "number":
        return "0"
    return "your answer"


def example_lines(benchmark: Benchmark) -> Iterator[dict[str, Any]]:
    rows = Sample.objects.filter(benchmark=benchmark).order_by("position", "uid").only(
        "uid", "options", "answer_type", "width", "height")
    for index, sample in enumerate(rows.iterator(chunk_size=2000)):
        answer = f"<answer>{_placeholder(sample)}</answer>"
        yield {"sample_id": sample.uid, "mode": "text", "answer": answer}
        line: dict[str, Any] = {"sample_id": sample.uid, "mode": "adaptive", "answer": answer}
        if index == 0:
            box = [0, 0, max(1, (sample.width or 2) // 2), max(1, (sample.height or 2) // 2)]
            line["steps"] = [
                {"thought": "Zoom into the part of the image that decides the answer.",
                 "tool": {"name": "zoom_in", "args": {"bbox": box}, "input": "img0", "output": "img1"}},
                {"thought": "The zoomed image shows the answer."},
            ]
            line["usage"] = {"input_tokens": 1200, "output_tokens": 80}
        yield line


def example_file(benchmark: Benchmark) -> Iterator[bytes]:
    for line in example_lines(benchmark):
        yield orjson.dumps(line) + b"\n"
