"""Near-duplicate rejection: a new task's query against every accepted one.

With the registry's embedder, similarity is the cosine of the query embeddings; without one (no model
installed, or it failed to load) it falls back to the Jaccard overlap of content-word sets, and the run
summary says so. Thresholds are options (`duplicate_cosine`, `duplicate_jaccard`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cworld.synth.checks import content_words


@dataclass
class DuplicateGuard:
    embedder: Any = None
    cosine: float = 0.95
    jaccard: float = 0.8
    ids: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    _vectors: list[np.ndarray] = field(default_factory=list)
    _words: list[set[str]] = field(default_factory=list)
    fallback_reason: str = ""
    max_seen: float = 0.0

    @property
    def method(self) -> str:
        return (
            f"embedding cosine > {self.cosine}"
            if self.embedder is not None
            else f"token Jaccard > {self.jaccard}"
        )

    def check(self, query: str) -> tuple[str | None, float]:
        """(id of the accepted task this one nearly duplicates, or None; the highest similarity seen)."""
        if not self.ids:
            return None, 0.0
        if self.embedder is not None:
            try:
                return self._by_embedding(query)
            except Exception as exc:  # a model that fails mid-run: keep going lexically, and say so
                self.fallback_reason = f"embedder failed ({type(exc).__name__}: {exc}); token Jaccard used"
                self.embedder = None
        return self._by_words(query)

    def add(self, task_id: str, query: str) -> None:
        self.ids.append(task_id)
        self.queries.append(query)
        self._words.append(content_words(query))
        if self.embedder is not None:
            try:
                self._vectors.append(self._embed(query))
            except Exception as exc:
                self.fallback_reason = f"embedder failed ({type(exc).__name__}: {exc}); token Jaccard used"
                self.embedder = None

    def _embed(self, query: str) -> np.ndarray:
        return np.asarray(self.embedder.embed_queries([query])[0], dtype=np.float32)

    def _by_embedding(self, query: str) -> tuple[str | None, float]:
        if len(self._vectors) != len(self.ids):
            self._vectors = [self._embed(q) for q in self.queries]
        vector = self._embed(query)
        sims = np.stack(self._vectors) @ vector
        best = int(np.argmax(sims))
        score = float(sims[best])
        self.max_seen = max(self.max_seen, score)
        return (self.ids[best] if score > self.cosine else None), score

    def _by_words(self, query: str) -> tuple[str | None, float]:
        words = content_words(query)
        best_id, best = None, 0.0
        for task_id, other in zip(self.ids, self._words, strict=True):
            union = words | other
            score = len(words & other) / len(union) if union else 1.0
            if score > best:
                best_id, best = task_id, score
        self.max_seen = max(self.max_seen, best)
        return (best_id if best > self.jaccard else None), best
