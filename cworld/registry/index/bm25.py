"""Okapi BM25 over fielded tool documents, as one sparse matrix product.

Fields are weighted BM25F-style: a term's frequency is the weighted sum of its counts in each field
(a word in the tool's name counts `FIELD_WEIGHTS["name"]` times), and so is the document length. All
query-independent factors are folded into one (documents x vocabulary) matrix `W`, so scoring a batch of
queries is `Q @ W.T` with `Q` the queries' term counts (`W.T` is kept term-major, so a query touches only
the rows of its own terms):

    W[d, t] = idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * len(d) / avg_len))
    idf(t)  = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from cworld.registry.index.text import tokenize

BM25_MATRIX_FILE = "bm25_tf.npz"
BM25_VOCAB_FILE = "bm25_vocab.json"
#: Up to this many queries are scored one by one (`query_scores`); more, as one sparse matrix product.
SMALL_BATCH = 8

#: Parameter text is down-weighted (long schemas repeat words that say little, and name the tools an id
#: comes from: "from list_messages or search_messages"); the name needs no boost, since descriptions restate
#: it. Chosen on the dev half of the quality set (BM25 alone). 0.5 gained one intents-dev query at 8,575
#: tools and lost on the quality set and both harvested sets (docs/registry-index.md), so 0.25 stays. The
#: generated example requests (example_requests.py) weigh 1.0, chosen with the fusion on the dev sets only.
FIELD_WEIGHTS: dict[str, float] = {"name": 1.0, "description": 1.0, "params": 0.25, "server": 1.0, "examples": 1.0}


@dataclass(frozen=True)
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    field_weights: dict[str, float] = field(default_factory=lambda: dict(FIELD_WEIGHTS))


def weighted_counts(fields: dict[str, str], weights: dict[str, float]) -> dict[str, float]:
    """A document's term frequencies, each field's counts scaled by its weight."""
    counts: dict[str, float] = defaultdict(float)
    for name, text in fields.items():
        weight = weights.get(name, 1.0)
        if weight <= 0:
            continue
        for token in tokenize(text):
            counts[token] += weight
    return counts


class BM25Index:
    """Term frequencies (kept for persistence) and the folded score matrix `W` (documents x vocabulary)."""

    def __init__(self, tf: sp.csr_matrix, vocab: list[str], params: BM25Params) -> None:
        self.tf = tf.tocsr().astype(np.float32)
        self.vocab = vocab
        self.column = {term: i for i, term in enumerate(vocab)}
        self.params = params
        self.weights = self._fold(self.tf, params)
        #: The same matrix term-major (vocabulary x documents, CSR): a query adds up the rows of its terms.
        self.by_term = self.weights.T.tocsr()

    @classmethod
    def build(cls, documents: list[dict[str, str]], params: BM25Params | None = None) -> BM25Index:
        params = params or BM25Params()
        column: dict[str, int] = {}
        rows, cols, vals = [], [], []
        for row, fields in enumerate(documents):
            for term, count in weighted_counts(fields, params.field_weights).items():
                rows.append(row)
                cols.append(column.setdefault(term, len(column)))
                vals.append(count)
        tf = sp.csr_matrix((vals, (rows, cols)), shape=(len(documents), len(column)), dtype=np.float32)
        return cls(tf, list(column), params)

    @staticmethod
    def _fold(tf: sp.csr_matrix, params: BM25Params) -> sp.csr_matrix:
        n_docs = tf.shape[0]
        if n_docs == 0 or tf.nnz == 0:
            return tf.copy()
        df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        lengths = np.asarray(tf.sum(axis=1)).ravel()
        norm = params.k1 * (1 - params.b + params.b * lengths / max(lengths.mean(), 1e-9))
        row_of = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
        data = tf.data.astype(np.float64)
        folded = idf[tf.indices] * data * (params.k1 + 1) / (data + norm[row_of])
        return sp.csr_matrix((folded.astype(np.float32), tf.indices, tf.indptr), shape=tf.shape)

    @property
    def size(self) -> int:
        return int(self.tf.shape[0])

    def query_matrix(self, queries: list[str]) -> sp.csr_matrix:
        """Queries as term counts over the vocabulary; unknown terms score nothing and are dropped."""
        rows, cols, vals = [], [], []
        for row, query in enumerate(queries):
            for term, count in Counter(tokenize(query)).items():
                col = self.column.get(term)
                if col is not None:
                    rows.append(row)
                    cols.append(col)
                    vals.append(float(count))
        return sp.csr_matrix((vals, (rows, cols)), shape=(len(queries), len(self.vocab)), dtype=np.float32)

    def scores(self, queries: list[str]) -> np.ndarray:
        """Dense (n_queries x n_docs) scores. For large corpora use `search`, which works in chunks."""
        return (self.query_matrix(queries) @ self.by_term).toarray().astype(np.float32, copy=False)

    def query_scores(self, query: str) -> np.ndarray:
        """One query's scores over all documents, straight from the term-major rows of its terms: no sparse
        matrix is built (scipy's construction costs more than the scoring at a query's few terms)."""
        out = np.zeros(self.size, np.float32)
        indptr, indices, data = self.by_term.indptr, self.by_term.indices, self.by_term.data
        for term, count in Counter(tokenize(query)).items():
            col = self.column.get(term)
            if col is not None:
                lo, hi = indptr[col], indptr[col + 1]
                out[indices[lo:hi]] += np.float32(count) * data[lo:hi]  # a term's rows are distinct documents
        return out

    def search(self, queries: list[str], k: int, chunk: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """(scores, row ids), each (n_queries x min(k, size)), best first; ties keep document order.
        A few queries are scored term by term, a batch as one sparse product (`SMALL_BATCH`)."""
        k = min(k, self.size)
        all_scores = np.zeros((len(queries), k), np.float32)
        all_ids = np.zeros((len(queries), k), np.int64)
        for start in range(0, len(queries), chunk):
            part = queries[start : start + chunk]
            block = np.stack([self.query_scores(q) for q in part]) if len(part) <= SMALL_BATCH else self.scores(part)
            ids = top_k(block, k)
            all_ids[start : start + len(block)] = ids
            all_scores[start : start + len(block)] = np.take_along_axis(block, ids, axis=1)
        return all_scores, all_ids

    def save(self, folder: Path) -> None:
        tmp = folder / (BM25_MATRIX_FILE + ".tmp.npz")
        sp.save_npz(tmp, self.tf)
        tmp.replace(folder / BM25_MATRIX_FILE)
        payload = {"vocab": self.vocab, "k1": self.params.k1, "b": self.params.b, "field_weights": self.params.field_weights}
        (folder / BM25_VOCAB_FILE).write_text(json.dumps(payload), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> BM25Index:
        payload = json.loads((folder / BM25_VOCAB_FILE).read_text(encoding="utf-8"))
        params = BM25Params(k1=payload["k1"], b=payload["b"], field_weights=payload["field_weights"])
        return cls(sp.load_npz(folder / BM25_MATRIX_FILE).tocsr(), payload["vocab"], params)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Column ids of the k best scores per row, best first; ties inside the top k keep the lower id first."""
    if k >= scores.shape[1]:
        return np.argsort(-scores, axis=1, kind="stable")
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    part.sort(axis=1)
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)
