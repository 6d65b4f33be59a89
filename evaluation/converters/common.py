"""What every converter shares: where a problem is, the report, and the sink that writes our lines.

A converter reads an author's file and hands each prediction, as an object of our prediction
format (docs/formats.md), to a ``Sink`` with its location in the source file ("row 7",
"line 3", "item 12"). The sink maps ids to the benchmark's sample ids, drops duplicates with
an error, keeps each line under the line limit and writes JSON Lines. Problems name the place
in the *author's* file and the field there, so the person can find them in the file they have.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

HEADER = 1  # the "row" of a problem with a table's header


@dataclass(frozen=True, slots=True)
class Loc:
    """A place in the source file: ``number`` for sorting and tables, ``where`` for people."""

    number: int | None
    where: str

    @classmethod
    def of(cls, unit: str, number: int) -> Loc:
        return cls(number, f"{unit} {number}")


FILE = Loc(None, "file")


@dataclass(frozen=True, slots=True)
class ConversionError:
    line: int | None
    where: str
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "where": self.where, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        return f"{self.where}, field '{self.field}': {self.message}" if self.field else f"{self.where}: {self.message}"


@dataclass(slots=True)
class ConversionReport:
    errors: list[ConversionError] = field(default_factory=list)
    truncated: bool = False  # stopped after max_errors
    n_items: int = 0  # rows / lines / items read
    n_predictions: int = 0  # lines written
    n_dropped_responses: int = 0  # lines whose raw response was left out to stay under the line limit
    # What was read differently from the file as written, without losing the file: "line 9: item 'x' is
    # also on line 4; the last one is kept, as VTC-Bench's evaluation keeps it".
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


class TooManyErrors(Exception):
    pass


@dataclass(frozen=True, slots=True)
class BenchmarkContext:
    """What a few converters need to know of the benchmark beyond its uids, read from the database by
    the caller (``evaluation.selectors.conversion_context``) so that this library stays Django-free.

    - ``splits``: each split's uids in the order of our export of that split (lmms-eval names a row by
      its position in the split it ran on);
    - ``gold``: each sample's answer, only to check that such positions pair the right rows (a target
      that differs from ours means the orders differ); never written to the converted file;
    - ``media``: each sample's count of media, so that a call's output is numbered after them
      (``img<n>``...), as our harness numbers its calls' outputs.
    """

    splits: dict[str, list[str]] = field(default_factory=dict)
    gold: dict[str, str] = field(default_factory=dict)
    media: dict[str, int] = field(default_factory=dict)

    def media_count(self, uid: str) -> int:
        return self.media.get(uid, 1)


# The benchmark (its slug) that holds most of the given sample ids, when another one does; from the
# database (annotation.selectors.benchmark_holding), passed in so that this library stays Django-free.
Locate = Callable[[Sequence[str]], "str | None"]
FOREIGN_ASKED = 50  # unknown ids looked up
NOT_HERE = "is not a sample of this benchmark"


def foreign_ids_message(*, benchmark: str, other: str, count: int, examples: Sequence[str], truncated: bool) -> str:
    """One message for a file whose sample ids belong to another benchmark (instead of a line each)."""
    shown = ", ".join(repr(e) for e in examples[:3])
    lines = f"at least {count} lines" if truncated else f"{count} line{'s' if count != 1 else ''}"
    return (f"{lines} name samples of the benchmark '{other}', not of '{benchmark}' ({shown}...): this file was "
            f"made for '{other}'. Submit it there (submit {other} FILE ...), or check that you chose the right benchmark.")


class WrongKind(Exception):
    """The file is not of the chosen format; the message says what it looks like."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def norm_id(value: Any) -> str | None:
    """An id as text: ``12``, ``12.0`` (a spreadsheet's number) and ``" 12 "`` are all ``"12"``."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return str(int(value)) if value.is_integer() else repr(value)
    text = str(value).strip()
    return text or None


def text_of(value: Any) -> str:
    """A cell or JSON value as answer text; empty for missing (None, NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # a spreadsheet stores the answer 3 as 3.0
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


class Sink:
    """Receives converted predictions and writes them as JSON Lines to ``out``."""

    def __init__(self, out: IO[bytes], report: ConversionReport, *, sample_ids: Sequence[str] | None,
                 resolve_tool: Callable[[str], str | None] | None, max_errors: int, max_line_bytes: int,
                 progress: Callable[[int], None] | None = None, context: BenchmarkContext | None = None,
                 mode: str | None = None) -> None:
        self.context = context or BenchmarkContext()
        self.mode = mode  # the mode the uploader named, for a file that records none (an Inspect log)
        self.unknown: list[str] = []  # each id not in the benchmark
        self.out = out
        self.report = report
        self.sample_ids = sample_ids
        self.known = frozenset(sample_ids) if sample_ids is not None else None
        self.resolve_tool = resolve_tool
        self.max_errors = max_errors
        self.max_line_bytes = max_line_bytes
        self.progress = progress
        self.first: dict[tuple[str, str], str] = {}

    def error(self, loc: Loc, field_name: str, message: str) -> None:
        self.report.errors.append(ConversionError(loc.number, loc.where, field_name, message))
        if len(self.report.errors) >= self.max_errors:
            self.report.truncated = True
            raise TooManyErrors

    def item(self) -> None:
        self.report.n_items += 1
        if self.progress is not None and self.report.n_items % 1000 == 0:
            self.progress(self.report.n_items)

    def tool_name(self, raw: str) -> str:
        """The registry's canonical name for a tool (through its aliases), else the name as written."""
        raw = raw.strip()
        if self.resolve_tool is not None:
            return self.resolve_tool(raw) or raw
        return raw

    def sample_id(self, loc: Loc, candidates: Sequence[tuple[str, Any]]) -> str | None:
        """The first candidate (field, value) that names a sample of the benchmark; else an error
        on the first candidate present. Without a benchmark (tests, dry runs), the first present."""
        present = [(f, v) for f, v in ((f, norm_id(v)) for f, v in candidates) if v is not None]
        if not present:
            self.error(loc, candidates[0][0], "missing: expected the id of a sample")
            return None
        if self.known is None:
            return present[0][1]
        for _f, value in present:
            if value in self.known:
                return value
        f, value = present[0]
        examples = ", ".join(repr(s) for s in list(self.sample_ids or ())[:3])
        self.unknown.append(value)
        self.error(loc, f, f"{value!r} {NOT_HERE} (its samples are named like {examples})")
        return None

    def name_foreign_ids(self, *, benchmark: str, locate: Locate | None) -> None:
        """When the ids not in the benchmark belong to another one, their errors become one message naming it."""
        if not self.unknown or locate is None:
            return
        other = locate(self.unknown[:FOREIGN_ASKED])
        if other is None or other == benchmark:
            return
        rest = [e for e in self.report.errors if NOT_HERE not in e.message]
        message = foreign_ids_message(benchmark=benchmark, other=other, count=len(self.unknown),
                                      examples=self.unknown, truncated=self.report.truncated)
        self.report.errors[:] = [ConversionError(None, FILE.where, "", message), *rest]

    def emit(self, loc: Loc, obj: dict[str, Any]) -> None:
        key = (obj["sample_id"], obj["mode"])
        earlier = self.first.get(key)
        if earlier is not None:
            self.error(loc, "", f"duplicate: sample {key[0]!r} in mode {key[1]!r} is already on {earlier}")
            return
        line = orjson.dumps(obj)
        if len(line) >= self.max_line_bytes and obj.get("response"):
            # The raw response only matters when the answer has no <answer> tags; a line over the
            # limit would fail the whole file, so it goes (counted in the report).
            obj = {k: v for k, v in obj.items() if k != "response"}
            line = orjson.dumps(obj)
            self.report.n_dropped_responses += 1
        if len(line) >= self.max_line_bytes:
            self.error(loc, "", f"the converted prediction is {len(line):,} bytes, over the line limit of "
                                f"{self.max_line_bytes:,} bytes (too many or too long steps)")
            return
        self.first[key] = loc.where
        self.out.write(line + b"\n")
        self.report.n_predictions += 1


def json_objects(stream: IO[bytes], sink: Sink) -> Iterator[tuple[Loc, dict[str, Any]]]:
    """The objects of a JSON Lines file with their lines; blank lines skipped, anything else an error on its line."""
    for number, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        loc = Loc.of("line", number)
        sink.item()
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            sink.error(loc, "", f"not valid JSON: {exc}")
            continue
        if not isinstance(obj, dict):
            sink.error(loc, "", f"expected a JSON object, got {type(obj).__name__}")
            continue
        yield loc, obj
