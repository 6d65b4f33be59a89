"""The persistent request cache: an answered request is never sent again (spec/runs.md).

A cache belongs to one owner (``owner``: ``user:<id>`` for a hosted run or a ``run_model --user``, else
``local:<login>``), and its keys are the SHA-256 of that owner with (endpoint base URL, endpoint model,
messages, tools, sampling settings) in canonical JSON. So a re-run by the same owner against the same
endpoint, or a run resumed after a kill, replays what was answered and pays only for what was not; and
another owner, or another endpoint under the same model name, never gets those answers (issue 32: a
run naming another researcher's model took all its answers from that researcher's run).

Two locks, so that one failing does not leak: the owner is part of every key (a look-up that forgot
the owner would compute another key), and every row carries its owner, which ``get`` matches too.
Rows written before owners were kept have none, and are never served.

Each answer is committed as soon as it arrives. SQLite (stdlib), one connection per thread; a
hosted run may plug in another store with the same attribute and two methods.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit


class RequestCache(Protocol):
    owner: str

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, response: dict[str, Any]) -> None: ...


def endpoint_identity(base_url: str) -> str:
    """The endpoint a request goes to, as the cache tells endpoints apart: scheme and host in lower
    case, no trailing slash (``HTTP://Host:8000/v1/`` and ``http://host:8000/v1`` are one endpoint)."""
    parts = urlsplit(base_url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


def request_key(owner: str, request: dict[str, Any]) -> str:
    """The key of ``request`` (which names its endpoint) for ``owner``: never the same for two owners."""
    if not owner:
        raise ValueError("a request cache key needs its owner")
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{owner}\n{canonical}".encode()).hexdigest()


class SqliteRequestCache:
    def __init__(self, path: str | Path, *, owner: str) -> None:
        if not owner:
            raise ValueError("a request cache belongs to an owner")
        self.owner = owner
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        db = self._connection()
        db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL, owner TEXT)")
        columns = {row[1] for row in db.execute("PRAGMA table_info(responses)")}
        if "owner" not in columns:  # a cache file from before owners: its rows stay ownerless, never served
            try:
                db.execute("ALTER TABLE responses ADD COLUMN owner TEXT")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._connection().execute("SELECT response FROM responses WHERE key = ? AND owner = ?",
                                         (key, self.owner)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, response: dict[str, Any]) -> None:
        self._connection().execute("INSERT OR REPLACE INTO responses (key, response, owner) VALUES (?, ?, ?)",
                                   (key, json.dumps(response, ensure_ascii=False), self.owner))

    def __len__(self) -> int:
        """This owner's answers."""
        return int(self._connection().execute("SELECT COUNT(*) FROM responses WHERE owner = ?",
                                              (self.owner,)).fetchone()[0])


class MemoryRequestCache:
    def __init__(self, owner: str = "local:memory") -> None:
        self.owner = owner
        self.data: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def put(self, key: str, response: dict[str, Any]) -> None:
        self.data[key] = response
