"""lmms-eval's ``--log_samples`` file (``<date>_samples_<task>.jsonl``) -> our predictions (interop.md).

One JSON object per document (``lmms_eval/evaluator.py``): ``doc_id`` (the document's position in the
split the task ran on, not a dataset id), ``target``, ``resps`` (the raw replies; left out when equal
to ``filtered_resps``), ``filtered_resps`` (what its scorer read), ``token_counts`` (``input_tokens``,
``output_tokens``, ``reasoning_tokens`` per request), ``doc_hash``, ``input_media`` and the task's
metric keys.

``doc_id`` is mapped to our uid by position in one of the benchmark's splits, in the order of our
export of that split (which must be the order of the release the task reads): the split whose golds
every ``target`` matches. When none does, the file is refused with one message naming the first line
whose target differs from our gold at that position (the orders differ, or it is another benchmark).

- ``filtered_resps[0]`` -> ``answer``; ``resps[0]`` (else the filtered one) -> ``response``;
- ``token_counts[0]`` -> ``usage`` (both counts, or none); ``reasoning_tokens`` -> ``run``;
- an agentic run's reply is a JSON object with ``agentic_rounds``: mode ``adaptive``, ``turns`` its
  rounds, their count of tool calls in ``run.tool_call_count`` (lmms-eval keeps no call itself, so
  the tool figures are not available); otherwise mode ``text``;
- the task's metric values -> ``run.external_verdict``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import IO, Any

import orjson

from .common import Loc, Sink, WrongKind, json_objects, text_of

KNOWN = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "token_counts", "doc_hash",
                   "input_media"})


def convert(stream: IO[bytes], sink: Sink, *, filename: str, kind: str) -> None:
    rows: list[tuple[Loc, dict[str, Any]]] = []
    for loc, obj in json_objects(stream, sink):
        doc_id = obj.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
            sink.error(loc, "doc_id", f"expected the document's position (a whole number from 0), got {doc_id!r}")
            continue
        rows.append((loc, obj))
    if not rows or sink.report.errors:
        return
    order = _split_order(rows, sink)
    if order is None:
        return
    for loc, obj in rows:
        uid = order[obj["doc_id"]]
        pred = _prediction(uid, loc, obj, sink)
        if pred is not None:
            sink.emit(loc, pred)


def same_answer(target: Any, gold: str) -> bool:
    """Does lmms-eval's ``target`` say our gold? Text compared trimmed and case-folded, numbers as numbers,
    a list when any of its items does."""
    if isinstance(target, list):
        return any(same_answer(t, gold) for t in target)
    theirs = text_of(target).strip().casefold()
    ours = gold.strip().casefold()
    if theirs == ours:
        return True
    try:
        a, b = float(theirs), float(ours)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _split_order(rows: list[tuple[Loc, dict[str, Any]]], sink: Sink) -> Sequence[str] | None:
    """The split whose golds every target matches (one the file covers whole before one it covers in part);
    else None, with one error naming the first differing line of the split that matched most."""
    if not sink.context.splits:
        raise WrongKind("An lmms-eval samples file names documents by position: it can only be read against a "
                        "benchmark's splits.")
    fits: list[tuple[str, Sequence[str]]] = []
    best: tuple[int, str, tuple[Loc, str, Any, str, int]] | None = None
    for name, order in sink.context.splits.items():
        matched, first = 0, None
        for loc, obj in rows:
            doc_id = obj["doc_id"]
            if doc_id >= len(order):
                first = first or (loc, "doc_id", doc_id, f"it has {len(order)} samples", doc_id)
                continue
            gold = sink.context.gold.get(order[doc_id])
            if gold is None or "target" not in obj or same_answer(obj["target"], gold):
                matched += 1
            elif first is None:
                first = (loc, "target", obj["target"], order[doc_id], doc_id)
        if first is None:
            fits.append((name, order))
        elif best is None or matched > best[0]:
            best = (matched, name, first)
    if fits:
        name, order = next(((n, o) for n, o in fits if len(o) == len(rows)), fits[0])
        if len(fits) > 1:
            sink.report.warnings.append(f"the targets fit the splits {', '.join(repr(n) for n, _o in fits)}; the "
                                        f"documents are read as the '{name}' split's (the one the file covers whole, "
                                        "else the first)")
        return order
    assert best is not None
    _matched, name, (loc, field_name, value, detail, doc_id) = best
    if field_name == "doc_id":
        message = (f"document {value} is past the end of the '{name}' split ({detail}): the file was made on "
                   "another split or another benchmark. Nothing was read.")
    else:
        message = (f"the target {text_of(value)[:80]!r} differs from our gold for sample {detail!r}, which is "
                   f"document {doc_id} of the '{name}' split in our export order: lmms-eval names documents by "
                   "position, so the task's split must list the samples in the order of our export "
                   "(/b/<slug>/data/). Nothing was read.")
    sink.error(loc, field_name, message)
    return None


def _first_text(value: Any) -> str | None:
    """The first reply of a per-request list (``[["reply"]]`` or ``["reply"]``), as text."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    return None if value is None else text_of(value)


def _prediction(uid: str, loc: Loc, obj: dict[str, Any], sink: Sink) -> dict[str, Any] | None:
    filtered = _first_text(obj.get("filtered_resps"))
    raw = _first_text(obj["resps"]) if "resps" in obj else filtered
    if filtered is None and raw is None:
        sink.error(loc, "filtered_resps", "missing: expected the model's reply")
        return None
    pred: dict[str, Any] = {"sample_id": uid, "mode": "text", "answer": filtered if filtered is not None else raw}
    record: dict[str, Any] = {"source": "lmms_eval"}
    rounds = _agentic_rounds(raw)
    if rounds is not None:
        pred["mode"] = "adaptive"
        pred["turns"] = len(rounds)
        record["tool_call_count"] = sum(int(r.get("tool_calls") or 0) for r in rounds if isinstance(r, dict))
    if raw:
        pred["response"] = raw
    counts = obj.get("token_counts")
    first = counts[0] if isinstance(counts, list) and counts and isinstance(counts[0], dict) else None
    if first is not None:
        if isinstance(first.get("input_tokens"), int) and isinstance(first.get("output_tokens"), int):
            pred["usage"] = {"input_tokens": first["input_tokens"], "output_tokens": first["output_tokens"]}
        if isinstance(first.get("reasoning_tokens"), int):
            record["reasoning_tokens"] = first["reasoning_tokens"]
    verdicts = {k: v for k, v in obj.items() if k not in KNOWN and isinstance(v, (int, float, str, bool))}
    if verdicts:
        record["external_verdict"] = verdicts
    pred["run"] = record
    return pred


def _agentic_rounds(raw: str | None) -> list[Any] | None:
    if not raw or "agentic_rounds" not in raw:
        return None
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    rounds = parsed.get("agentic_rounds") if isinstance(parsed, dict) else None
    return rounds if isinstance(rounds, list) else None
