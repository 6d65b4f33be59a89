"""A benchmark's samples as export rows, streamed: what every export writes (docs/formats.md, docs/downloads.md).

The staff export (``benchmark_export``, ``export_benchmark``), the VLMEvalKit TSV and the public
downloads (``annotation.downloads``) all read the samples here, in file order, a chunk at a time
(``.iterator(chunk_size=...)`` with the prefetches done per chunk), so no export holds a whole
benchmark in memory. A record is one benchmark-file line; ``inputs_only`` strips it to what a
model is given (the test split's downloads): ``GOLD_FIELDS`` and ``meta`` go.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.db.models import Prefetch

from annotation.benchmark_fields import region_entry
from annotation.media import media_of
from annotation.models import Annotation, AnnotationStatus, Benchmark, MediaKind, Region, Sample, SampleMedia

# A sample's gold: its answer and its approved annotation's parts. A test split's public download
# carries none of them (docs/security.md); nor anything derived from them (the TSV's `answer`
# column, oracle images).
GOLD_FIELDS = ("answer", "regions", "transform", "key_steps", "toolchain")
# `meta` holds whatever a release's reader did not map (AdaptMMBench's transform label, VTC-Bench's raw
# chain column, Agent-X's justification): an open bag that may hold gold, so inputs-only rows leave it out.
INPUTS_DROPPED = (*GOLD_FIELDS, "meta")
CHUNK_SIZE = 500


@dataclass(frozen=True, slots=True)
class ExportSummary:
    path: Path
    exported: int
    skipped: int  # samples without an approved annotation


def samples_for_export(benchmark: Benchmark, *, splits: Collection[str] | None = None, gold: bool = True,
                       chunk_size: int = CHUNK_SIZE) -> Iterator[Sample]:
    """The benchmark's samples in file order, streamed, with their media; with ``gold``, each with its
    approved annotation (regions, key steps, calls) in ``approved_of(sample)``."""
    samples = (Sample.objects.filter(benchmark=benchmark).select_related("category__domain")
               .order_by("position", "uid"))
    if splits is not None:
        samples = samples.filter(split__in=splits)
    prefetches: list[str | Prefetch] = ["media"]
    if gold:
        approved = (Annotation.objects.filter(status=AnnotationStatus.APPROVED)
                    .prefetch_related("regions", "key_steps", "tool_calls"))
        prefetches.append(Prefetch("annotations", queryset=approved, to_attr="approved_list"))
    return samples.prefetch_related(*prefetches).iterator(chunk_size=chunk_size)


def approved_of(sample: Sample) -> Annotation | None:
    """The sample's approved annotation, from ``samples_for_export(gold=True)``'s prefetch."""
    approved = getattr(sample, "approved_list", None)
    return approved[0] if approved else None


def media_file_names(sample: Sample) -> list[tuple[SampleMedia, str]]:
    """Each medium with its name in an exported bundle: files as uploaded (a video, not its frames),
    the first keeping the one-image name ``images/<uid>.<ext>``."""
    out = []
    for medium in media_of(sample):
        suffix = "" if medium.position == 0 else f"-{medium.position}"
        out.append((medium, f"images/{sample.uid}{suffix}{Path(medium.file.name).suffix}"))
    return out


def bundle_record(sample: Sample, annotation: Annotation | None, names: list[str], *, inputs_only: bool) -> dict:
    """The benchmark-file line of an exported bundle (``names``: its media's names in the bundle)."""
    if inputs_only:
        record = inputs_record(sample, names[0])
    else:
        record = sample_to_record(sample, annotation, names[0])
    if len(names) > 1 or media_of(sample)[0].kind == MediaKind.VIDEO:
        record = {"uid": record["uid"], "image": names[0], "images": names, **record}
    return record


RECORD_ORDER = ("uid", "image", "question", "options", "answer", "answer_type", "tolerance", "domain", "category",
                "regions", "transform", "key_steps", "toolchain", "aux_line", "split", "source", "meta")


def sample_to_record_fields(sample: Sample, image_name: str) -> dict:
    """The fields of a line that are the sample's own inputs (no gold)."""
    return {
        "uid": sample.uid,
        "image": image_name,
        "question": sample.question,
        "options": sample.options,
        "answer_type": sample.answer_type,
        "tolerance": sample.tolerance,
        "domain": sample.category.domain.slug,
        "category": sample.category.slug,
        "aux_line": sample.aux_line,
        "split": sample.split,
        "source": sample.source,
        "meta": sample.meta,
    }


def inputs_record(sample: Sample, image_name: str) -> dict:
    """A line without gold (nor ``meta``): what a model needs to answer, in formats.md's order."""
    fields = sample_to_record_fields(sample, image_name)
    return {k: fields[k] for k in RECORD_ORDER if k not in INPUTS_DROPPED}


def sample_to_record(sample: Sample, annotation: Annotation | None, image_name: str) -> dict:
    """One benchmark-file line, in formats.md's field order. Without an approved annotation: the
    builder's answer (what the scorer uses) and no evidence, steps or chain yet."""
    key_steps: list = []
    for step in annotation.key_steps.all() if annotation is not None else ():
        # Plain strings for what a person wrote or checked; the origin is kept for unverified drafts.
        if step.origin == "human" and step.verified:
            key_steps.append(step.text)
        else:
            key_steps.append({"text": step.text, "origin": step.origin, "verified": step.verified})
    fields = {
        **sample_to_record_fields(sample, image_name),
        "answer": sample.answer,
        "regions": regions_for_file(annotation) if annotation is not None else [],
        "transform": annotation.transform if annotation is not None else [],
        "key_steps": key_steps,
        "toolchain": [c.as_dict() for c in annotation.tool_calls.all()] if annotation is not None else [],
    }
    return {k: fields[k] for k in RECORD_ORDER}


def regions_for_file(annotation: Annotation) -> list[list | dict]:
    return region_entries(annotation.regions.all())


def region_entries(regions: Iterable[Region]) -> list[list | dict]:
    """Boxes as a file line has them (benchmark_fields.region_entry), in their order."""
    return [region_entry(r.image_ref, _tidy_box(r.as_box())) for r in regions]


def _tidy_box(box: list[float]) -> list[float | int]:
    return [int(v) if float(v).is_integer() else v for v in box]


def benchmark_manifest(benchmark: Benchmark) -> dict:
    domains = {
        d.slug: {"name": d.name, "categories": {c.slug: c.name for c in d.categories.all()}}
        for d in benchmark.domains.prefetch_related("categories")
    }
    manifest = {
        "slug": benchmark.slug,
        "name": benchmark.name,
        "version": benchmark.version,
        "description": benchmark.description,
        "license": benchmark.license,
        "citation": benchmark.citation,
        "tools": [*benchmark.tools, *benchmark.declared_tools],
        "domains": domains,
    }
    if benchmark.cost_min is not None:
        manifest.update(cost_min=benchmark.cost_min, cost_max=benchmark.cost_max)
    if benchmark.figures:
        manifest["figures"] = list(benchmark.figures)
    if benchmark.scoring != "generic":
        manifest["scoring"] = benchmark.scoring
    if benchmark.hf_dataset:
        manifest["hf_dataset"] = benchmark.hf_dataset
    return manifest
