"""An embedding cache keyed by (model, text): rebuilds and repeated queries skip the model entirely.

Stored in SQLite (one row per vector), so concurrent commands can share it and a new query adds one row
instead of rewriting a file. A query that was asked before is answered without even loading the model,
which is most of the cost of a one-shot `cworld search` (~10 s to import and load, ~5 ms to embed).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np

from cworld.registry.index.embedder import Embedder


def text_key(model: str, kind: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{kind}\0{text}".encode()).hexdigest()


class EmbeddingCache:
    """`get(keys)` / `put(keys, vectors)` over a SQLite file; a `None` path keeps it in memory only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the threads of a server (`cworld serve` searches from worker threads).
        self._db = sqlite3.connect(str(path) if path else ":memory:", timeout=30, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB)")

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key, dim, vec FROM vectors WHERE key IN ({marks})", chunk)
                for key, dim, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32, count=dim).copy()
        return found

    def put(self, keys: list[str], vectors: np.ndarray) -> None:
        rows = [(k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in zip(keys, vectors, strict=True)]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        self._db.close()


class CachedEmbedder:
    """Wraps an embedder; only texts missing from the cache reach it (counted in `embedded`)."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.spec = inner.spec
        self.embedded = 0

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        keys = [text_key(self.name, kind, t) for t in texts]
        found = self.cache.get(keys)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found:
                todo.setdefault(key, text)
        if todo:
            embed = self.inner.embed_queries if kind == "query" else self.inner.embed_documents
            vectors = embed(list(todo.values()))
            self.embedded += len(todo)
            self.cache.put(list(todo), vectors)
            found.update(zip(todo, vectors, strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "doc")

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "query")
