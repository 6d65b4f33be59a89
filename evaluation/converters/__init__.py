"""Prediction files in the authors' shapes, converted to ours (docs/formats.md, "Converters").

Plain Python, no Django: ``convert`` reads an author's file from a binary stream and writes our
prediction format (JSON Lines) to another, naming the row or line and the field of anything it
cannot read. Tool names go through a resolver passed in (the registry's aliases), sample ids are
checked against the benchmark's when given. A file of another kind than the chosen format gets
one error saying what it looks like (``sniff``).

- ``vlmevalkit``: VLMEvalKit result tables (.xlsx, .tsv, .csv, .json): index, prediction; mode text.
- ``vtcbench``: VTC-Bench agent ``results_*.jsonl``: item_id, agent_answer, conversation; mode adaptive;
  or a zip of it with the ``response_list_<id>.json`` files their harness writes beside it.
- ``agentx``: Agent-X's output list: {id: {reasoning_steps, final_answer}}; mode adaptive.
- ``tirbench``: TIR-Bench's response file {"0": reply, ...} (or tasks with model_response, extracted_answer); mode text.
- ``vstar``: V*'s eval_result.json {subtask: [{image, option_chosen, ...}]}; mode adaptive.
- ``inspect``: an Inspect AI ``.eval`` log (a zip: header.json, samples/<id>_epoch_<n>.json); the mode from
  the task's arguments or each sample's metadata (interop.md).
- ``lmms-eval``: lmms-eval's ``--log_samples`` JSON Lines; ``doc_id`` by position in a split (interop.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import IO

from . import agentx, inspect_log, lmms_eval, tirbench, vlmevalkit, vstar, vtcbench
from .common import FILE, BenchmarkContext, ConversionError, ConversionReport, Locate, Sink, TooManyErrors, WrongKind
from .sniff import HEAD_BYTES, LABELS, Kind, sniff, sniff_zip, wrong_kind_message, zip_names

FORMATS = ("jsonl", "vlmevalkit", "vtcbench", "agentx", "tirbench", "vstar", "inspect", "lmms-eval")
CONVERTED = ("vlmevalkit", "vtcbench", "agentx", "tirbench", "vstar", "inspect", "lmms-eval")
FORMAT_CHOICES = (
    ("jsonl", "Our format (JSON Lines)"),
    ("vlmevalkit", "VLMEvalKit result file (.xlsx, .tsv, .csv, .json)"),
    ("vtcbench", "VTC-Bench agent results (results_*.jsonl, or a zip of it with the response_list_<id>.json files)"),
    ("agentx", "Agent-X output list (.json)"),
    ("tirbench", "TIR-Bench response file ({\"0\": response, ...})"),
    ("vstar", "V* Bench eval_result.json"),
    ("inspect", "Inspect AI log (.eval)"),
    ("lmms-eval", "lmms-eval samples (<date>_samples_<task>.jsonl)"),
)
_READERS = {"vlmevalkit": vlmevalkit.convert, "vtcbench": vtcbench.convert, "agentx": agentx.convert,
            "tirbench": tirbench.convert, "vstar": vstar.convert, "inspect": inspect_log.convert,
            "lmms-eval": lmms_eval.convert}

__all__ = ["CONVERTED", "FORMATS", "FORMAT_CHOICES", "LABELS", "BenchmarkContext", "ConversionError", "ConversionReport", "Kind",
           "check_kind", "convert", "sniff"]


def check_kind(stream: IO[bytes], *, fmt: str, filename: str = "") -> tuple[Kind, str | None]:
    """Sniff the stream's head (then rewind): its kind and, when it does not fit ``fmt``, the message."""
    head = stream.read(HEAD_BYTES)
    stream.seek(0)
    kind = sniff(head, filename)
    if kind.name == "zip":  # what it holds is listed at its end
        kind = sniff_zip(zip_names(stream))
        stream.seek(0)
    return kind, wrong_kind_message(kind, fmt)


def convert(
    stream: IO[bytes],
    out: IO[bytes],
    *,
    fmt: str,
    filename: str = "",
    sample_ids: Sequence[str] | None = None,
    resolve_tool: Callable[[str], str | None] | None = None,
    max_errors: int = 50,
    max_line_bytes: int = 1 << 20,
    progress: Callable[[int], None] | None = None,
    benchmark: str = "",
    locate: Locate | None = None,
    context: BenchmarkContext | None = None,
) -> ConversionReport:
    """Convert ``stream`` (an author's file, format ``fmt``) into our JSON Lines on ``out``.

    The report lists the problems (first ``max_errors``); ``out`` is only usable when it is ok.
    ``locate`` names the benchmark that holds ids not in ``sample_ids``: their errors are then one
    message naming it (``benchmark`` is this one's slug). ``context`` is what some formats need of the
    benchmark beyond its uids (split orders, media counts: ``BenchmarkContext``).
    """
    if fmt not in _READERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(_READERS)}")
    report = ConversionReport()
    kind, wrong = check_kind(stream, fmt=fmt, filename=filename)
    if wrong:
        report.errors.append(ConversionError(None, FILE.where, "", wrong))
        return report
    sink = Sink(out, report, sample_ids=sample_ids, resolve_tool=resolve_tool, max_errors=max_errors,
                max_line_bytes=max_line_bytes, progress=progress, context=context)
    try:
        _READERS[fmt](stream, sink, filename=filename, kind=kind.name)
    except WrongKind as exc:
        report.errors.append(ConversionError(None, FILE.where, "", exc.message))
    except TooManyErrors:
        pass
    sink.name_foreign_ids(benchmark=benchmark, locate=locate)
    if report.ok and not report.n_predictions:
        report.errors.append(ConversionError(None, FILE.where, "", f"no predictions found in {LABELS[fmt]}"))
    return report
