"""`build_index`: what `cworld registry build` calls to (re)build the index folder in the workspace.

It loads the previous index from the same folder (if any) so unchanged documents keep their vectors,
embeds the rest through a per-folder embedding cache, measures dense / BM25 / hybrid on the quality set
(when one is given and enough of its gold tools are indexed) to pick the default method, and saves.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cworld.data_model.tools import ToolSpec
from cworld.errors import CworldError
from cworld.registry.index.bm25 import BM25Params
from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache
from cworld.registry.index.embedder import E5_SPEC, Embedder, HashEmbedder, resolve_embedder
from cworld.registry.index.hybrid import FusionParams
from cworld.registry.index.quality import (
    MIN_QUERIES_TO_CHOOSE,
    QualityQuery,
    applicable,
    best_method,
    load_queries,
    measure_methods,
)
from cworld.registry.index.store import EMBED_BATCH, METHODS, BuildStats, EmbedProgress, ToolIndex

CACHE_FILE = "embed_cache.sqlite"
#: `off` builds an index without the multilingual model (the non-English documents then rely on MiniLM).
MULTILINGUAL_ENV = "CWORLD_MULTILINGUAL_MODEL"


def default_multilingual(embedder: Embedder) -> Embedder | None:
    """The multilingual model for non-English documents: e5 unless CWORLD_MULTILINGUAL_MODEL=off or the main
    embedder is the model-free hashing one (tests, cost benchmarks)."""
    import os

    spec = os.environ.get(MULTILINGUAL_ENV, E5_SPEC).strip()
    inner = getattr(embedder, "inner", embedder)
    if spec.lower() in ("off", "none", "") or isinstance(inner, HashEmbedder):
        return None
    return resolve_embedder(spec)


def cached(embedder: Embedder, folder: Path) -> CachedEmbedder:
    """`embedder` behind the SQLite cache kept in the index folder."""
    if isinstance(embedder, CachedEmbedder):
        return embedder
    return CachedEmbedder(embedder, EmbeddingCache(folder / CACHE_FILE))


def previous_index(folder: Path) -> ToolIndex | None:
    """The index already in `folder`, or None when there is none or it cannot be read (then: full rebuild)."""
    try:
        return ToolIndex.load(folder) if (folder / "meta.json").is_file() else None
    except (CworldError, OSError, ValueError):
        return None


def choose_default_method(index: ToolIndex, queries: Sequence[QualityQuery]) -> None:
    """Set `index.meta.default_method` to the best-measuring method when the quality set applies."""
    usable = applicable(queries, set(index.row_of))
    if len(usable) < MIN_QUERIES_TO_CHOOSE:
        index.meta.method_source = f"built-in default ({len(usable)} quality-set queries apply, need {MIN_QUERIES_TO_CHOOSE})"
        return

    def search(texts: list[str], k: int, method: str) -> list[list[str]]:
        return [[tool_id for tool_id, _ in hits] for hits in index.search(texts, k, method)]  # type: ignore[arg-type]

    scores = measure_methods(search, usable, METHODS)
    index.meta.method_scores = scores
    index.meta.default_method = best_method(scores)  # type: ignore[assignment]
    index.meta.method_source = f"measured on {len(usable)} quality-set queries (best Recall@5, then MRR)"


def build_index(tools: Sequence[ToolSpec], folder: Path, *, embedder: Embedder | None = None,
                server_descriptions: dict[str, str] | None = None, quality_set: Path | Sequence[QualityQuery] | None = None,
                fusion: FusionParams | None = None, bm25_params: BM25Params | None = None,
                batch: int = EMBED_BATCH, progress: EmbedProgress | None = None,
                multilingual: Embedder | None | str = "default") -> tuple[ToolIndex, BuildStats]:
    """Build (incrementally) and save the index of `tools` in `folder`; returns it and what was embedded.

    New documents are embedded `batch` at a time through the folder's embedding cache, each batch stored as
    it is done: a build cut short (Ctrl-C, a crash) leaves its batches in the cache, and the next one
    embeds only what is still missing. `multilingual`: the model of the non-English documents ("default":
    `default_multilingual`; None: none)."""
    folder.mkdir(parents=True, exist_ok=True)
    embedder = cached(embedder or resolve_embedder(), folder)
    second = default_multilingual(embedder) if isinstance(multilingual, str) else multilingual
    index, stats = ToolIndex.build(tools, embedder, server_descriptions=server_descriptions,
                                   previous=previous_index(folder), fusion=fusion, bm25_params=bm25_params,
                                   batch=batch, progress=progress,
                                   multilingual=cached(second, folder) if second is not None else None)
    if quality_set is not None:
        queries = load_queries(quality_set) if isinstance(quality_set, Path) else list(quality_set)
        choose_default_method(index, queries)
    index.save(folder)
    return index, stats


def server_descriptions(manifest: Path | None = None) -> dict[str, str]:
    """server id -> description: the manifest's (`registry/servers.yaml`) and every sandbox app's own.

    Documents carry them so a tool is found by the world it lives in ("in the online store", "the repo").
    """
    import yaml

    out: dict[str, str] = {}
    try:
        from cworld.sandbox.catalog import all_apps

        out.update({app.name: " ".join(app.description.split()) for app in all_apps()})
    except ImportError:
        pass
    if manifest is not None and manifest.is_file():
        data = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
        for entry in data.get("servers") or []:
            if isinstance(entry, dict) and entry.get("id") and entry.get("description"):
                out[str(entry["id"])] = " ".join(str(entry["description"]).split())
    return out
