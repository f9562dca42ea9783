"""How a heuristic agent ranks the visible tools for one intent: lexical (BM25), dense (embeddings) or both.

The three are different retrieval strategies, not one strategy at three strengths: BM25 rewards the words a
tool shares with the request, a dense model rewards what it means (and misses rare ids and names), and the
hybrid fuses the two as the registry index does (`registry.index.hybrid`: min-max scores, weighted). Each
returns (score in [0, 1], tool) pairs, best first, over the tools it finds relevant.

The dense model is `CWORLD_EMBED_MODEL` (the packaged MiniLM by default), loaded once per process; a tool's
vector is kept per (model, tool id) and a query's per (model, text), so the same request met again (another
seed, mode or agent) costs no model call.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from cworld.data_model import ToolSpec

if TYPE_CHECKING:
    from cworld.registry.index.embedder import Embedder

Ranker = Literal["bm25", "dense", "hybrid"]
RANKERS: tuple[str, ...] = ("bm25", "dense", "hybrid")
DENSE_WEIGHT = 0.6
"""The hybrid's weight on the dense scores: the registry index's default (`FusionParams.dense_weight`)."""
DEPTH = 12
"""Candidates each ranking contributes."""

_LOCK = threading.Lock()
_EMBEDDER: list[Embedder] = []
_VECTORS: dict[tuple[str, str], np.ndarray] = {}
_QUERIES: dict[tuple[str, str], np.ndarray] = {}


def rank_tools(ranker: Ranker, query: str, tools: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    """The tools relevant to `query` by `ranker`, each with its score scaled to the best one (1.0)."""
    if not tools or not query.strip():
        return []
    if ranker == "bm25":
        return _scaled(_bm25(query, tools), tools)
    if ranker == "dense":
        return _scaled(_dense(query, tools), tools)
    lexical, dense = _minmax(_bm25(query, tools)), _minmax(_dense(query, tools))
    return _scaled(DENSE_WEIGHT * dense + (1.0 - DENSE_WEIGHT) * lexical, tools)


def _bm25(query: str, tools: Sequence[ToolSpec]) -> np.ndarray:
    from cworld.registry.index.bm25 import BM25Index
    from cworld.registry.index.documents import tool_documents

    index = BM25Index.build([doc.fields for doc in tool_documents(list(tools))])
    return np.asarray(index.query_scores(query), dtype=float)


def _dense(query: str, tools: Sequence[ToolSpec]) -> np.ndarray:
    """Cosine similarity of the query and each tool's document text; 0 for a negative one (unrelated)."""
    embedder = _embedder()
    vectors = np.stack(_vectors(embedder, tools))
    query_vector = _query_vector(embedder, query)
    return np.clip(vectors @ query_vector, 0.0, None)


def _query_vector(embedder: Embedder, query: str) -> np.ndarray:
    """A query's vector, kept per process: the same request recurs across seeds, modes and agents."""
    key = (str(getattr(embedder, "name", type(embedder).__name__)), query)
    with _LOCK:
        found = _QUERIES.get(key)
    if found is None:
        found = np.asarray(embedder.embed_queries([query])[0], dtype=np.float64)
        with _LOCK:
            _QUERIES[key] = found
    return found


def _embedder() -> Embedder:
    from cworld.registry.index.embedder import resolve_embedder

    with _LOCK:
        if not _EMBEDDER:
            _EMBEDDER.append(resolve_embedder())
        return _EMBEDDER[0]


def _vectors(embedder: Embedder, tools: Sequence[ToolSpec]) -> list[np.ndarray]:
    """Each tool's document vector; the ones not seen before are embedded together."""
    from cworld.registry.index.documents import tool_documents

    model = str(getattr(embedder, "name", type(embedder).__name__))
    with _LOCK:
        missing = [spec for spec in tools if (model, spec.id) not in _VECTORS]
    if missing:
        texts = [doc.text for doc in tool_documents(missing)]
        fresh = np.asarray(embedder.embed_documents(texts), dtype=np.float64)
        with _LOCK:
            _VECTORS.update({(model, spec.id): row for spec, row in zip(missing, fresh, strict=True)})
    with _LOCK:
        return [_VECTORS[(model, spec.id)] for spec in tools]


def _minmax(scores: np.ndarray) -> np.ndarray:
    """Scores on [0, 1] over the top DEPTH candidates; the rest count 0 (as the registry's fusion does)."""
    out = np.zeros_like(scores)
    top = np.argsort(-scores, kind="stable")[:DEPTH]
    top = top[scores[top] > 0]
    if len(top) == 0:
        return out
    low, high = scores[top].min(), scores[top].max()
    out[top] = 1.0 if high == low else (scores[top] - low) / (high - low) + 1e-6
    return out


def _scaled(scores: np.ndarray, tools: Sequence[ToolSpec]) -> list[tuple[float, ToolSpec]]:
    order = [int(i) for i in np.argsort(-scores, kind="stable")[:DEPTH] if scores[int(i)] > 0]
    if not order:
        return []
    top = float(scores[order[0]])
    return [(float(scores[i]) / top, tools[i]) for i in order]
