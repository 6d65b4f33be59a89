"""VLMEvalKit result files -> our predictions (mode ``text``).

VLMEvalKit writes ``<model>_<dataset>.xlsx`` (or ``.tsv``, ``.csv``, ``.json``): the dataset's
columns without ``image``, plus ``prediction`` (and, after a judge stage, ``extract``, ``score``,
``log_*``). One row per sample. ``index`` names the sample: a benchmark imported from a
VLMEvalKit TSV takes its uids from ``index``; one whose uid is another column (VTC-Bench's
``id``) is matched on that column when it matches the benchmark's uids at least as well (decided
once, on the first rows, for the whole file). A benchmark imported from several TSVs has uids
``<dataset>:<index>``: VLMEvalKit's result file of one of them (``<model>_<dataset>.xlsx``) is
matched by its file name and index. ``prediction`` becomes
``answer``, as written (the scorer extracts the answer itself). A judge stage's ``extract`` column
(MMReason's ``*_extract.xlsx``) is their extracted answer: when a row has one, it is the ``answer``
and the prediction its ``response`` (the ``mmreason`` profile's exact match reads it; metrics.md
section 13). Other judge columns (``score``, ``log_*``) are ignored. A table with an ``extra_records``
column comes from VLMEvalKit's agent mode: every row is mode ``adaptive``, its steps read from the
cell (``vlmevalkit_agent``); such a table may come in a zip with the tool images it names.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from itertools import chain, islice
from typing import IO, Any

import orjson

from .common import FILE, HEADER, Loc, Sink, WrongKind, norm_id, text_of
from .sniff import HEAD_BYTES, TABLE_SUFFIXES, sniff
from .vlmevalkit_agent import ImageBytes, agent_fields, parse_cell
from .zipread import EntryError, open_zip, read_entry

ID_COLUMNS = ("index", "id")  # the sample's uid: index, unless id matches the benchmark better
DECIDE_ROWS = 500  # rows read before choosing the id column
EXTRA = "extra_records"  # agent mode's column (vlmevalkit_agent.py)
TABLE_MAX_BYTES = 512 << 20  # the result table inside an agent-mode zip, unpacked
IMAGE_MAX_BYTES = 64 << 20  # one tool image in it


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    if kind == "vlmevalkit_zip":
        _convert_zip(stream, sink)
        return
    _convert(stream, sink, filename=filename, kind=kind, image_bytes=None)


def _convert_zip(stream: IO[bytes], sink: Sink) -> None:
    """An agent-mode table with the tool images VLMEvalKit saved (``<stamp>_<uid>/img_NNNN.<ext>``)."""
    with open_zip(stream) as archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        tables = [n for n in names if n.lower().endswith(TABLE_SUFFIXES) and "/img_" not in f"/{n}"]
        if len(tables) != 1:
            raise WrongKind(f"A zip of VLMEvalKit agent results holds one result table beside the images "
                            f"(tables found: {', '.join(tables[:3]) or 'none'}).")
        exact = set(names)

        def image_bytes(path: str) -> bytes | None:
            # The cell names the image relative to temp/<dataset>/<model>/: the entry ending so.
            path = path.lstrip("./")
            name = path if path in exact else next((n for n in names if n.endswith("/" + path)), None)
            if name is None:
                return None
            try:
                return read_entry(archive, name, max_bytes=IMAGE_MAX_BYTES)
            except EntryError as exc:
                sink.report.warnings.append(f"{name}: {exc}; its call's image is not read")
                return None

        try:
            table = read_entry(archive, tables[0], max_bytes=TABLE_MAX_BYTES)
        except EntryError as exc:
            raise WrongKind(f"{tables[0]}: {exc}.") from exc
        kind = sniff(table[:HEAD_BYTES], tables[0]).name
        _convert(io.BytesIO(table), sink, filename=tables[0], kind=kind, image_bytes=image_bytes)


def _convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str, image_bytes: ImageBytes | None) -> None:
    if kind == "xlsx":
        rows = _xlsx_rows(stream)
    elif kind == "vlmevalkit_json":
        rows = _json_rows(stream, sink)
    else:
        rows = _text_rows(stream, sink)
    first = next(rows, None)
    if first is None:
        raise WrongKind("The table is empty: no header row, no rows.")
    loc, values = first
    header = [str(v).strip() if v is not None else "" for v in values]
    lower = [h.lower() for h in header]
    missing = [c for c in ("index", "prediction") if c not in lower]
    if missing:
        shown = ", ".join(h for h in header if h)[:200]
        raise WrongKind(f"{loc.where}: the table has no {' and no '.join(repr(m) for m in missing)} "
                        f"column, so it is not a VLMEvalKit result file (columns found: {shown}).")
    cols = {name: lower.index(name) for name in ("prediction", "extract", EXTRA, *ID_COLUMNS) if name in lower}
    mode = "adaptive" if EXTRA in cols else "text"  # agent mode: every row of the run had the tools
    data = ((loc, {name: (values[i] if i < len(values) else None) for name, i in cols.items()})
            for loc, values in rows if not all(v is None or v == "" for v in values))  # blank rows skipped
    prefix = dataset_prefix(filename, sink.known)
    if prefix is not None:
        data = ((loc, _prefixed(cells, prefix, sink.known)) for loc, cells in data)  # type: ignore[arg-type]  # known is set
    head = list(islice(data, DECIDE_ROWS))
    id_column = _id_column(head, sink)
    for loc, cells in chain(head, data):
        sink.item()
        sid = sink.sample_id(loc, [(id_column, cells.get(id_column))])
        if sid is None:
            continue
        pred: dict[str, Any] = {"sample_id": sid, "mode": mode, "answer": text_of(cells["prediction"])}
        extract = text_of(cells.get("extract"))
        # A judge stage's extracted answer (MMReason's *_extract.xlsx): the answer their exact match reads.
        if extract.strip() and extract != pred["answer"]:
            pred = {**pred, "answer": extract, "response": pred["answer"]}
        if mode == "adaptive":
            records, problem = parse_cell(cells.get(EXTRA))
            if problem is not None:
                sink.error(loc, EXTRA, problem)
                continue
            if records is not None:
                fields = agent_fields(records, loc, sink, sid=sid, image_bytes=image_bytes)
                if fields is None:
                    continue
                pred.update(fields)
        sink.emit(loc, pred)


def dataset_prefix(filename: str, known: frozenset[str] | None) -> str | None:
    """The dataset a result file is of, when the benchmark was imported from several VLMEvalKit TSVs (its
    uids are "<dataset>:<index>", annotation/releases/vlmevalkit.py): VLMEvalKit names the file
    ``<model>_<dataset>[_<stage>].xlsx``, so the longest dataset named in the file's name after a ``_``."""
    if not known or not filename:
        return None
    stem = filename.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    datasets = {uid.split(":", 1)[0] for uid in known if ":" in uid}
    named = [d for d in datasets if f"_{d}_" in f"{stem}_" or stem == d or stem.startswith(f"{d}_")]
    return max(named, key=len) if named else None


def _prefixed(cells: dict[str, Any], prefix: str, known: frozenset[str]) -> dict[str, Any]:
    """A row's ids as the benchmark's uids: ``<dataset>:<index>`` where the bare index is not one."""
    for column in ID_COLUMNS:
        value = norm_id(cells.get(column))
        if value is not None and value not in known:
            cells[column] = f"{prefix}:{value}"
    return cells


def _id_column(head: list[tuple[Loc, dict[str, Any]]], sink: Sink) -> str:
    """The one column that names the samples, for the whole file: the one whose first rows match the
    benchmark's uids most often, ``id`` on a tie (VLMEvalKit's own datasets have no ``id`` column;
    VTC-Bench's has, and its ``index`` is a permutation that may look like ids). Deciding per row
    could pair a row's ``index`` with another sample whose ``id`` happens to be that number."""
    present = [c for c in ID_COLUMNS if head and c in head[0][1]]
    if sink.known is None or len(present) < 2:
        return present[0] if present else ID_COLUMNS[0]
    hits = {c: sum(norm_id(cells.get(c)) in sink.known for _loc, cells in head) for c in present}
    return max(present, key=lambda c: (hits[c], c == "id"))


def _xlsx_rows(stream: IO[bytes]) -> Iterator[tuple[Loc, tuple[Any, ...]]]:
    from openpyxl import load_workbook  # only needed for .xlsx

    try:
        book = load_workbook(stream, read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, KeyError for a zip that is not a workbook, ...
        raise WrongKind(f"The file could not be read as an Excel workbook ({type(exc).__name__}: {exc}).") from exc
    try:
        sheet = book.worksheets[0]
        for number, values in enumerate(sheet.iter_rows(values_only=True), start=HEADER):
            yield Loc.of("row", number), values
    finally:
        book.close()


def _text_rows(stream: IO[bytes], sink: Sink) -> Iterator[tuple[Loc, list[str]]]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
    first = text.readline()
    text.seek(0)
    delimiter = "\t" if "\t" in first else ","
    # A process-wide setting: only ever raised (the benchmark readers raise it for base64 images).
    csv.field_size_limit(max(csv.field_size_limit(), sink.max_line_bytes))
    reader = csv.reader(text, delimiter=delimiter)
    try:
        while True:
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                sink.error(Loc.of("line", reader.line_num), "", f"not a valid table row: {exc}")
                continue
            # line_num is the line where the row ends; a quoted cell may span lines.
            yield Loc.of("line", reader.line_num), values
    except UnicodeDecodeError as exc:
        sink.error(FILE, "", f"not valid UTF-8 ({exc.reason} at byte {exc.start}); save the table as UTF-8")
    finally:
        text.detach()


def _json_rows(stream: IO[bytes], sink: Sink) -> Iterator[tuple[Loc, list[Any]]]:
    """A list of row objects (``orient='records'``) or pandas' default ``{column: {row: value}}``."""
    try:
        data = orjson.loads(stream.read())
    except orjson.JSONDecodeError as exc:
        raise WrongKind(f"The file is not valid JSON ({exc}).") from exc
    if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):
        columns = list(data)
        keys = list(next(iter(data.values())).keys()) if data else []
        yield FILE, columns
        for n, key in enumerate(keys, start=1):
            yield Loc(n, f"row {key!s}"), [data[c].get(key) for c in columns]
        return
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise WrongKind("The JSON is neither a list of rows nor a table of columns.")
    columns = list(dict.fromkeys(k for r in data for k in r))
    yield FILE, columns
    for n, row in enumerate(data, start=1):
        yield Loc.of("item", n), [row.get(c) for c in columns]
