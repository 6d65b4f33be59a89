"""The history page's account of a revision: what changed since the previous save, in words.

A revision holds the annotation's whole payload (``editing.annotation_snapshot``). The page used to show
the JSON of two snapshots as a unified diff, which a person reads badly (and which is empty for a save
that changed nothing). Here each part is compared as the workbench shows it: the answer, the boxes with
their medium, the key steps and the calls written as the review page writes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from annotation.models import Revision, RevisionKind


@dataclass(frozen=True)
class Change:
    kind: str  # "add", "del" or "change"
    part: str  # what it is about: "Answer", "Box 2", "Key step 1", "Call 3"...
    text: str


@dataclass(frozen=True)
class HistoryRow:
    revision: Revision
    against: int | None  # the version compared with; None for the first save
    changes: list[Change]


def history_rows(revisions: Sequence[Revision]) -> list[HistoryRow]:
    """Each revision (newest first, as given) with its changes against the save before it; a kept draft
    (a stale edit) against the version it would have replaced. No query: the list holds every snapshot."""
    ordered = sorted(revisions, key=lambda r: r.pk)
    saved: list[Revision] = [r for r in ordered if r.kind != RevisionKind.CONFLICT]
    rows = []
    for revision in revisions:
        earlier = [r for r in saved if r.pk < revision.pk]
        previous = earlier[-1] if earlier else None
        if revision.kind == RevisionKind.CONFLICT:
            previous = next((r for r in reversed(earlier) if r.version == revision.version), previous)
        rows.append(HistoryRow(revision, previous.version if previous else None,
                               snapshot_changes(previous.snapshot if previous else {}, revision.snapshot)))
    return rows


def snapshot_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for key, part in (("question", "Question"), ("answer", "Answer"), ("answer_type", "Answer type")):
        a, b = old.get(key) or "", new.get(key) or ""
        if a != b:
            out.append(Change("change" if a and b else "add" if b else "del", part,
                              f"{_quote(a)} → {_quote(b)}" if a and b else _quote(b or a)))
    out += _options(old.get("options") or {}, new.get("options") or {})
    a, b = _transform(old.get("transform") or []), _transform(new.get("transform") or [])
    if a != b:
        out.append(Change("change", "Recovery transform", f"{a} → {b}"))
    out += _sequence("Box", [_box(r) for r in old.get("regions") or []], [_box(r) for r in new.get("regions") or []])
    out += _sequence("Key step", [_step(s) for s in old.get("key_steps") or []],
                     [_step(s) for s in new.get("key_steps") or []])
    out += _sequence("Call", [_call(c) for c in old.get("toolchain") or []],
                     [_call(c) for c in new.get("toolchain") or []])
    return out


def _quote(text: str) -> str:
    return f"“{text}”"


def _options(old: dict[str, str], new: dict[str, str]) -> list[Change]:
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if a is None:
            out.append(Change("add", f"Option {key}", _quote(str(b))))
        elif b is None:
            out.append(Change("del", f"Option {key}", _quote(a)))
        else:
            out.append(Change("change", f"Option {key}", f"{_quote(a)} → {_quote(b)}"))
    return out


def _args(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return json.dumps(args, ensure_ascii=False)


def _transform(ops: Iterable[Any]) -> str:
    words = []
    for op in ops:
        if isinstance(op, dict):
            name = op.get("op") or op.get("name") or op.get("tool") or "step"
            rest = {k: v for k, v in op.items() if k not in ("op", "name", "tool")}
            words.append(f"{name}({_args(rest.get('args', rest))})")
        else:
            words.append(str(op))
    return ", ".join(words) or "none"


def _box(region: dict[str, Any]) -> str:
    label = f" “{region['label']}”" if region.get("label") else ""
    return f"{region.get('image', 'img0')} {region.get('box')}{label}"


def _step(step: dict[str, Any]) -> str:
    marks = []
    if step.get("origin") == "llm":
        marks.append("LLM draft, verified" if step.get("verified") else "LLM draft, not verified")
    if step.get("note"):
        marks.append(f"note “{step['note']}”")
    return _quote(step.get("text", "")) + (f" ({'; '.join(marks)})" if marks else "")


def _call(call: dict[str, Any]) -> str:
    if "args" not in call:
        text = f"{call.get('tool')} (name only)"
    else:
        source = call.get("input") or "img0"
        args = _args(call.get("args") or {})
        text = f"{call.get('output') or '?'} = {call.get('tool')}({source}{', ' + args if args else ''})"
    verdict = call.get("verdict") or ""
    if verdict and verdict != "unchecked":
        text += f", marked {verdict}"
    if call.get("note"):
        text += f", note “{call['note']}”"
    return text


def _sequence(part: str, old: list[str], new: list[str]) -> list[Change]:
    """Items of a list matched in order (an inserted step does not change every later one)."""
    out = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0  # items edited in place, then the rest
        out += [Change("change", f"{part} {j1 + k + 1}", f"{old[i1 + k]} → {new[j1 + k]}") for k in range(paired)]
        out += [Change("del", f"{part} {i + 1}", old[i]) for i in range(i1 + paired, i2)]
        out += [Change("add", f"{part} {j + 1}", new[j]) for j in range(j1 + paired, j2)]
    return out
