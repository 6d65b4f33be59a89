"""A benchmark as the harness runs it (evaluation/harness, docs/runs.md): its samples as RunItems,
the prompt family, the tools offered, the simulated model's key, and ``run_benchmark``, the one
entry point the command and the demo share. Reads the database only; the run writes its file.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from django.conf import settings as django_settings

from annotation.declared_tools import declared_tool_names
from annotation.imagetools import REGISTRY, Limits
from annotation.media import media_of, still_path
from annotation.models import Benchmark, Sample
from annotation.selectors import approved_annotations_for_export
from evaluation.harness.cache import RequestCache
from evaluation.harness.client import Endpoint, Settings
from evaluation.harness.items import Medium, RunItem
from evaluation.harness.loop import DECODED, DEFAULT_MAX_IMAGE_PIXELS, Protocol, oracle_png
from evaluation.harness.prompts import FAMILIES
from evaluation.harness.runner import Estimate, Patience, Progress, RunSummary, estimate, run
from evaluation.harness.tools import VTC_MODULES, family_tools, offered_tools

SPLITS = ("all", "dev", "test")


class RunRefused(ValueError):
    """The benchmark cannot be run on this protocol; the message says why."""


def benchmark_family(benchmark: Benchmark) -> str:
    """The prompt family: the benchmark's scoring profile names its authors (VTC-Bench's, VLMEvalKit's for
    VLMEvalKit, MMReason, HR-Bench and TreeBench);
    else VTC-Bench's when the benchmark offers only VTC-Bench's operations; else ours."""
    profile = benchmark.scoring
    if profile == "vtcbench":
        return "vtcbench"
    if profile in ("vlmevalkit", "mmreason", "hrbench", "treebench"):  # datasets of VLMEvalKit's
        return "vlmevalkit"
    tools = [REGISTRY[t] for t in benchmark.tools if t in REGISTRY]
    if tools and all(t.module in VTC_MODULES for t in tools):
        return "vtcbench"
    return "generic"


def benchmark_tools(benchmark: Benchmark, family: str) -> list[str]:
    """The tools adaptive mode offers: the manifest's tool set, else the registry's for the family.
    A benchmark that declares model-backed tools (Agent-X's OCR, web search ...) is refused: the
    platform cannot run them, and no tool-model endpoint is configured."""
    declared = declared_tool_names(benchmark)
    if declared:
        raise RunRefused(
            f"{benchmark.name} declares tools the platform cannot run ({', '.join(sorted(declared)[:6])}"
            f"{' ...' if len(declared) > 6 else ''}): adaptive mode needs a tool-model endpoint for them, "
            "which is not available yet. Run text, oracle or blind instead.")
    if benchmark.tools:
        return offered_tools(benchmark.tools)
    return family_tools(family)


def run_samples(benchmark: Benchmark, split: str = "all", limit: int | None = None) -> list[Sample]:
    samples = (Sample.objects.filter(benchmark=benchmark).prefetch_related("media")
               .order_by("position", "uid"))
    if split != "all":
        samples = samples.filter(split=split)
    return list(samples[:limit] if limit else samples)


def run_items(benchmark: Benchmark, split: str = "all", limit: int | None = None) -> list[RunItem]:
    samples = run_samples(benchmark, split, limit)
    approved = approved_annotations_for_export(benchmark)
    return [_item(sample, approved.get(sample.pk)) for sample in samples]


def _item(sample: Sample, annotation: Any) -> RunItem:
    media = tuple(Medium(ref=f"img{m.position}", path=str(still_path(m)), width=m.width, height=m.height)
                  for m in media_of(sample))
    transform: list = []
    regions: list = []
    if annotation is not None:
        transform = list(annotation.transform or [])
        regions = [[r.x1, r.y1, r.x2, r.y2] for r in annotation.regions.all() if r.image_ref == "img0"]
    return RunItem(uid=sample.uid, question=sample.question, options=sample.options or None,
                   answer_type=sample.answer_type, media=media, split=sample.split, transform=transform,
                   regions=regions)


def simulated_key_lines(benchmark: Benchmark, split: str = "all", limit: int | None = None, *,
                        oracle: bool = True) -> Iterator[dict]:
    """What the simulated model knows of each sample (the answer included): for the demo and tests only. Without
    ``oracle`` (a run with no oracle mode, a proposal run) the oracle image is not made, so its hash is not known:
    making it is most of the key's cost (docs/performance.md)."""
    samples = run_samples(benchmark, split, limit)
    approved = approved_annotations_for_export(benchmark)
    protocol = Protocol(max_pixels=django_settings.IMAGE_MAX_PIXELS)
    for sample in samples:
        annotation = approved.get(sample.pk)
        first = media_of(sample)[0]
        oracle_sha = hashlib.sha256(oracle_png(_item(sample, annotation), protocol)).hexdigest() if oracle else None
        chain = [c.as_dict() for c in annotation.tool_calls.all()] if annotation is not None else []
        yield {"uid": sample.uid, "question": sample.question.strip(), "options": sample.options or None,
                "answer": sample.answer, "answer_type": sample.answer_type,
                "img0_sha256": hashlib.sha256(still_path(first).read_bytes()).hexdigest(),
               "oracle_sha256": oracle_sha,
               "width": first.width, "height": first.height, "toolchain": chain,
               # What a proposal request is answered from (simulated.proposal_reply): img0's approved regions
               # (in the frame after the transform), the transform and the key steps.
               "regions": [r.as_box() for r in annotation.regions.all() if r.image_ref == "img0"]
               if annotation is not None else [],
               "transform": list(annotation.transform or []) if annotation is not None else [],
               "key_steps": [s.text for s in annotation.key_steps.all()] if annotation is not None else [],
               **({"detail": detail} if (detail := _detail(sample.meta)) else {})}


def _detail(meta: Any) -> list[float] | None:
    """The box of the one small detail that decides the answer (the HR-Bench-shaped demo's `detail` column)."""
    value = (meta or {}).get("detail") if isinstance(meta, dict) else None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return list(value) if isinstance(value, list) and len(value) == 4 else None


def write_simulated_key(benchmark: Benchmark, path: Path, split: str = "all", limit: int | None = None, *,
                        oracle: bool = True) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for line in simulated_key_lines(benchmark, split, limit, oracle=oracle):
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


__all__ = ["FAMILIES", "SPLITS", "RunRefused", "benchmark_family", "benchmark_tools", "run_benchmark", "run_items",
           "write_simulated_key"]


def run_benchmark(*, benchmark: Benchmark, settings: Settings, modes: list[str], split: str = "all",
                  limit: int | None = None, family: str | None = None, protocol: str = "function_calling",
                  max_turns: int = 8, concurrency: int = 4, cache: RequestCache | None = None,
                  out: Path | None = None, before: Callable[[Estimate], bool] | None = None,
                  on_progress: Callable[[Progress], None] | None = None,
                  cancel: threading.Event | None = None, tool_images: bool = True,
                  patience: Patience | None = None,
                  max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
                  stamp: Mapping[str, str] | None = None) -> tuple[Estimate, RunSummary | None]:
    """The one way a benchmark is run (the command, the demo, later hosted runs): the benchmark's
    samples, family and tools, the estimate (``before`` sees it and may return False to stop there),
    then the run, its file written to ``out``. Raises RunRefused when the benchmark cannot be run.
    ``stamp``: the protocol version and page every line's record names (run_protocol.protocol_stamp)."""
    family = family or benchmark_family(benchmark)
    if "oracle" in modes and split != "dev" and not benchmark.oracle_runs_on_test:
        raise RunRefused(f"{benchmark.name}'s admins have turned oracle runs off for its test split (the oracle "
                         "image shows the evidence of a test item): run oracle on the dev split, or the other modes.")
    tools = benchmark_tools(benchmark, family) if "adaptive" in modes else []
    items = run_items(benchmark, split, limit)
    if not items:
        raise RunRefused(f"{benchmark.name} has no samples in the split {split!r}")
    plan = Protocol(family=family, tools=tuple(tools), protocol=protocol, max_turns=max_turns,
                    limits=Limits(max_pixels=django_settings.IMAGE_MAX_PIXELS),
                    max_pixels=django_settings.IMAGE_MAX_PIXELS, tool_images=tool_images,
                    max_image_pixels=max_image_pixels, protocol_version=(stamp or {}).get("protocol_version", ""),
                    protocol_page=(stamp or {}).get("protocol_page", ""))
    endpoint = Endpoint(settings, cache=cache)
    DECODED.limit = django_settings.RUNS_DECODED_PIXELS_MAX
    try:
        planned = estimate(items, modes, endpoint, plan)
        if before is not None and not before(planned):
            return planned, None
        _, summary = run(items, modes, endpoint, plan, concurrency=concurrency, out=out, on_progress=on_progress,
                         cancel=cancel, patience=patience)
    finally:
        endpoint.close()
    return planned, summary
