"""Rows of a release's table files: TSV (VLMEvalKit, VTC-Bench) and parquet (AdaptMMBench)."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path

from annotation.releases.base import ReleaseError
from annotation.releases.sniff import text_encoding

csv.field_size_limit(sys.maxsize)  # a base64 image is one very long cell


def tsv_rows(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    """(columns, rows as (row number counted from 1 after the header, {column: text}))."""
    encoding = text_encoding(path)  # Excel's "Unicode Text" is UTF-16: read as it is
    handle = path.open(encoding=encoding, newline="")
    reader = csv.reader(handle, delimiter="\t")
    try:
        columns = [c.strip() for c in next(reader)]
    except StopIteration:
        handle.close()
        raise ReleaseError(f"{path.name} is empty") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        handle.close()
        raise ReleaseError(f"{path.name} is not a readable {'UTF-16' if encoding == 'utf-16' else 'UTF-8'} TSV ({exc})") from None

    def rows() -> Iterator[tuple[int, dict]]:
        with handle:
            try:
                for number, cells in enumerate(reader, start=1):
                    if not any(c.strip() for c in cells):
                        continue
                    yield number, dict(zip(columns, cells + [""] * (len(columns) - len(cells)), strict=False))
            except (UnicodeDecodeError, csv.Error) as exc:
                raise ReleaseError(f"{path.name}: unreadable after row {number} ({exc})") from None

    return columns, rows()


def parquet_rows(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    import pyarrow.parquet as pq  # only parquet imports need pyarrow

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError...: all mean "not a readable parquet"
        raise ReleaseError(f"{path.name} is not a readable parquet file ({exc})") from None
    columns = list(parquet.schema_arrow.names)

    def rows() -> Iterator[tuple[int, dict]]:
        number = 0
        for batch in parquet.iter_batches(batch_size=64):
            for row in batch.to_pylist():
                number += 1
                yield number, row

    return columns, rows()
