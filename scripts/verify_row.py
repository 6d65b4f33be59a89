#!/usr/bin/env python3
"""Recompute a leaderboard row's digest from its records export, with the standard library alone.

    python verify_row.py records.jsonl
    python verify_row.py https://HOST/b/<slug>/m/<id>/records.jsonl [--expect DIGEST]

The export's first line is its header (versions, digests, scope); every other line is one canonical
per-sample record with its split. The script rebuilds the digested text (the versions line, then
every record's canonical line sorted by sample uid and mode) and compares its sha256 with the
header's: the whole row's (``digest``) for a full export (the owner's, staff's), the dev split's
(``digest_dev``) for the public one. ``--expect`` also checks the header against a digest you took
from the board (leaderboard.json, the CSV, the API or the model page). Prints "ok" and exits 0, or
names what differs (digest, mode) and exits 1. docs/runs.md, "The verified tier".

The canonical functions below are a copy of evaluation/metrics/digest.py; a test holds them equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.request
from collections.abc import Iterable, Mapping
from typing import Any

CANON = "row-records/1"

# --- a copy of evaluation/metrics/digest.py ---
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


def read_export(source: str) -> list[str]:
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=120) as response:  # noqa: S310 - the user's own URL
            text = response.read().decode("utf-8")
    else:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
    return [line for line in text.splitlines() if line.strip()]


def check(lines: list[str], expect: str | None = None) -> list[str]:
    """What differs, in words; empty when the export's records give the header's digests."""
    if not lines:
        return ["the export is empty"]
    head = json.loads(lines[0])
    if head.get("kind") != "row-records":
        return ["the first line is not a records export's header"]
    dev_only = head.get("scope") == "dev"
    records = [json.loads(line) for line in lines[1:]]
    problems = []
    if dev_only and any(r.get("split") != "dev" for r in records):
        problems.append("a dev-only export holds records of another split")
    v = head.get("versions") or {}
    header = header_line(v.get("scorer_version", ""), v.get("judge", ""), v.get("judge_prompts") or {})
    if header != dumps(v):
        problems.append(f"unknown versions line (this script knows {CANON})")
    again = digests_of(header, ((r, r.get("split") == "dev") for r in records))
    names = ("digest_dev",) if dev_only else ("digest", "digest_dev")
    for name in names:
        if head.get(name) is None:
            problems.append(f"{name}: not available in the export (scored before digests existed)")
        elif head[name] != again[name]:
            problems.append(f"{name} differs: the export says {head[name]}, its records give {again[name]}")
    for key in (("dev_modes",) if dev_only else ("modes", "dev_modes")):
        said, got = head.get(key) or {}, again[key]
        bad = sorted(m for m in set(said) | set(got) if said.get(m) != got.get(m))
        if bad:
            where = "dev-split records" if key == "dev_modes" else "records"
            problems.append(f"{where} differ in mode(s): {', '.join(bad)}")
    if expect:
        name = "digest_dev" if dev_only else "digest"
        if again[name] != expect:
            problems.append(f"{name} differs from the one expected: expected {expect}, the records give {again[name]}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="the records export: a file or an http(s) URL")
    parser.add_argument("--expect", help="the digest shown on the board (digest_dev for a dev-only export)")
    args = parser.parse_args(argv)
    problems = check(read_export(args.source), args.expect)
    if problems:
        for p in problems:
            print(p)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
