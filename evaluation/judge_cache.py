"""The VerdictCache protocol (evaluation.judges.cache) backed by the JudgeVerdict table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from .models import JudgeVerdict

# SQLite allows at most 999 bound parameters in older builds; stay well below.
_CHUNK = 500


class DatabaseVerdictCache:
    """Verdicts in the JudgeVerdict table.

    ``own_connection=True`` (the pipeline's judge): on PostgreSQL, verdicts are written through a
    second, autocommit connection, so they are kept the moment a batch is answered even though
    the scoring stage's result transaction (``pipeline._ResultWriter``) is still open and may
    roll back: a crash, a worker kill or a judge failure never pays for a question twice. Only
    when the cache is made outside any transaction (an outer one, as in unit tests, could not be
    seen through a second connection). On SQLite the scoring stage holds no transaction while it
    judges, so the default connection's writes are committed at once already.
    """

    def __init__(self, *, own_connection: bool = False) -> None:
        self._side_wanted = (own_connection and connection.vendor == "postgresql"
                             and not connection.in_atomic_block)
        self._side: Any = None

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
        if not self._side_wanted:
            JudgeVerdict.objects.bulk_create(
                [JudgeVerdict(judge=judge, prompt_version=prompt_version, input_hash=h, verdict=v)
                 for h, v in verdicts.items()],
                batch_size=_CHUNK, ignore_conflicts=True,
            )
            return
        if self._side is None:
            self._side = connections.create_connection(DEFAULT_DB_ALIAS)
        meta = JudgeVerdict._meta
        q = self._side.ops.quote_name
        columns = ", ".join(q(meta.get_field(f).column) for f in ("judge", "prompt_version", "input_hash",
                                                                    "verdict", "created"))
        sql = (f"INSERT INTO {q(meta.db_table)} ({columns}) VALUES (%s, %s, %s, %s::jsonb, %s) "
               "ON CONFLICT DO NOTHING")
        now = timezone.now()
        rows = [(judge, prompt_version, h, orjson.dumps(v).decode(), now) for h, v in verdicts.items()]
        with self._side.cursor() as cursor:
            cursor.executemany(sql, rows)

    def close(self) -> None:
        if self._side is not None:
            self._side.close()
            self._side = None
