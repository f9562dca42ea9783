"""The tool index: one document per tool, dense (FAISS) and BM25 rankings, and their fusion.

`build_index(tools, folder)` builds or incrementally rebuilds an index folder; `ToolIndex.load(folder)`
opens one without re-embedding; `ToolIndex.search(queries, k, method)` ranks tools for a batch of queries.
"""

from cworld.registry.index.builder import build_index
from cworld.registry.index.documents import ToolDocument, split_identifier, tool_document
from cworld.registry.index.embedder import Embedder, HashEmbedder, resolve_embedder
from cworld.registry.index.hybrid import FusionParams
from cworld.registry.index.store import DEFAULT_METHOD, METHODS, BuildStats, IndexMeta, Method, ToolIndex

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "BuildStats",
    "Embedder",
    "FusionParams",
    "HashEmbedder",
    "IndexMeta",
    "Method",
    "ToolDocument",
    "ToolIndex",
    "build_index",
    "resolve_embedder",
    "split_identifier",
    "tool_document",
]
