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
from pathlib import Path
from typing import IO, Any

from annotation.media import media_of, read_file
from annotation.models import Benchmark, MediaKind, Sample, SampleMedia
from annotation.selectors import approved_annotations_for_export
from annotation.services import ExportSummary, sample_to_record

SHORTHAND_MAX = 64  # VLMEvalKit: an image cell this short is the index of the row holding the image
FIRST = ["index", "image", "question"]
LAST = ["answer", "category", "l2-category", "split", "answer_type", "tolerance", "regions", "transform", "key_steps",
        "toolchain", "aux_line", "source", "meta"]


def benchmark_export_vlmevalkit(*, benchmark: Benchmark, out: Path) -> ExportSummary:
    """Write the benchmark's approved samples to ``out`` (a .tsv file) in VLMEvalKit's dataset shape."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    samples = list(Sample.objects.filter(benchmark=benchmark).select_related("category__domain")
                   .prefetch_related("media").order_by("position", "uid"))
    approved = approved_annotations_for_export(benchmark)
    kept = [s for s in samples if s.pk in approved]
    letters = sorted({k for s in kept for k in (s.options or {})}, key=string.ascii_uppercase.index)
    with out.open("w", encoding="utf-8", newline="") as handle:
        _write(handle, kept, approved, [*FIRST, *letters, *LAST], letters)
    return ExportSummary(path=out, exported=len(kept), skipped=len(samples) - len(kept))


def _write(handle: IO[str], samples: list[Sample], approved: dict, columns: list[str], letters: list[str]) -> None:
    # VLMEvalKit reads the file with pandas (read_csv, sep="\t"): standard quoting carries the
    # tabs and newlines a question may hold.
    writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
    writer.writerow(columns)
    seen: dict[str, str] = {}  # sha256 of a single image -> the index of the row that carries it
    for sample in samples:
        record = sample_to_record(sample, approved[sample.pk], "")
        row: dict[str, Any] = {
            "index": sample.uid,
            "image": _image_cell(sample, seen),
            "question": record["question"],
            "answer": record["answer"],
            "category": record["category"],
            "l2-category": record["domain"],
            "split": record["split"],
            "answer_type": record["answer_type"],
            "tolerance": "" if record["tolerance"] is None else record["tolerance"],
            "regions": _json(record["regions"]),
            "transform": _json(record["transform"]),
            "key_steps": _json(record["key_steps"]),
            "toolchain": _json(record["toolchain"]),
            "aux_line": str(record["aux_line"]).lower(),
            "source": record["source"],
            "meta": _json(record["meta"]) if record["meta"] else "",
        }
        for letter in letters:
            row[letter] = (sample.options or {}).get(letter, "")
        writer.writerow([row[c] for c in columns])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value not in (None, [], {}) else ""


def _b64(name: str) -> str:
    return base64.b64encode(read_file(name)).decode("ascii")


def _stills(medium: SampleMedia) -> list[str]:
    """Storage names of what VLMEvalKit is given for a medium: the image, or a video's frames."""
    if medium.kind == MediaKind.VIDEO:
        return [f["name"] for f in medium.frames if f.get("name")] or ([medium.poster] if medium.poster else [])
    return [medium.file.name]


def _image_cell(sample: Sample, seen: dict[str, str]) -> str:
    media = media_of(sample)
    names = [name for medium in media for name in _stills(medium)]
    if len(names) == 1:
        sha = media[0].sha256
        if sha in seen:
            return seen[sha]
        if len(sample.uid) <= SHORTHAND_MAX:
            seen[sha] = sample.uid
        return _b64(names[0])
    return json.dumps([_b64(n) for n in names])

