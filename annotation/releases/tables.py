"""Rows of a release's table files: TSV (VLMEvalKit, VTC-Bench) and parquet (AdaptMMBench)."""

from __future__ import annotations

import csv
import itertools
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
    try:
        columns = [c.strip() for c in next(_records(handle))]
    except StopIteration:
        handle.close()
        raise ReleaseError(f"{path.name} is empty") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        handle.close()
        raise ReleaseError(f"{path.name} is not a readable {'UTF-16' if encoding == 'utf-16' else 'UTF-8'} TSV ({exc})") from None

    def rows() -> Iterator[tuple[int, dict]]:
        number = 0
        with handle:
            try:
                for number, cells in enumerate(_records(handle), start=1):
                    if not any(c.strip() for c in cells):
                        continue
                    yield number, dict(zip(columns, cells + [""] * (len(columns) - len(cells)), strict=False))
            except (UnicodeDecodeError, csv.Error) as exc:
                raise ReleaseError(f"{path.name}: unreadable after row {number} ({exc})") from None

    return columns, rows()


def _records(lines: Iterator[str]) -> Iterator[list[str]]:
    """The cells of each record, as csv.reader(delimiter="\t") reads them. A line without a quote (or a NUL,
    which the csv module refuses) is split on tabs: the same cells, read more than twice as fast as the csv
    module's character-by-character parser reads a row of 77 KB of base64. A line with a quote is the csv
    module's (a quoted cell may hold tabs, or run over several lines)."""
    for line in lines:
        if '"' in line or "\0" in line:
            yield next(csv.reader(itertools.chain([line], lines), delimiter="\t"))
        elif line not in ("\n", "\r\n", "\r"):  # opened with newline="": a line keeps its end ("\n", "\r\n", "\r")
            cells = line.split("\t")  # which is cut off the last cell, not off a copy of the whole 77 KB line
            cells[-1] = cells[-1].rstrip("\r\n")
            yield cells
        else:
            yield []


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
