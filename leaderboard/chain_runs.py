"""A public submission's tool calls re-run on a dev sample, once per (submission, sample, mode).

The sample browser and its images are open to anonymous visitors, and a run costs 1-2 s of CPU and
up to ~1 GB of memory on a large image. So a run is cached with every image it made (as preview
PNGs), the prediction lines of a sample are cached too (finding them reads the whole file), and
an image name the chain cannot produce is refused before anything runs (docs/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache

from annotation.declared_tools import declared_tool_names
from annotation.imagetools import ToolError, encode_png, make_preview, may_produce, run_chain
from annotation.media import chain_inputs, media_of
from annotation.models import Sample
from evaluation.models import Submission
from leaderboard import model_page

TTL = 60 * 60
PREVIEW_SIDE = 800


@dataclass
class ChainRun:
    steps: list[dict[str, Any]] = field(default_factory=list)  # per call: output, error, measurements
    error: str | None = None
    pngs: dict[str, bytes] = field(default_factory=dict)  # image name -> preview PNG


def _key(kind: str, submission: Submission, sample: Sample, *rest: str) -> str:
    # The image's hash: a re-import with a new image is a new run.
    return ":".join(("lb", kind, str(submission.pk), str(sample.pk), sample.image_sha256[:16], *rest))


def prediction_lines(submission: Submission, sample: Sample) -> dict[str, dict[str, Any]]:
    """``model_page.prediction_lines``, cached: the file is read at most once per sample and hour."""
    key = _key("lines", submission, sample)
    lines = cache.get(key)
    if lines is None:
        lines = model_page.prediction_lines(submission, sample.uid)
        cache.set(key, lines, TTL)
    return lines


def calls_of(line: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in (line.get("steps") or []) if isinstance(s, dict) and isinstance(s.get("tool"), dict)]


def may_show(submission: Submission, sample: Sample, mode: str, ref: str) -> bool:
    """Could this mode's chain (or the sample's media) hold an image named ``ref``? Nothing runs."""
    if mode not in model_page.MODES:
        return False
    initial = [m.ref for m in media_of(sample)] or ["img0"]
    return may_produce(calls_of(prediction_lines(submission, sample).get(mode, {})), ref, initial=initial)


def chain_run(submission: Submission, sample: Sample, mode: str) -> ChainRun:
    """The run of this mode's calls with its images, from the cache or run now (and cached)."""
    key = _key("run", submission, sample, mode)
    found = cache.get(key)
    if found is not None:
        return found
    chain = calls_of(prediction_lines(submission, sample).get(mode, {}))
    run = ChainRun()
    try:
        first, extras = chain_inputs(sample)  # img0 and the sample's other media (img1, ...)
        ran = run_chain(first, chain, extra_images=extras, declared=declared_tool_names(sample.benchmark))
    except (OSError, ValueError, ToolError) as exc:  # an unreadable or missing image: say so, not a 500
        run.error = f"the image could not be loaded: {exc}"
    else:
        run.error = ran.error
        run.steps = [{"output": s.output, "error": s.error, "measurements": s.measurements} for s in ran.steps]
        run.pngs = {ref: encode_png(make_preview(image, PREVIEW_SIDE).image) for ref, image in ran.images.items()}
    cache.set(key, run, TTL)
    return run
