"""The persistent request cache: an answered request is never sent again (spec/runs.md).

Keyed by the SHA-256 of (endpoint model, messages, tools, sampling settings) in canonical JSON, so a
re-run, or a run resumed after a kill, replays what was answered and pays only for what was not.
Each answer is committed as soon as it arrives. SQLite (stdlib), one connection per thread; a
hosted run may plug in another store with the same two methods.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol


class RequestCache(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, response: dict[str, Any]) -> None: ...


def request_key(request: dict[str, Any]) -> str:
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


class SqliteRequestCache:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as db:
            db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL)")

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._connection().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, response: dict[str, Any]) -> None:
        self._connection().execute("INSERT OR REPLACE INTO responses (key, response) VALUES (?, ?)",
                                   (key, json.dumps(response, ensure_ascii=False)))

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])


class MemoryRequestCache:
    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def put(self, key: str, response: dict[str, Any]) -> None:
        self.data[key] = response
