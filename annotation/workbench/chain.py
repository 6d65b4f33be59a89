"""The reference-chain verifier: run a chain for the page, and mark a saved chain verified only
when it runs cleanly and every step is valid.

A benchmark's declared tools (Agent-X's OCR, WebSearch...) are not run here: their steps show
as "declared, not run here", the registry steps around them run, and a step that needs a
declared step's output says so. A name-only chain (tool names without arguments, VTC-Bench's)
is never run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from annotation import benchmark_fields as bf
from annotation.declared_tools import declared_from_dicts, declared_tool_names
from annotation.imagetools import ChainResult, ToolError, run_chain
from annotation.media import chain_inputs
from annotation.models import Annotation, Benchmark, Sample
from annotation.workbench.previews import ChainView, chain_thumbnails, unreadable_message

NAME_ONLY_NOTE = "This chain lists tool names only (no arguments or images), as VTC-Bench's reference chains do: it is never run."


class ChainNotVerified(Exception):
    pass


def benchmark_tools_view(benchmark: Benchmark) -> bf.ToolRegistryView:
    """The registry plus the benchmark's declared tools: what chains on its samples may call."""
    return bf.default_registry_view(declared_from_dicts(benchmark.declared_tools or ()))


@dataclass
class NameOnlyChain:
    """What the page shows for a name-only chain: the names, resolved where they can be."""

    names: list[str]
    note: str = NAME_ONLY_NOTE
    steps: list = field(default_factory=list)


def chain_run(sample: Sample, chain: Any) -> ChainView | NameOnlyChain:
    """Run a chain from the page on the sample's full-size image; declared steps are skipped."""
    benchmark = sample.benchmark
    if isinstance(chain, list) and chain and all(bf.is_name_only_call(_core(c)) for c in chain):
        view = benchmark_tools_view(benchmark)
        names = [_core(c) if isinstance(_core(c), str) else _core(c)["tool"] for c in chain]
        return NameOnlyChain([(view.resolve(n) or n) if isinstance(n, str) else str(n) for n in names])
    try:
        first, extras = chain_inputs(sample)
    except (ToolError, OSError) as error:  # a damaged or missing stored image: say so, not a 500
        return ChainView(ChainResult(error=unreadable_message(error)), {}, [])
    result = run_chain(first, chain, extra_images=extras, declared=declared_tool_names(benchmark))
    return ChainView(result, chain_thumbnails(result), ["img0", *extras])


def _core(call: Any) -> Any:
    # The page sends the verifier's fields (verdict, note) with each call.
    return {k: v for k, v in call.items() if k not in ("verdict", "note")} if isinstance(call, dict) else call


def annotation_chain_verify(*, annotation_id: int) -> Annotation:
    """Re-run the saved chain and set `chain_verified`, or raise ChainNotVerified saying why.
    Any later edit of the chain clears the flag (annotation.workbench.editing._write)."""
    annotation = Annotation.objects.select_related("sample__benchmark").prefetch_related("tool_calls").get(pk=annotation_id)
    calls = list(annotation.tool_calls.all())
    if not calls:
        raise ChainNotVerified("There is no saved toolchain to verify.")
    if any(c.name_only for c in calls):
        raise ChainNotVerified(f"Not verified: {NAME_ONLY_NOTE} Give each call its arguments to verify it.")
    try:
        first, extras = chain_inputs(annotation.sample)
    except (ToolError, OSError) as error:
        raise ChainNotVerified(f"Not verified: {unreadable_message(error)}") from None
    result: ChainResult = run_chain(first, [c.as_dict() for c in calls], extra_images=extras,
                                    declared=declared_tool_names(annotation.sample.benchmark))
    if not result.ok:
        raise ChainNotVerified(f"Not verified: the chain fails ({result.error}).")
    pending = [str(c.position + 1) for c in calls if c.verdict != "valid"]
    if pending:
        raise ChainNotVerified(f"Not verified: mark step {', '.join(pending)} valid first (each step needs a person's check).")
    with transaction.atomic():
        # Only if the chain is still the one that was run (no save in between).
        current = list(Annotation.objects.select_for_update().get(pk=annotation_id).tool_calls.all())
        if [c.as_dict() for c in current] != [c.as_dict() for c in calls]:
            raise ChainNotVerified("The chain changed while it ran; run and verify it again.")
        Annotation.objects.filter(pk=annotation_id).update(chain_verified=True)
    annotation.chain_verified = True
    return annotation
