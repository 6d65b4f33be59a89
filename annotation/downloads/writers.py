"""The three files of a split's download, each written as a stream (docs/downloads.md).

- ``zip``: our bundle (annotation/bundles.py): ``benchmark.jsonl``, ``images/``, ``benchmark.json``;
- ``tsv``: VLMEvalKit's dataset TSV (annotation/vlmevalkit_export.py), row by row;
- ``parquet``: the Hugging Face datasets shape: ``image`` as the Image struct ``{bytes, path}``, row
  groups written as they fill (``ParquetWriter``), the features in the schema's ``huggingface``
  metadata so ``datasets`` decodes the images.

Every sample of the split is written, annotated or not (a model needs its inputs either way); a
split outside ``GOLD_SPLITS`` is written inputs-only (export_rows.INPUTS_DROPPED: no answer,
regions, transform, key steps, toolchain, nor meta). Each returns the number of samples written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.bundles import bundle_write
from annotation.export_rows import approved_of, inputs_record, media_file_names, sample_to_record, samples_for_export
from annotation.media import media_of, read_file
from annotation.models import Benchmark, DownloadKind, Sample
from annotation.vlmevalkit_export import stills_of, tsv_write

ROW_GROUP_ROWS = 500
ROW_GROUP_BYTES = 64 << 20  # a row group is flushed at whichever comes first


def write_zip(*, benchmark: Benchmark, split: str, out: Path, gold: bool, key: str) -> int:
    def extra(exported: int, skipped: int) -> dict:
        return {"download": {"split": split, "gold": gold, "samples": exported, "build_key": key}}

    return bundle_write(benchmark=benchmark, out=out, splits=[split], approved_only=False, inputs_only=not gold,
                        manifest_extra=extra).exported


def write_tsv(*, benchmark: Benchmark, split: str, out: Path, gold: bool, key: str) -> int:
    return tsv_write(benchmark=benchmark, out=out, splits=[split], approved_only=False, inputs_only=not gold).exported


_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_INPUT_COLUMNS: list[tuple[str, pa.DataType, dict]] = [
    ("uid", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("image", _IMAGE, {"_type": "Image"}),
    # Every still of a sample with several media (a video as its sampled frames), img0 first; empty otherwise.
    ("images", pa.list_(_IMAGE), {"feature": {"_type": "Image"}, "_type": "Sequence"}),
    ("question", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("options", pa.string(), {"dtype": "string", "_type": "Value"}),  # JSON {"A": ..., "B": ...} or null
    ("answer_type", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("tolerance", pa.float64(), {"dtype": "float64", "_type": "Value"}),
    ("domain", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("category", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("aux_line", pa.bool_(), {"dtype": "bool", "_type": "Value"}),
    ("split", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("source", pa.string(), {"dtype": "string", "_type": "Value"}),
]
_GOLD_COLUMNS: list[tuple[str, pa.DataType, dict]] = [
    (name, pa.string(), {"dtype": "string", "_type": "Value"})  # answer as text, the rest as our JSON
    for name in ("answer", "regions", "transform", "key_steps", "toolchain", "meta")
]


def parquet_schema(*, gold: bool) -> pa.Schema:
    columns = [*_INPUT_COLUMNS, *(_GOLD_COLUMNS if gold else [])]
    features = {name: feature for name, _, feature in columns}
    metadata = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema([(name, kind) for name, kind, _ in columns], metadata=metadata)


def write_parquet(*, benchmark: Benchmark, split: str, out: Path, gold: bool, key: str) -> int:
    schema = parquet_schema(gold=gold)
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    written = pending_bytes = 0
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for sample in samples_for_export(benchmark, splits=[split], gold=gold):
            row = _parquet_row(sample, gold)
            for name in schema.names:
                columns[name].append(row[name])
            pending_bytes += len(row["image"]["bytes"]) + sum(len(i["bytes"]) for i in row["images"])
            written += 1
            if len(columns["uid"]) >= ROW_GROUP_ROWS or pending_bytes >= ROW_GROUP_BYTES:
                writer.write_table(pa.table(columns, schema=schema))
                columns = {name: [] for name in schema.names}
                pending_bytes = 0
        if columns["uid"] or not written:
            writer.write_table(pa.table(columns, schema=schema))
    return written


def _parquet_row(sample: Sample, gold: bool) -> dict[str, Any]:
    names = [name for _, name in media_file_names(sample)]
    record = sample_to_record(sample, approved_of(sample), names[0]) if gold else inputs_record(sample, names[0])
    stills = [name for medium in media_of(sample) for name in stills_of(medium)]
    row: dict[str, Any] = {
        "uid": record["uid"],
        "image": {"bytes": read_file(sample.image.name), "path": names[0]},
        "images": [{"bytes": read_file(n), "path": f"images/{sample.uid}-{k}{Path(n).suffix}"}
                   for k, n in enumerate(stills)] if len(stills) > 1 else [],
        "question": record["question"],
        "options": json.dumps(record["options"], ensure_ascii=False) if record["options"] is not None else None,
        **{k: record[k] for k in ("answer_type", "tolerance", "domain", "category", "aux_line", "split", "source")},
    }
    if gold:
        row["answer"] = record["answer"]
        for name in ("regions", "transform", "key_steps", "toolchain", "meta"):
            row[name] = json.dumps(record[name], ensure_ascii=False)
    return row


WRITERS: dict[str, Callable[..., int]] = {
    DownloadKind.ZIP: write_zip,
    DownloadKind.TSV: write_tsv,
    DownloadKind.PARQUET: write_parquet,
}
