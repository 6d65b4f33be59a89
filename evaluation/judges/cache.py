"""Verdict caches keyed by (judge name, prompt version, input hash)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import orjson


def input_hash(payload: Any) -> str:
    """SHA-256 of the canonical JSON of a question's payload (sorted keys)."""
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


@runtime_checkable
class VerdictCache(Protocol):
    def get_many(self, judge: str, prompt_version: str, hashes: Iterable[str]) -> dict[str, Any]:
        """The stored verdicts among ``hashes`` (absent keys are simply missing)."""
        ...

    def set_many(self, judge: str, prompt_version: str, verdicts: Mapping[str, Any]) -> None:
        """Store verdicts by input hash; an existing entry is kept (first verdict wins)."""
        ...


class InMemoryVerdictCache:
    """A dict-backed cache for tests, scripts and single-process runs."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str, str], Any] = {}

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, judge: str, prompt_version: str, hashes: Iterable[str]) -> dict[str, Any]:
        data = self._data
        out = {}
        for h in hashes:
            key = (judge, prompt_version, h)
            if key in data:
                out[h] = data[key]
        return out

    def set_many(self, judge: str, prompt_version: str, verdicts: Mapping[str, Any]) -> None:
        for h, v in verdicts.items():
            self._data.setdefault((judge, prompt_version, h), v)
