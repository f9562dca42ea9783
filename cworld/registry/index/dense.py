"""Exact inner-product search over normalised embeddings with FAISS (`IndexFlatIP`).

Exact, not approximate: at registry sizes (hundreds to tens of thousands of tools) a flat index answers a
batch of queries in milliseconds, and approximate indexes would need their recall checked per model.
Queries go in batches — one FAISS call for many queries is far cheaper than many calls for one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cworld.errors import MissingDependency

FAISS_FILE = "dense.faiss"
EMBEDDINGS_FILE = "embeddings.npy"


def _faiss():  # type: ignore[no-untyped-def]
    try:
        import faiss
    except ImportError:
        raise MissingDependency("dense search needs FAISS: pip install faiss-cpu") from None
    return faiss


class DenseIndex:
    """Rows of `vectors` (n x dim, L2-normalised float32) searched by inner product = cosine."""

    def __init__(self, vectors: np.ndarray, index: object | None = None) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.index = index if index is not None else self._build(self.vectors)

    @staticmethod
    def _build(vectors: np.ndarray) -> object:
        faiss = _faiss()
        dim = vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 1
        index = faiss.IndexFlatIP(dim)
        if len(vectors):
            index.add(vectors)
        return index

    @property
    def size(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, row ids), each (n_queries x k'), k' = min(k, size); best first."""
        k = min(k, self.size)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if k == 0 or len(queries) == 0:
            return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
        scores, ids = self.index.search(queries, k)  # type: ignore[attr-defined]
        return scores, ids

    def save(self, folder: Path) -> None:
        faiss = _faiss()
        tmp_faiss = folder / (FAISS_FILE + ".tmp")
        faiss.write_index(self.index, str(tmp_faiss))
        tmp_faiss.replace(folder / FAISS_FILE)
        with (folder / (EMBEDDINGS_FILE + ".tmp")).open("wb") as fh:
            np.save(fh, self.vectors)
        (folder / (EMBEDDINGS_FILE + ".tmp")).replace(folder / EMBEDDINGS_FILE)

    @classmethod
    def load(cls, folder: Path) -> DenseIndex:
        """The saved FAISS index and its embeddings; a missing FAISS file is rebuilt from the embeddings."""
        vectors = np.load(folder / EMBEDDINGS_FILE)
        faiss_path = folder / FAISS_FILE
        index = _faiss().read_index(str(faiss_path)) if faiss_path.is_file() else None
        if index is not None and index.ntotal != len(vectors):  # type: ignore[attr-defined]
            index = None
        return cls(vectors, index)


def brute_force_search(vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The numpy baseline the benchmark compares FAISS with: a matrix product and a partial sort."""
    scores = queries @ vectors.T
    k = min(k, vectors.shape[0])
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    top_scores = np.take_along_axis(scores, top, axis=1)
    order = np.argsort(-top_scores, axis=1, kind="stable")
    return np.take_along_axis(top_scores, order, axis=1), np.take_along_axis(top, order, axis=1)
