"""The tool index as one folder: documents, dense vectors (FAISS), BM25 statistics and metadata.

```
meta.json        model, dim, count, default method (and how it was chosen), fusion and BM25 settings,
                 the content hash of every document
tools.jsonl      the indexed ToolSpecs, in row order
docs.jsonl       the documents (text, fields, hash), in row order
embeddings.npy   the dense vectors;  dense.faiss  the FAISS index over them
bm25_tf.npz      weighted term frequencies;  bm25_vocab.json  the vocabulary and BM25 parameters
```

Loading never re-embeds. Rebuilding embeds only documents whose content hash is new: vectors of unchanged
documents are taken from the previous index (same model only), the rest go through the embedder, which
the caller usually wraps in an `EmbeddingCache` so a document seen in any earlier build is free too.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from cworld.data_model.jsonl import write_text_atomic
from cworld.data_model.tools import ToolSpec
from cworld.errors import ConfigError, UsageError
from cworld.registry.index.bm25 import BM25Index, BM25Params
from cworld.registry.index.card_vocabulary import CardVocabulary, load_card_vocabularies
from cworld.registry.index.dense import DenseIndex
from cworld.registry.index.documents import ToolDocument, tool_documents
from cworld.registry.index.embedder import Embedder, resolve_embedder
from cworld.registry.index.example_requests import example_requests, vocabulary_for
from cworld.registry.index.hybrid import FusionParams, fuse
from cworld.registry.index.multilingual import (
    MultilingualIndex,
    multilingual_text,
    on_dense_scale,
    routed_rows,
)

Method = Literal["dense", "bm25", "hybrid"]
METHODS: tuple[Method, ...] = ("dense", "bm25", "hybrid")
#: Used when an index is built without a quality set to measure on. Measured with benchmarks/retrieval.py.
DEFAULT_METHOD: Method = "hybrid"
INDEX_FORMAT = 1
#: Documents per call to the embedder. Each batch lands in the embedding cache as soon as it is embedded,
#: so an interrupted build resumes where it stopped; small enough that a batch takes seconds on a CPU.
EMBED_BATCH = 64
EmbedProgress = Callable[[int, int], None]
"""Called after each embedded batch with (documents done, documents to embed)."""
META_FILE, TOOLS_FILE, DOCS_FILE = "meta.json", "tools.jsonl", "docs.jsonl"


class IndexMeta(BaseModel):
    format: int = INDEX_FORMAT
    model: str
    model_spec: str
    dim: int
    count: int
    default_method: Method = DEFAULT_METHOD
    method_source: str = "built-in default"
    method_scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    fusion: dict[str, Any] = Field(default_factory=dict)
    hashes: dict[str, str] = Field(default_factory=dict, description="tool id -> document content hash")
    multilingual_model: str = Field("", description="the model of the non-English documents' vectors, if any")
    built_at: str = ""


@dataclass
class BuildStats:
    """Where each document's vector came from: the model (`embedded`), the embedding cache (`cached`: seen
    in an earlier or interrupted build) or the previous index in the folder (`reused`: unchanged)."""

    total: int
    embedded: int
    reused: int
    seconds: float
    cached: int = 0


def _reusable_vectors(previous: ToolIndex | None, model: str) -> dict[str, np.ndarray]:
    if previous is None or previous.meta.model != model:
        return {}
    hashes = previous.meta.hashes  # saved with the index: hashing 3k documents again costs seconds
    return {hashes.get(doc.tool_id) or doc.content_hash: previous.dense.vectors[i] for i, doc in enumerate(previous.docs)}


def embed_documents(docs: list[ToolDocument], embedder: Embedder, reuse: dict[str, np.ndarray], *,
                    batch: int = EMBED_BATCH, progress: EmbedProgress | None = None,
                    hashes: list[str] | None = None) -> tuple[np.ndarray, int]:
    """Vectors for `docs` in order, embedding in batches only those whose hash `reuse` lacks (a repeated
    text once); returns (vectors, documents sent to the embedder). `hashes`: the docs' content hashes."""
    hashes = hashes if hashes is not None else [d.content_hash for d in docs]
    todo = list(dict.fromkeys(h for h in hashes if h not in reuse))
    text_of = {h: d.text for h, d in zip(hashes, docs, strict=True)}
    fresh: dict[str, np.ndarray] = {}
    for start in range(0, len(todo), max(1, batch)):
        chunk = todo[start : start + max(1, batch)]
        fresh.update(zip(chunk, embedder.embed_documents([text_of[h] for h in chunk]), strict=True))
        if progress is not None:
            progress(start + len(chunk), len(todo))
    if not docs:
        return np.zeros((0, 1), np.float32), 0
    vectors = np.stack([fresh[h] if h in fresh else reuse[h] for h in hashes])
    return vectors.astype(np.float32), len(todo)


class ToolIndex:
    """Search tools by text. `rank` returns row ids; `search` returns tool ids; both take query batches."""

    def __init__(self, tools: list[ToolSpec], docs: list[ToolDocument], dense: DenseIndex, bm25: BM25Index,
                 meta: IndexMeta, embedder: Embedder | None = None, query_cache: Path | None = None,
                 multilingual: MultilingualIndex | None = None, multilingual_embedder: Embedder | None = None) -> None:
        self.tools, self.docs, self.dense, self.bm25, self.meta = tools, docs, dense, bm25, meta
        self._embedder = embedder
        self.multilingual = multilingual
        self._multilingual_embedder = multilingual_embedder
        self.query_cache = query_cache
        self.fusion = FusionParams.from_json(meta.fusion)
        self.row_of = {t.id: i for i, t in enumerate(tools)}

    # --- building -----------------------------------------------------------------------------------
    @classmethod
    def build(cls, tools: Sequence[ToolSpec], embedder: Embedder, *, server_descriptions: dict[str, str] | None = None,
              previous: ToolIndex | None = None, fusion: FusionParams | None = None,
              bm25_params: BM25Params | None = None, batch: int = EMBED_BATCH,
              progress: EmbedProgress | None = None,
              multilingual: Embedder | None = None,
              card_vocabularies: dict[str, CardVocabulary] | None = None,
              with_examples: bool = True) -> tuple[ToolIndex, BuildStats]:
        """Index `tools` (duplicate ids rejected); reuse `previous`'s vectors for unchanged documents and
        embed the rest `batch` documents at a time, reporting each batch to `progress`. With `multilingual`,
        the documents not in English are embedded by that model too (multilingual.py). Every document gets
        its tool's example requests (example_requests.py), with the words of `card_vocabularies` (default: the
        packaged cards); `with_examples=False` builds the documents as they were before them."""
        start = time.perf_counter()
        tools = list(tools)
        dupes = sorted(i for i, n in Counter(t.id for t in tools).items() if n > 1)
        if dupes:
            raise UsageError(f"two tools share an id: {dupes[:5]}; server ids and tool names must be unique")
        examples = tools_example_requests(tools, card_vocabularies) if with_examples else None
        docs = tool_documents(tools, server_descriptions, examples)
        model_before = getattr(embedder, "embedded", None)  # a CachedEmbedder counts what reached the model
        reuse = _reusable_vectors(previous, embedder.name)
        hashes = [d.content_hash for d in docs]
        vectors, sent = embed_documents(docs, embedder, reuse, batch=batch, progress=progress, hashes=hashes)
        reused = sum(h in reuse for h in hashes)
        embedded = sent if model_before is None else int(embedder.embedded) - model_before  # type: ignore[attr-defined]
        meta = IndexMeta(
            model=embedder.name, model_spec=embedder.spec, dim=int(vectors.shape[1]), count=len(tools),
            fusion=(fusion or FusionParams()).to_json(), hashes={d.tool_id: h for d, h in zip(docs, hashes, strict=True)},
            built_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
        )
        routed = multilingual_index(docs, multilingual) if multilingual is not None else None
        meta.multilingual_model = routed.model if routed is not None else ""
        index = cls(tools, docs, DenseIndex(vectors), BM25Index.build([d.fields for d in docs], bm25_params), meta, embedder,
                    multilingual=routed, multilingual_embedder=multilingual)
        stats = BuildStats(len(tools), embedded, reused, time.perf_counter() - start, sent - embedded)
        return index, stats

    # --- persistence ----------------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write every file (each via a temp file), meta.json last: a reader never sees a half index."""
        folder.mkdir(parents=True, exist_ok=True)
        _write_lines(folder / TOOLS_FILE, [t.model_dump_json() for t in self.tools])
        _write_lines(folder / DOCS_FILE, [json.dumps(d.to_json(), ensure_ascii=False) for d in self.docs])
        self.dense.save(folder)
        self.bm25.save(folder)
        if self.multilingual is not None:
            self.multilingual.save(folder)
        _write_lines(folder / META_FILE, [self.meta.model_dump_json(indent=2)])

    @classmethod
    def load(cls, folder: Path, embedder: Embedder | None = None, query_cache: Path | None = None) -> ToolIndex:
        """Open a saved index. Without `embedder`, the index's own model is loaded on the first dense query,
        behind an embedding cache at `query_cache` when given (a repeated query then needs no model)."""
        meta_path = folder / META_FILE
        if not meta_path.is_file():
            raise UsageError(f"no tool index in {folder}; build one with `cworld registry build`")
        meta = IndexMeta.model_validate_json(meta_path.read_text(encoding="utf-8"))
        if meta.format != INDEX_FORMAT:
            raise UsageError(f"{folder} holds an index of format {meta.format}; rebuild it with `cworld registry build`")
        if embedder is not None and embedder.name != meta.model:
            raise ConfigError(f"the index in {folder} was built with {meta.model}, not {embedder.name}; rebuild it "
                              "with `cworld registry build` or search with the model it was built with")
        tools = [ToolSpec.model_validate_json(line) for line in _read_lines(folder / TOOLS_FILE)]
        docs = [_doc_from_json(json.loads(line)) for line in _read_lines(folder / DOCS_FILE)]
        multilingual = MultilingualIndex.load(folder) if meta.multilingual_model else None
        return cls(tools, docs, DenseIndex.load(folder), BM25Index.load(folder), meta, embedder, query_cache, multilingual)

    # --- searching -----------------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            embedder = resolve_embedder(self.meta.model_spec)
            if self.query_cache is not None:
                from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache

                embedder = CachedEmbedder(embedder, EmbeddingCache(self.query_cache))
            self._embedder = embedder
        return self._embedder

    @property
    def multilingual_embedder(self) -> Embedder:
        if self._multilingual_embedder is None:
            self._multilingual_embedder = self._behind_query_cache(resolve_embedder(self.meta.multilingual_model))
        return self._multilingual_embedder

    def _behind_query_cache(self, embedder: Embedder) -> Embedder:
        if self.query_cache is None:
            return embedder
        from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache

        return CachedEmbedder(embedder, EmbeddingCache(self.query_cache))

    def use_embedder(self, embedder: Embedder) -> None:
        """Swap in an equivalent embedder (e.g. the same model behind a cache)."""
        if embedder.name != self.meta.model:
            raise ConfigError(f"the index was built with {self.meta.model}, not {embedder.name}")
        self._embedder = embedder

    def rank(self, queries: list[str], k: int, method: Method | None = None) -> list[list[tuple[int, float]]]:
        """For each query the best k rows as (row, score), best first."""
        method = method or self.meta.default_method
        if method not in METHODS:
            raise UsageError(f"unknown search method {method!r}; use one of {', '.join(METHODS)}")
        if not queries or self.dense.size == 0 or k <= 0:
            return [[] for _ in queries]
        if method == "bm25":
            return _pairs(*self.bm25.search(queries, k), positive_only=True)
        dense = self.dense_ranking(queries, max(k, self.fusion.depth))
        if method == "dense":
            return [pairs[:k] for pairs in _pairs(*dense)]
        lexical = self.bm25.search(queries, self.fusion.depth)
        out = []
        for q in range(len(queries)):
            keep = lexical[0][q] > 0
            out.append(fuse((dense[1][q], dense[0][q]), (lexical[1][q][keep], lexical[0][q][keep]), self.fusion, k))
        return out

    def dense_ranking(self, queries: list[str], depth: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows) of the dense ranking: MiniLM, with the non-English documents' multilingual scores
        put on its scale (multilingual.py) where the index has them."""
        vectors = self.embedder.embed_queries(queries)
        routed = self.multilingual
        if routed is None or routed.size == 0:
            return self.dense.search(vectors, depth)
        full = np.asarray(vectors, np.float32) @ self.dense.vectors.T  # the z-mapping needs every row's score
        e5 = routed.scores(self.multilingual_embedder.embed_queries(queries))
        for q in range(len(queries)):
            mapped = on_dense_scale(e5[q], full[q])
            full[q, routed.rows] = np.maximum(full[q, routed.rows], mapped)
        depth = min(depth, full.shape[1])
        rows = np.argsort(-full, axis=1, kind="stable")[:, :depth]
        return np.take_along_axis(full, rows, axis=1), rows

    def search(self, queries: list[str], k: int, method: Method | None = None) -> list[list[tuple[str, float]]]:
        """Like `rank`, with tool ids instead of rows."""
        return [[(self.tools[row].id, score) for row, score in hits] for hits in self.rank(queries, k, method)]


def tools_example_requests(tools: list[ToolSpec], vocabularies: dict[str, CardVocabulary] | None = None) -> list[list[str]]:
    """Each tool's generated example requests (example_requests.py), with its card's words."""
    vocabularies = load_card_vocabularies() if vocabularies is None else vocabularies
    return [example_requests(tool, vocabulary_for(tool, vocabularies)) for tool in tools]


def multilingual_index(docs: list[ToolDocument], embedder: Embedder) -> MultilingualIndex:
    """The non-English documents' rows and their vectors from the multilingual `embedder`."""
    rows = routed_rows(docs)
    texts = [multilingual_text(docs[row]) for row in rows]
    vectors = embedder.embed_documents(texts) if texts else np.zeros((0, 1), np.float32)
    return MultilingualIndex(np.asarray(rows, np.int64), np.asarray(vectors, np.float32), embedder.name)


def _pairs(scores: np.ndarray, ids: np.ndarray, positive_only: bool = False) -> list[list[tuple[int, float]]]:
    out = []
    for row_scores, row_ids in zip(scores.tolist(), ids.tolist(), strict=True):
        out.append([(i, s) for i, s in zip(row_ids, row_scores, strict=True) if i >= 0 and (s > 0 or not positive_only)])
    return out


def _doc_from_json(data: dict[str, Any]) -> ToolDocument:
    return ToolDocument(tool_id=data["tool_id"], text=data["text"], fields=data.get("fields", {}))


def _write_lines(path: Path, lines: list[str]) -> None:
    write_text_atomic(path, "".join(line + "\n" for line in lines))


def _read_lines(path: Path) -> list[str]:
    if not path.is_file():
        raise UsageError(f"{path} is missing: the index is incomplete; rebuild it with `cworld registry build`")
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
