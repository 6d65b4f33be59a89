"""The VerdictCache protocol (evaluation.judges.cache) backed by the JudgeVerdict table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .models import JudgeVerdict

# SQLite allows at most 999 bound parameters in older builds; stay well below.
_CHUNK = 500


class DatabaseVerdictCache:
    def get_many(self, judge: str, prompt_version: str, hashes: Iterable[str]) -> dict[str, Any]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, Any] = {}
        for start in range(0, len(wanted), _CHUNK):
            rows = JudgeVerdict.objects.filter(
                judge=judge, prompt_version=prompt_version,
                input_hash__in=wanted[start:start + _CHUNK],
            ).values_list("input_hash", "verdict")
            found.update(rows)
        return found

    def set_many(self, judge: str, prompt_version: str, verdicts: Mapping[str, Any]) -> None:
        # ignore_conflicts: two workers judging the same question both succeed; first wins.
        JudgeVerdict.objects.bulk_create(
            [JudgeVerdict(judge=judge, prompt_version=prompt_version, input_hash=h, verdict=v)
             for h, v in verdicts.items()],
            batch_size=_CHUNK,
            ignore_conflicts=True,
        )
