"""Router files, read line by line (docs/routers.md): each problem names its line and field.

A line is ``{"sample_id": ..., "model": "<pool model>"}`` or carries ``"probs": {model: p}``
(non-negative weights, normalised; scored as expected accuracy and cost). Every test sample needs
exactly one line; nothing else is accepted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

MAX_ERRORS = 50


@dataclass
class RouterFile:
    picks: dict[str, dict[str, float]] = field(default_factory=dict)  # sample uid -> {model: weight}
    errors: list[dict[str, object]] = field(default_factory=list)
    truncated: bool = False
    n_lines: int = 0

    def error(self, line: int | None, fld: str, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append({"line": line, "field": fld, "message": message})
        else:
            self.truncated = True


def _names(models: Sequence[str]) -> str:
    return ", ".join(models) if len(models) <= 20 else ", ".join(models[:20]) + ", ..."


def _probs(out: RouterFile, n: int, value: object, models: Sequence[str],
           aliases: Mapping[str, str]) -> dict[str, float] | None:
    if not isinstance(value, dict) or not value:
        out.error(n, "probs", "must be an object of model name -> probability")
        return None
    probs: dict[str, float] = {}
    for given, p in value.items():
        name = aliases.get(given, given)
        if name not in models:
            out.error(n, "probs", f"unknown model {name!r}: the pool's models are {_names(models)}")
            return None
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
            out.error(n, "probs", f"the probability of {name!r} must be a number >= 0, not {p!r}")
            return None
        probs[name] = probs.get(name, 0.0) + float(p)
    if sum(probs.values()) <= 0:
        out.error(n, "probs", "the probabilities sum to 0")
        return None
    return probs


def read_router_file(lines: Iterable[bytes | str], *, models: Sequence[str], test: Sequence[str],
                     known: Iterable[str] = (), aliases: Mapping[str, str] | None = None) -> RouterFile:
    """Check every line against the pool's ``models`` and the ``test`` split's sample ids.

    ``known`` are the benchmark's other sample ids, so a train or dev id is told apart from a typo.
    ``aliases`` are earlier names of pool models ({old name: name now}): a pick by an old name is a pick
    of that model (its owner renamed it after the file was written). The picks name models as they are now.
    """
    aliases = aliases or {}
    out = RouterFile()
    test_set, known_set = set(test), set(known)
    first_line: dict[str, int] = {}
    for n, raw in enumerate(lines, start=1):
        out.n_lines = n
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            out.error(n, "", f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            out.error(n, "", "each line must be a JSON object")
            continue
        uid = obj.get("sample_id")
        if not isinstance(uid, (str, int)) or isinstance(uid, bool) or str(uid) == "":
            out.error(n, "sample_id", "missing: each line names the sample it routes")
            continue
        uid = str(uid)
        if uid not in test_set:
            where = "is in the train or dev split, not test" if uid in known_set else "is not a sample of this benchmark"
            out.error(n, "sample_id", f"{uid!r} {where}: route the test split's samples only")
            continue
        if uid in first_line:
            out.error(n, "sample_id", f"{uid!r} is routed twice (first on line {first_line[uid]})")
            continue
        first_line[uid] = n
        if "probs" in obj:
            probs = _probs(out, n, obj["probs"], models, aliases)
            if probs is None:
                continue
            if "model" in obj and (not isinstance(obj["model"], str) or aliases.get(obj["model"], obj["model"])
                                   not in models):
                out.error(n, "model", f"unknown model {obj['model']!r}: the pool's models are {_names(models)}")
                continue
            out.picks[uid] = probs
            continue
        model = obj.get("model")
        if not isinstance(model, str) or not model:
            out.error(n, "model", "missing: name one model of the pool (or give \"probs\")")
            continue
        if aliases.get(model, model) not in models:
            out.error(n, "model", f"unknown model {model!r}: the pool's models are {_names(models)}")
            continue
        out.picks[uid] = {aliases.get(model, model): 1.0}
    missing = [u for u in test if u not in first_line]
    for uid in missing[:10]:
        out.error(None, "sample_id", f"test sample {uid!r} has no line (the file has {out.n_lines} lines)")
    if len(missing) > 10:
        out.error(None, "sample_id", f"... and {len(missing) - 10} more test samples have no line")
    return out
