"""On-disk response cache: re-running a command replays identical model calls instead of paying again.

SQLite in WAL mode so several processes (and threads) can share one file; each thread keeps its own
connection. The key is the sha256 of the canonical request JSON. Only what changes the answer goes
into the key, and never a credential: the value stored is the `Completion`, which holds none either.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random

from cworld.errors import ConfigError
from cworld.llm.completion import Completion

log = logging.getLogger("cworld.llm")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""

# Parameters left out of the key: those that may carry credentials, and those that cannot change the answer.
_SECRET_PARAMS = frozenset({"api_key", "headers", "extra_headers", "aws_secret_access_key", "vertex_credentials"})
_NOT_ANSWER_PARAMS = frozenset({"timeout", "max_retries", "num_retries", "metadata", "drop_params"})
_LEFT_OUT = _SECRET_PARAMS | _NOT_ANSWER_PARAMS


def _plain(value: Any) -> Any:
    """Make messages that hold pydantic or litellm objects (an appended assistant turn) JSON-able."""
    if hasattr(value, "model_dump"):
        return value.model_dump(exclude_none=True)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return str(value)


def request_key(request: dict[str, Any]) -> str:
    """sha256 of the request as canonical JSON (sorted keys, no whitespace); secrets are dropped."""
    material = {k: v for k, v in request.items() if k not in _LEFT_OUT and v is not None}
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """A key -> `Completion` store. Cheap enough to call inline from async code (sub-millisecond)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the LLM cache folder {self.path.parent}: {exc.strerror}") from None
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            # two processes opening a new cache at once: switching it to WAL can find it locked without waiting
            # for the busy timeout, so the opening is tried again for a while before the cache counts as unusable
            conn = Retrying(retry=retry_if_exception(_busy), stop=stop_after_delay(10), wait=wait_random(0.01, 0.1),
                            reraise=True)(self._opened)
        except sqlite3.Error as exc:
            raise ConfigError(f"LLM cache {self.path} is not usable ({exc}); delete it or pass another path") from None
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def _opened(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def get(self, key: str) -> Completion | None:
        """The stored answer, or None. A cache that cannot be read is a miss, never a failed call."""
        try:
            row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
            return Completion.model_validate_json(row[0]) if row is not None else None
        except (sqlite3.Error, ValueError) as exc:
            log.warning("LLM cache %s: read failed (%s); calling the model instead", self.path, exc)
            return None

    def put(self, key: str, completion: Completion) -> None:
        payload = completion.model_copy(update={"cached": False}).model_dump_json()
        try:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, response, created) VALUES (?, ?, ?, ?)",
                (key, completion.model, payload, time.time()),
            )
        except sqlite3.Error as exc:
            log.warning("LLM cache %s: write failed (%s); the answer is not cached", self.path, exc)

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()


def _busy(exc: BaseException) -> bool:
    """A lock another connection holds for a moment (`database is locked`, `database table is locked`)."""
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))
