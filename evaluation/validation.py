"""Streamed validation of a prediction file (docs/formats.md, "Prediction file").

The file is read line by line from a binary stream, never whole, so a 200 MB upload costs a
line's worth of memory plus a set of (sample_id, mode) keys. Every problem names the line, the
field and what was expected; after ``max_errors`` problems the reading stops. No Django import:
the limits come in as arguments, so this can be tested and benchmarked alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from evaluation.converters.common import FOREIGN_ASKED, Locate, foreign_ids_message
from evaluation.metrics import Prediction, PredictionFormatError, parse_prediction
from evaluation.metrics.run_lines import RunLines
from evaluation.metrics.types import MODES

FILE = None  # the "line" of a problem with the file as a whole
MISSING_EXAMPLES = 20  # sample ids listed per mode in the coverage report
TOOL_NOTE_EXAMPLES = 20  # invalid tool calls listed (all are counted)
# (field under the step's tool: "name" or "args", message) for a call the scorer will count
# invalid by rule, or None; see tool_call_checker.
CallCheck = Callable[[str, Any], "tuple[str, str] | None"]
_BOM8 = b"\xef\xbb\xbf"
_BOM16 = (b"\xff\xfe", b"\xfe\xff")
_SKIP_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class LineError:
    line: int | None  # 1-based; None for the file as a whole
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        where = "file" if self.line is None else f"line {self.line}"
        return f"{where}, field '{self.field}': {self.message}" if self.field else f"{where}: {self.message}"


@dataclass(slots=True)
class ValidationReport:
    errors: list[LineError] = field(default_factory=list)
    truncated: bool = False  # stopped after max_errors
    n_lines: int = 0
    n_predictions: int = 0
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Tool calls that are well-formed but invalid for this benchmark (unknown tool, outside its
    # tool set, arguments failing the tool's schema): not errors (the scorer counts each call
    # invalid), listed so that the submitter sees why. `n_tool_notes` counts them all.
    tool_notes: list[LineError] = field(default_factory=list)
    n_tool_notes: int = 0
    # Lines whose ``run`` records the model ids / response ids the endpoint returned (metrics.run_lines).
    run_lines: RunLines = field(default_factory=RunLines)

    @property
    def ok(self) -> bool:
        return not self.errors

    def tool_notes_json(self) -> dict[str, Any]:
        return {"count": self.n_tool_notes, "examples": [n.as_dict() for n in self.tool_notes]} if self.n_tool_notes else {}


class _TooManyErrors(Exception):
    pass


def iter_lines(stream: IO[bytes], max_line_bytes: int) -> Iterator[tuple[int, bytes | None, bool]]:
    """Yield (line number, raw line without its newline or None when over the limit, ended with newline).

    Blank lines are yielded too (the caller skips them) so that numbering matches an editor's.
    """
    number = 0
    while True:
        raw = stream.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        ended = raw.endswith(b"\n")
        if len(raw) > max_line_bytes and not (ended and len(raw) == max_line_bytes + 1):
            # Over the limit: skip to the end of this line without holding it.
            while not ended:
                rest = stream.readline(_SKIP_CHUNK)
                if not rest:
                    break
                ended = rest.endswith(b"\n")
            yield number, None, ended
            continue
        yield number, raw.rstrip(b"\r\n") if ended else raw.rstrip(b"\r"), ended


def _decode_problem(raw: bytes) -> str | None:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 1].hex()
        return (f"not valid UTF-8 (byte 0x{bad} at column {exc.start + 1}); save the file as UTF-8 "
                "(it looks like another encoding such as Latin-1 or Windows-1252)")
    return None


def validate_predictions(
    stream: IO[bytes],
    *,
    sample_ids: Sequence[str],
    benchmark: str,
    max_line_bytes: int,
    max_errors: int,
    progress: Callable[[int, int], None] | None = None,
    check_call: CallCheck | None = None,
    locate: Locate | None = None,
) -> ValidationReport:
    """Check every line; return the problems (at most ``max_errors``) and the coverage report.

    ``sample_ids`` is the benchmark's samples in order (the coverage report lists missing ones
    in that order). ``progress(lines, bytes)`` is called every few thousand lines.
    ``check_call`` (``tool_call_checker``) notes the tool calls the scorer will count invalid.
    """
    report = ValidationReport()
    for _ in iter_validated(stream, report, sample_ids=sample_ids, benchmark=benchmark,
                            max_line_bytes=max_line_bytes, max_errors=max_errors, progress=progress,
                            check_call=check_call, locate=locate):
        pass
    return report


def tool_call_checker(
    resolve: Callable[[str], str | None] | None,
    validate: Callable[[str, Any], list[str]] | None,
    tools: frozenset[str] | None,
) -> CallCheck:
    """A call's name and arguments checked as the scorer checks them (metrics.md section 4: a
    call is invalid by rule when its tool is unknown or outside the benchmark's tool set, or
    its arguments fail the tool's schema, a declared tool's included). Memoised per file."""
    memo: dict[tuple[str, bytes], tuple[str, str] | None] = {}

    def check(name: str, args: Any) -> tuple[str, str] | None:
        try:
            key = (name, orjson.dumps(args, option=orjson.OPT_SORT_KEYS))
        except TypeError:
            return _check(name, args)
        if key not in memo:
            memo[key] = _check(name, args)
        return memo[key]

    def _check(name: str, args: Any) -> tuple[str, str] | None:
        canonical = resolve(name) if resolve is not None else None
        if resolve is not None and canonical is None:
            found = validate(name, args) if validate is not None else []
            return "name", found[0] if found else f"unknown tool {name!r}"
        if tools is not None and (canonical or name) not in tools:
            return "name", f"tool {name!r} is not in this benchmark's tool set"
        problems = validate(name, args) if validate is not None else []
        return ("args", f"{canonical or name}: {problems[0]}") if problems else None

    return check


def iter_validated(
    stream: IO[bytes],
    report: ValidationReport,
    *,
    sample_ids: Sequence[str],
    benchmark: str,
    max_line_bytes: int,
    max_errors: int,
    progress: Callable[[int, int], None] | None = None,
    check_call: CallCheck | None = None,
    locate: Locate | None = None,
) -> Iterator[Prediction]:
    """``validate_predictions`` as a generator: yields the parsed ``Prediction`` of every line
    that passes (so a consumer, the scorer, need not read and decode the file again) and fills
    ``report`` as it goes; the report is complete once the generator is exhausted. A line is
    yielded only after every check of its own; a later line may still fail the file.
    ``locate`` names the benchmark holding ids that are not this one's: their lines' errors are then
    one message naming it."""
    known = frozenset(sample_ids)
    first_line: dict[tuple[str, str], int] = {}
    unknown: list[str] = []

    def problem(line: int | None, field_name: str, message: str) -> None:
        report.errors.append(LineError(line, field_name, message))
        if len(report.errors) >= max_errors:
            report.truncated = True
            raise _TooManyErrors

    head = stream.read(4)
    stream.seek(0)
    try:
        if head.startswith(_BOM16):
            problem(1, "", "the file is UTF-16; save it as UTF-8 (without a byte-order mark)")
            return
        if head.startswith(_BOM8):
            problem(1, "", "the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 "
                           "without BOM")
            stream.seek(len(_BOM8))
        read_bytes = 0
        for number, raw, ended in iter_lines(stream, max_line_bytes):
            report.n_lines = number
            if raw is None:
                problem(number, "", f"the line is longer than the limit of {max_line_bytes:,} bytes")
                continue
            read_bytes += len(raw) + 1
            if progress is not None and number % 5000 == 0:
                progress(number, read_bytes)
            if not raw.strip():
                continue
            bad = _decode_problem(raw)
            if bad:
                problem(number, "", bad)
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                hint = ("; the file seems truncated (its last line has no newline)"
                        if not ended else "")
                problem(number, "", f"{_json_problem(exc)}{hint}")
                continue
            try:
                pred = parse_prediction(obj)
            except PredictionFormatError as exc:
                problem(number, exc.field, f"expected {exc.expected}, got {_shown(obj, exc.field)}")
                continue
            if pred.sample_id not in known:
                unknown.append(pred.sample_id)
                problem(number, "sample_id", f"{pred.sample_id!r} {_NOT_HERE} '{benchmark}'")
                continue
            key = (pred.sample_id, pred.mode)
            earlier = first_line.get(key)
            if earlier is not None:
                problem(number, "sample_id", f"duplicate: sample {pred.sample_id!r} in mode "
                                             f"{pred.mode!r} is already on line {earlier}")
                continue
            first_line[key] = number
            if check_call is not None and pred.steps:
                _note_tool_calls(report, number, pred, check_call)
            report.run_lines.see(obj)
            yield pred
    except _TooManyErrors:
        _name_foreign_ids(report, unknown, benchmark, locate)
        return
    _name_foreign_ids(report, unknown, benchmark, locate)
    if not first_line and not report.errors:
        report.errors.append(LineError(FILE, "", "the file is empty: expected one JSON "
                                                         "object per line (JSON Lines)"))
        return
    report.n_predictions = len(first_line)
    report.coverage = coverage_report(sample_ids, first_line.keys())


_NOT_HERE = "is not a sample of benchmark"


def _json_problem(exc: orjson.JSONDecodeError) -> str:
    """The decoder's complaint about one line, at its column only: the decoder reads the line alone, so
    its own "line 1 column 191" would contradict the file's line number the message is given under."""
    return f"not valid JSON at column {exc.colno}: {exc.msg}"


def _name_foreign_ids(report: ValidationReport, unknown: list[str], benchmark: str, locate: Locate | None) -> None:
    """Lines naming samples of another benchmark: one message naming it, in place of an error per line."""
    if not unknown or locate is None:
        return
    other = locate(unknown[:FOREIGN_ASKED])
    if other is None or other == benchmark:
        return
    message = foreign_ids_message(benchmark=benchmark, other=other, count=len(unknown), examples=unknown,
                                  truncated=report.truncated)
    report.errors[:] = [LineError(FILE, "", message), *(e for e in report.errors if _NOT_HERE not in e.message)]


def _note_tool_calls(report: ValidationReport, number: int, pred: Prediction, check_call: CallCheck) -> None:
    for index, step in enumerate(pred.steps):
        call = step.tool
        if call is None:
            continue
        found = check_call(call.name, call.args)
        if found is not None:
            report.n_tool_notes += 1
            if len(report.tool_notes) < TOOL_NOTE_EXAMPLES:
                report.tool_notes.append(LineError(number, f"steps[{index}].tool.{found[0]}",
                                                   f"{found[1]} (this call counts as invalid)"))


def _shown(obj: Any, field_name: str) -> str:
    """The offending value, read back from the object by its dotted/indexed field path."""
    value: Any = obj
    try:
        for part in field_name.replace("]", "").replace("[", ".").split("."):
            if part in ("", "(line)"):
                continue
            value = value[int(part)] if isinstance(value, list) else value.get(part)
    except (AttributeError, IndexError, ValueError, TypeError):
        return "something else"
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def coverage_report(sample_ids: Sequence[str], keys: Any) -> dict[str, dict[str, Any]]:
    """Per mode present in the file: predicted, missing, and the first missing sample ids."""
    by_mode: dict[str, set[str]] = {}
    for sid, mode in keys:
        by_mode.setdefault(mode, set()).add(sid)
    out: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        got = by_mode.get(mode)
        if got is None:
            continue
        missing = len(sample_ids) - len(got)
        examples = []
        if missing:
            for sid in sample_ids:
                if sid not in got:
                    examples.append(sid)
                    if len(examples) >= MISSING_EXAMPLES:
                        break
        out[mode] = {"predicted": len(got), "missing": missing, "missing_examples": examples}
    return out


def iter_prediction_objects(stream: IO[bytes], max_line_bytes: int) -> Iterator[Any]:
    """Decoded objects of an already validated file, for the scorer (no checks repeated)."""
    if stream.read(3) != _BOM8:
        stream.seek(0)
    for _number, raw, _ended in iter_lines(stream, max_line_bytes):
        if raw is not None and raw.strip():
            yield orjson.loads(raw)
