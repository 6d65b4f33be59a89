"""How many prediction lines record what the endpoint returned (spec runs.md, "What each prediction line
records"): a line's ``run`` object may carry ``model_ids`` (every model id the endpoint answered as) and
``response_ids``, and (run_model's lines) the ``protocol_version`` the run ran under. Counted while the
file is read for scoring and stored in ``Submission.results``, so the
submission page can say "412 of 604 lines record the model ids the endpoint returned". Plain Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MODEL_IDS_KEPT = 20  # distinct model ids kept in the results; more are counted, not listed
# A protocol version as evaluation/run_protocol.py writes it: the first 12 hex digits of a sha256.
PROTOCOL_VERSION = re.compile(r"[0-9a-f]{12}")


def _ids(run: Any, key: str) -> list[str]:
    value = run.get(key) if isinstance(run, dict) else None
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str) and v]


@dataclass(slots=True)
class RunLines:
    lines: int = 0
    with_model_ids: int = 0
    with_response_ids: int = 0
    model_ids: set[str] = field(default_factory=set)
    more_model_ids: bool = False
    with_protocol_version: int = 0
    protocol_versions: set[str] = field(default_factory=set)  # at most two kept: one is all that is used

    def see(self, obj: Any) -> None:
        """Count one decoded prediction line."""
        self.lines += 1
        run = obj.get("run") if isinstance(obj, dict) else None
        if run is None:
            return
        ids = _ids(run, "model_ids")
        if ids:
            self.with_model_ids += 1
            for i in ids:
                if i in self.model_ids:
                    continue
                if len(self.model_ids) < MODEL_IDS_KEPT:
                    self.model_ids.add(i)
                else:
                    self.more_model_ids = True
        if _ids(run, "response_ids"):
            self.with_response_ids += 1
        version = run.get("protocol_version") if isinstance(run, dict) else None
        if isinstance(version, str) and PROTOCOL_VERSION.fullmatch(version):
            self.with_protocol_version += 1
            if len(self.protocol_versions) < 2:
                self.protocol_versions.add(version)

    def protocol_claimed(self) -> str | None:
        """The protocol version the file says it ran under (run_model writes it on every line, docs/runs.md),
        when every line read names the same one; None otherwise (an upload's claim, not verified)."""
        if self.lines and self.with_protocol_version == self.lines and len(self.protocol_versions) == 1:
            return next(iter(self.protocol_versions))
        return None

    def as_json(self) -> dict[str, Any]:
        """The keys added to ``Submission.results``."""
        return {"lines_read": self.lines, "lines_with_model_ids": self.with_model_ids,
                "lines_with_response_ids": self.with_response_ids, "model_ids_seen": sorted(self.model_ids),
                "model_ids_seen_truncated": self.more_model_ids,
                "lines_with_protocol_version": self.with_protocol_version,
                "protocol_claimed": self.protocol_claimed()}
