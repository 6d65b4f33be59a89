"""A benchmark's run protocol as facts, and its version (docs/runs.md, "The protocol page"): the part of what
a harness run does that the benchmark decides (prompt family and files, tools offered, image policy, answer
rule, scoring profile). A run's own options (max_turns, function calling or tagged text, sampling) are in
its record beside the version. The protocol page states these facts; a hosted run records the version, so
every harness-made row names the protocol it ran under. Reads only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings

from annotation.models import Benchmark
from evaluation.harness import HARNESS_VERSION, MODES
from evaluation.harness.loop import Protocol
from evaluation.harness.prompts import PROMPTS_DIR, load_prompt
from evaluation.harness.tools import function_schemas
from evaluation.run_inputs import RunRefused, benchmark_family, benchmark_tools

ANSWER_RULE = ("the content of the last <answer>...</answer> of the model's last message, else that whole "
               "message (evaluation/harness/loop.py, final_answer)")


def protocol_facts(benchmark: Benchmark) -> dict[str, Any]:
    """What a run on ``benchmark`` sends and how it is scored, from the harness's own code."""
    family = benchmark_family(benchmark)
    prompts = {}
    for mode in MODES:
        name = load_prompt(family, mode).name
        prompts[mode] = {"name": name, "sha256": hashlib.sha256((PROMPTS_DIR / f"{name}.txt").read_bytes()).hexdigest()}
    refused = ""
    try:
        schemas = function_schemas(benchmark_tools(benchmark, family))
    except RunRefused as exc:
        schemas, refused = [], str(exc)
    return {"harness": HARNESS_VERSION, "family": family, "prompts": prompts, "tools": schemas,
            "adaptive_refused": refused, "max_pixels": settings.IMAGE_MAX_PIXELS,
            "tool_images": Protocol().tool_images, "answer": ANSWER_RULE, "scoring": benchmark.scoring}


def protocol_version(facts: dict[str, Any]) -> str:
    """The first 12 hex digits of the sha256 of the facts: it changes when any of them does."""
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:12]


def protocol_page(benchmark: Benchmark) -> str:
    return f"/b/{benchmark.slug}/protocol/"


def protocol_stamp(benchmark: Benchmark, *, family: str | None = None, tool_images: bool = True) -> dict[str, str]:
    """What a harness run writes into each line's record to name the protocol it ran under: its version and
    page. {} when the run departs from the stated protocol (another prompt family; tool images kept from the
    model), so such a file claims none."""
    if (family and family != benchmark_family(benchmark)) or not tool_images:
        return {}
    return {"protocol_version": protocol_version(protocol_facts(benchmark)), "protocol_page": protocol_page(benchmark)}
