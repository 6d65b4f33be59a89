"""A benchmark as a VLMEvalKit dataset TSV, so VLMEvalKit users can run it (docs/formats.md).

One row per sample with an approved annotation, in VLMEvalKit's columns: ``index`` (the uid:
VLMEvalKit reads indexes as text, so any uid works, and its result files then name our samples
directly), ``image`` (base64 of the file; a JSON list of base64 strings for a sample with several
media, a video as its sampled frames; an image that an earlier row already carries is written as
that row's index, VLMEvalKit's own shorthand), ``question``, options as columns ``A``, ``B``, ...,
``answer``, ``category``, ``l2-category`` (our domain), ``split``. The rest of the sample rides
along in columns with our own field names (``regions``, ``transform``, ``key_steps``, ``toolchain``
and ``meta`` as our JSON; ``answer_type``, ``tolerance``, ``aux_line``, ``source``), which VLMEvalKit
ignores and ``import_benchmark --format vlmevalkit`` reads back, so the file comes back whole.
"""

from __future__ import annotations

import base64
import csv
import json
import string
from collections.abc import Collection
from pathlib import Path
from typing import Any

from annotation.export_rows import (
    INPUTS_DROPPED,
    ExportSummary,
    approved_of,
    inputs_record,
    sample_to_record,
    samples_for_export,
)
from annotation.media import media_of, read_file
from annotation.models import Annotation, AnnotationStatus, Benchmark, MediaKind, Sample, SampleMedia
from config.storages import written_whole

SHORTHAND_MAX = 64  # VLMEvalKit: an image cell this short is the index of the row holding the image
FIRST = ["index", "image", "question"]
LAST = ["answer", "category", "l2-category", "split", "answer_type", "tolerance", "regions", "transform", "key_steps",
        "toolchain", "aux_line", "source", "meta"]
# A split without gold (a public test download): no answer, evidence, steps, chain, nor meta (export_rows).
LAST_INPUTS = [c for c in LAST if c not in INPUTS_DROPPED]


CHOICE, OPEN = "MCQ", "OpenEnded"  # the file-name suffixes of a mixed benchmark's two files


def benchmark_export_vlmevalkit(*, benchmark: Benchmark, out: Path) -> list[ExportSummary]:
    """Write the benchmark's approved samples in VLMEvalKit's dataset shape: ``out`` (a .tsv file) when
    they are all of one kind (choice, or free text), else ``<out stem>_MCQ.tsv`` and
    ``<out stem>_OpenEnded.tsv`` beside it (the module's docstring says why)."""
    out = Path(out)
    kinds = _kinds(benchmark)
    if len(kinds) < 2:
        if kinds == {OPEN} and OPEN.lower() not in out.stem.lower():
            out = out.with_name(f"{out.stem}_{OPEN}.tsv")
        return [tsv_write(benchmark=benchmark, out=out)]
    return [tsv_write(benchmark=benchmark, out=out.with_name(f"{out.stem}_{kind}.tsv"), kind=kind)
            for kind in (CHOICE, OPEN)]


def _kinds(benchmark: Benchmark) -> set[str]:
    rows = Sample.objects.filter(benchmark=benchmark, annotations__status=AnnotationStatus.APPROVED)
    return {kind for kind, has in ((CHOICE, rows.filter(options__isnull=False).exists()),
                                   (OPEN, rows.filter(options__isnull=True).exists())) if has}


def tsv_write(*, benchmark: Benchmark, out: Path, splits: Collection[str] | None = None, approved_only: bool = True,
              inputs_only: bool = False, kind: str | None = None) -> ExportSummary:
    """The TSV, row by row from the streamed samples. ``approved_only``: samples with an approved
    annotation only (else every sample, with the builder's answer); ``inputs_only``: no gold columns;
    ``kind``: the choice rows only (``CHOICE``) or the others only (``OPEN``), else all."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    letters = _option_letters(benchmark, splits, approved_only) if kind != OPEN else []
    columns = [*FIRST, *letters, *(LAST_INPUTS if inputs_only else LAST)]
    exported = skipped = 0
    with written_whole(out) as partial, partial.open("w", encoding="utf-8", newline="") as handle:
        # VLMEvalKit reads the file with pandas (read_csv, sep="\t"): standard quoting carries the
        # tabs and newlines a question may hold.
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(columns)
        seen: dict[str, str] = {}  # sha256 of a single image -> the index of the row that carries it
        for sample in samples_for_export(benchmark, splits=splits, gold=not inputs_only or approved_only):
            annotation = approved_of(sample)
            if approved_only and annotation is None:
                skipped += 1
                continue
            if kind is not None and (sample.options is not None) != (kind == CHOICE):
                continue  # in the other kind's file
            row = _row(sample, annotation, seen, letters, inputs_only)
            writer.writerow([row[c] for c in columns])
            exported += 1
    return ExportSummary(path=out, exported=exported, skipped=skipped)


def _option_letters(benchmark: Benchmark, splits: Collection[str] | None, approved_only: bool) -> list[str]:
    """The option columns: every letter a written sample uses (a first pass over the options alone)."""
    rows = Sample.objects.filter(benchmark=benchmark, options__isnull=False)
    if splits is not None:
        rows = rows.filter(split__in=splits)
    if approved_only:
        rows = rows.filter(annotations__status=AnnotationStatus.APPROVED)
    letters = {k for options in rows.values_list("options", flat=True).iterator(chunk_size=2000) for k in options or {}}
    return sorted(letters, key=string.ascii_uppercase.index)


def _row(sample: Sample, annotation: Annotation | None, seen: dict[str, str], letters: list[str],
         inputs_only: bool) -> dict:
    record = inputs_record(sample, "") if inputs_only else sample_to_record(sample, annotation, "")
    row: dict[str, Any] = {
        "index": sample.uid,
        "image": _image_cell(sample, seen),
        "question": record["question"],
        "category": record["category"],
        "l2-category": record["domain"],
        "split": record["split"],
        "answer_type": record["answer_type"],
        "tolerance": "" if record["tolerance"] is None else record["tolerance"],
        "aux_line": str(record["aux_line"]).lower(),
        "source": record["source"],
    }
    if not inputs_only:
        row.update({
            "answer": record["answer"],
            "regions": _json(record["regions"]),
            "transform": _json(record["transform"]),
            "key_steps": _json(record["key_steps"]),
            "toolchain": _json(record["toolchain"]),
            "meta": _json(record["meta"]) if record["meta"] else "",
        })  # fmt: skip
    for letter in letters:
        row[letter] = (sample.options or {}).get(letter, "")
    return row


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value not in (None, [], {}) else ""


def _b64(name: str) -> str:
    return base64.b64encode(read_file(name)).decode("ascii")


def stills_of(medium: SampleMedia) -> list[str]:
    """Storage names of what VLMEvalKit is given for a medium: the image, or a video's frames."""
    if medium.kind == MediaKind.VIDEO:
        return [f["name"] for f in medium.frames if f.get("name")] or ([medium.poster] if medium.poster else [])
    return [medium.file.name]


def _image_cell(sample: Sample, seen: dict[str, str]) -> str:
    media = media_of(sample)
    names = [name for medium in media for name in stills_of(medium)]
    if len(names) == 1:
        sha = media[0].sha256
        if sha in seen:
            return seen[sha]
        if len(sample.uid) <= SHORTHAND_MAX:
            seen[sha] = sample.uid
        return _b64(names[0])
    return json.dumps([_b64(n) for n in names])

