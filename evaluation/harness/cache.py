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

Each answer is committed as soon as it arrives, and with it, in the same transaction, what it cost
(``spend``: the run that paid, ``run``, given when the cache is opened): so the money a run spent is
counted where it is paid, and after a worker's death the next one reads what was really spent
(``spent_usd``), not the last progress report (issue 40: a killed run's budget was overspent). A request
is noted as in flight before it is sent (``sending``); one whose worker died before its answer came was
paid for all the same, so when the run sends it again its answer is counted once per copy sent
(``paid_twice``: the requests a death made the run pay for twice).
SQLite (stdlib), one connection per thread.
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

    def sending(self, key: str) -> None: ...

    def unanswered(self, key: str) -> None: ...

    def put(self, key: str, response: dict[str, Any], *, cost_usd: float = 0.0) -> None: ...

    def spent_usd(self) -> float: ...


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
    def __init__(self, path: str | Path, *, owner: str, run: str = "") -> None:
        if not owner:
            raise ValueError("a request cache belongs to an owner")
        self.owner = owner
        self.run = run
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        db = self._connection()
        db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL, owner TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS spend (run TEXT NOT NULL, key TEXT NOT NULL, usd REAL NOT NULL, "
                   "copies INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (run, key))")
        db.execute("CREATE TABLE IF NOT EXISTS inflight (run TEXT NOT NULL, key TEXT NOT NULL)")
        db.execute("CREATE INDEX IF NOT EXISTS inflight_run_key ON inflight (run, key)")
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

    def sending(self, key: str) -> None:
        """``key`` is about to be sent (and paid for, whether or not its answer arrives)."""
        if self.run:
            self._connection().execute("INSERT INTO inflight (run, key) VALUES (?, ?)", (self.run, key))

    def unanswered(self, key: str) -> None:
        """``key`` came back with no answer (an error, a timeout: nothing to pay): no longer in flight."""
        if self.run:
            self._connection().execute("DELETE FROM inflight WHERE rowid = (SELECT rowid FROM inflight WHERE run = ? "
                                       "AND key = ? LIMIT 1)", (self.run, key))

    def put(self, key: str, response: dict[str, Any], *, cost_usd: float = 0.0) -> None:
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("INSERT OR REPLACE INTO responses (key, response, owner) VALUES (?, ?, ?)",
                       (key, json.dumps(response, ensure_ascii=False), self.owner))
            if self.run:
                sent = db.execute("SELECT COUNT(*) FROM inflight WHERE run = ? AND key = ?", (self.run, key)).fetchone()[0]
                copies = max(1, int(sent))  # this one, and any sent by a worker that died before its answer
                db.execute("DELETE FROM inflight WHERE run = ? AND key = ?", (self.run, key))
                db.execute("INSERT INTO spend (run, key, usd, copies) VALUES (?, ?, ?, ?) ON CONFLICT (run, key) DO "
                           "UPDATE SET usd = usd + excluded.usd, copies = copies + excluded.copies",
                           (self.run, key, cost_usd * copies, copies))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def spent_usd(self) -> float:
        """What the answers this run paid for cost, whichever process received them."""
        if not self.run:
            return 0.0
        row = self._connection().execute("SELECT COALESCE(SUM(usd), 0) FROM spend WHERE run = ?", (self.run,)).fetchone()
        return float(row[0])

    def paid_twice(self) -> int:
        """Requests this run sent again because the worker that sent them first died before their answer."""
        if not self.run:
            return 0
        row = self._connection().execute("SELECT COALESCE(SUM(copies - 1), 0) FROM spend WHERE run = ?",
                                         (self.run,)).fetchone()
        return int(row[0])

    def __len__(self) -> int:
        """This owner's answers."""
        return int(self._connection().execute("SELECT COUNT(*) FROM responses WHERE owner = ?",
                                              (self.owner,)).fetchone()[0])


class MemoryRequestCache:
    def __init__(self, owner: str = "local:memory") -> None:
        self.owner = owner
        self.data: dict[str, dict[str, Any]] = {}
        self.spent = 0.0

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def sending(self, key: str) -> None:
        pass

    def unanswered(self, key: str) -> None:
        pass

    def put(self, key: str, response: dict[str, Any], *, cost_usd: float = 0.0) -> None:
        self.data[key] = response
        self.spent += cost_usd

    def spent_usd(self) -> float:
        return self.spent
