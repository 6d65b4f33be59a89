"""A row's digest: sha256 over its canonical per-sample records (spec runs.md, "The verified tier").

Plain Python (no Django): the server computes the digests from the stored ``PredictionResult`` rows when
scoring finishes, ``manage.py verify_row`` recomputes them from the same rows, and
``scripts/verify_row.py`` (standard library only, a copy of the functions marked below; a test holds
the two equal) recomputes them from the records export. docs/runs.md, "The verified tier".

The canonical record of one (sample, mode) is the fixed list ``CANONICAL_FIELDS``: the sample's uid
and what the scorer decided about the line. ``latency_ms`` is left out: it is the file's timing, not
a decision of the scorer, and no figure depends on it. Serialisation: JSON with sorted keys, no
spaces, ASCII only, floats as Python's ``repr`` (what ``json.dumps`` writes), one record per line.
The digested text is the versions line (``header_line``: the scorer version, the judge and its
prompt versions) then every record line sorted by (uid, mode), each line ending in a newline.

Digests: ``digest`` over every record, ``digest_dev`` over the dev split's only (what anyone may
download for a public submission), and the same per mode (``modes``, ``dev_modes``) so a mismatch
can be named by mode.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CANON = "row-records/1"  # bump when CANONICAL_FIELDS or the serialisation changes

# --- copied in scripts/verify_row.py (stdlib only); evaluation/tests/test_row_digest.py holds them equal ---
CANONICAL_FIELDS = (
    "uid", "mode", "correct", "decided_by", "extracted", "answer_verdict", "n_steps", "n_calls", "l_eff", "l_gt",
    "calls", "effective", "toolset_prf", "edit_distance", "key_steps", "kcov", "kcov_any", "step_scores",
    "step_score", "iou", "tokens", "cost_usd",
)


def canonical_record(values: Mapping[str, Any]) -> dict[str, Any]:
    """The record's canonical fields (a missing one is null); anything else is dropped."""
    return {name: values.get(name) for name in CANONICAL_FIELDS}


def dumps(value: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, ASCII, floats as repr."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def header_line(scorer_version: str, judge: str, judge_prompts: Mapping[str, str]) -> str:
    return dumps({"canon": CANON, "judge": judge, "judge_prompts": dict(judge_prompts),
                  "scorer_version": scorer_version})


def digests_of(header: str, records: Iterable[tuple[Mapping[str, Any], bool]]) -> dict[str, Any]:
    """{"digest", "digest_dev", "modes": {mode: hex}, "dev_modes": {mode: hex}} of (record, is_dev) pairs."""
    lines = sorted((str(r.get("uid")), str(r.get("mode")), dumps(canonical_record(r)), dev) for r, dev in records)
    start = (header + "\n").encode()
    whole, dev_only = hashlib.sha256(start), hashlib.sha256(start)
    modes: dict[str, Any] = {}
    dev_modes: dict[str, Any] = {}
    for _uid, mode, line, dev in lines:
        data = (line + "\n").encode()
        whole.update(data)
        modes.setdefault(mode, hashlib.sha256(start)).update(data)
        if dev:
            dev_only.update(data)
            dev_modes.setdefault(mode, hashlib.sha256(start)).update(data)
    return {"digest": whole.hexdigest(), "digest_dev": dev_only.hexdigest(),
            "modes": {m: h.hexdigest() for m, h in sorted(modes.items())},
            "dev_modes": {m: h.hexdigest() for m, h in sorted(dev_modes.items())}}
# --- end of the copy ---


@dataclass(frozen=True, slots=True)
class Mismatch:
    """What differs between stored digests and recomputed ones: the digests and the modes."""

    what: list[str] = field(default_factory=list)  # "digest", "digest_dev"
    modes: list[str] = field(default_factory=list)
    dev_modes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.what or self.modes or self.dev_modes)


def compare(stored: Mapping[str, Any], recomputed: Mapping[str, Any], *, dev_only: bool = False) -> Mismatch:
    keys = ("digest_dev",) if dev_only else ("digest", "digest_dev")
    what = [k for k in keys if stored.get(k) != recomputed.get(k)]

    def modes(name: str) -> list[str]:
        a, b = stored.get(name) or {}, recomputed.get(name) or {}
        return sorted(m for m in set(a) | set(b) if a.get(m) != b.get(m))

    return Mismatch(what, [] if dev_only else modes("modes"), modes("dev_modes"))
