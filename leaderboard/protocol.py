"""One benchmark's run protocol, stated (`/b/<slug>/protocol/`; docs/runs.md, "The protocol page"): what
`run_model` and a hosted run do on it. The prompt files and their versions, the tools offered with their
schemas, the image policy, `max_turns`, how the answer is found and which profile scores it, and one
digest of all of it, the protocol's version. Everything is read from the code the harness runs
(evaluation/harness, evaluation/run_inputs.py), never restated, so the page cannot drift from a run.

A read: it writes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from annotation.models import Benchmark, Sample
from evaluation.example_file import example_file
from evaluation.harness import HARNESS_VERSION
from evaluation.harness.loop import PROTOCOLS, Protocol
from evaluation.harness.prompts import load_prompt
from evaluation.hosted_runs import OPTION_DEFAULTS
from evaluation.metrics.profiles import PROFILE_LABELS, PROFILE_NOTES
from evaluation.metrics.types import MODES
from evaluation.run_protocol import ANSWER_RULE, protocol_facts, protocol_version

MODE_SENDS = {
    "text": "the image(s) and the question block; no tools",
    "adaptive": "the image(s) and the question block, with the tools below; each call's output image comes "
                "back in the next message",
    "oracle": "the oracle image (the recovery transform applied, cut to the regions; PNG) in place of the media",
    "blind": "the question block alone, no image",
}
# The authors' own figure each profile adds (results["author_figures"]; docs/metrics.md).
AUTHOR_FIGURES = {
    "hrbench": "HR-Bench's figure: the accuracy of each cycle_category, then averaged over the cycles",
    "treebench": "TreeBench's figures: accuracy per task and subtask, and the mean IoU of the "
                 "<box>[x1,y1,x2,y2]</box> boxes of the reasoning against the target instances",
    "tirbench": "TIR-Bench's score: the mean credit per row (partial for jigsaw and spot-the-difference), "
                "overall and per task",
}


@dataclass(frozen=True)
class PromptFile:
    mode: str
    name: str  # "vlmevalkit.text.v1"
    path: str  # relative to the repository
    sha256: str
    system: str
    user: str
    sends: str


@dataclass(frozen=True)
class StatedProtocol:
    version: str  # a digest of everything below: two runs under the same version sent the same things
    harness_version: str
    family: str
    prompts: list[PromptFile]
    tools: list[dict[str, Any]]  # OpenAI function schemas
    adaptive_refused: str  # why adaptive mode is not run, or ""
    max_turns: int
    max_turns_range: tuple[int, int]
    protocols: tuple[str, ...]
    max_pixels: int
    max_image_pixels: int  # the run setting's default: a larger image is sent as a view
    tool_images: bool
    answer_rule: str
    scoring: str
    scoring_label: str
    scoring_note: str
    author_figure: str
    schemas_json: str = field(default="")


def stated_protocol(benchmark: Benchmark) -> StatedProtocol:
    facts = protocol_facts(benchmark)
    family = facts["family"]
    prompts = []
    for mode in MODES:
        prompt = load_prompt(family, mode)
        prompts.append(PromptFile(mode=mode, name=prompt.name, path=f"evaluation/harness/prompts/{prompt.name}.txt",
                                  sha256=facts["prompts"][mode]["sha256"], system=prompt.system, user=prompt.user,
                                  sends=MODE_SENDS[mode]))
    schemas = facts["tools"]
    return StatedProtocol(
        version=protocol_version(facts), harness_version=HARNESS_VERSION, family=family, prompts=prompts,
        tools=schemas, adaptive_refused=facts["adaptive_refused"], max_turns=int(OPTION_DEFAULTS["max_turns"]),
        max_turns_range=(1, 32), protocols=PROTOCOLS, max_pixels=settings.IMAGE_MAX_PIXELS,
        max_image_pixels=int(OPTION_DEFAULTS["max_image_pixels"]),
        tool_images=Protocol().tool_images, answer_rule=ANSWER_RULE, scoring=benchmark.scoring,
        scoring_label=PROFILE_LABELS.get(benchmark.scoring, benchmark.scoring),
        scoring_note=PROFILE_NOTES.get(benchmark.scoring, ""), author_figure=AUTHOR_FIGURES.get(benchmark.scoring, ""),
        schemas_json=json.dumps(schemas, indent=2),
    )


@require_safe
def protocol_page(request: HttpRequest, slug: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return render(request, "leaderboard/protocol.html", {"benchmark": benchmark, "p": stated_protocol(benchmark)})


@require_safe
def example_predictions(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    """An example prediction file on this benchmark's samples (evaluation/example_file.py): placeholders, no gold."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if not Sample.objects.filter(benchmark=benchmark).exists():
        raise Http404("This benchmark has no samples to predict (its entry holds a paper's reported results)")
    response = StreamingHttpResponse(example_file(benchmark), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}-example-predictions.jsonl"'
    return response
