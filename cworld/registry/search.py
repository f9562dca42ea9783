"""The search service behind `cworld search` and `cworld serve`'s `search_tools`.

It opens an index folder (see `cworld.registry.index.store`) and the dependency graph saved beside it
(`graph.json`), ranks tools for a query with the index's default method (the one that measured best on the
quality set when the index was built) or a chosen one, and can attach to every hit the tools that must or
usually run before it — the prerequisites plain similarity misses (ComplexMCP §4.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import BaseModel, Field

from cworld.data_model.tools import ToolSpec
from cworld.errors import UsageError
from cworld.registry.graph import GRAPH_FILE, PrereqRef, build_graph, load_graph, prerequisites, save_graph
from cworld.registry.index.builder import CACHE_FILE, build_index
from cworld.registry.index.embedder import Embedder
from cworld.registry.index.quality import QualityQuery
from cworld.registry.index.store import METHODS, BuildStats, EmbedProgress, Method, ToolIndex

__all__ = ["Hit", "SearchBuild", "SearchService", "build_search_index"]


class Hit(BaseModel):
    """One search result: the tool, its score under the method used, and (on request) its prerequisites."""

    rank: int
    tool_id: str
    score: float
    method: str
    tool: ToolSpec
    prerequisites: list[PrereqRef] = Field(default_factory=list)


@dataclass
class SearchBuild:
    index: ToolIndex
    graph: nx.DiGraph
    stats: BuildStats


def _declared_or_none() -> list[Any]:
    """The sandbox apps' declared edges; none when the sandbox cannot be imported (a catalog-only setup)."""
    try:
        from cworld.registry.graph import declared_prerequisites

        return declared_prerequisites()
    except ImportError:
        return []


def build_search_index(tools: Sequence[ToolSpec], folder: Path, *, embedder: Embedder | None = None,
                       declared: Sequence[Any] | None = None, server_descriptions: dict[str, str] | None = None,
                       quality_set: Path | Sequence[QualityQuery] | None = None,
                       progress: EmbedProgress | None = None) -> SearchBuild:
    """Build (incrementally) the index and the dependency graph of `tools` into `folder`.

    `declared` defaults to every sandbox app's declared prerequisites (edges to tools not in `tools` are
    skipped); `quality_set` (the environment's `registry/eval/queries.jsonl`) lets the build measure which
    ranking method to make the default; `progress` hears of every embedded batch.
    """
    index, stats = build_index(tools, folder, embedder=embedder, server_descriptions=server_descriptions,
                               quality_set=quality_set, progress=progress)
    graph = build_graph(tools, _declared_or_none() if declared is None else declared)
    save_graph(graph, folder / GRAPH_FILE)
    return SearchBuild(index, graph, stats)


class SearchService:
    """Search one index; `with_prereqs` attaches each hit's prerequisites from the dependency graph."""

    def __init__(self, index: ToolIndex, graph: nx.DiGraph) -> None:
        self.index = index
        self.graph = graph

    @classmethod
    def load(cls, folder: Path, embedder: Embedder | None = None) -> SearchService:
        """Open `folder`; without a saved graph, one is inferred from the indexed tools' schemas."""
        if not (folder / "meta.json").is_file():
            raise UsageError(f"no tool index in {folder}; build one with `cworld registry build`")
        index = ToolIndex.load(folder, embedder, query_cache=folder / CACHE_FILE)
        graph_path = folder / GRAPH_FILE
        graph = load_graph(graph_path) if graph_path.is_file() else build_graph(index.tools, _declared_or_none())
        for tool in index.tools:  # graphs saved before nodes carried `read_only` get it from the specs
            if tool.id in graph and "read_only" not in graph.nodes[tool.id]:
                graph.nodes[tool.id]["read_only"] = bool(tool.annotations.read_only_hint)
        return cls(index, graph)

    @property
    def default_method(self) -> Method:
        return self.index.meta.default_method

    def tool(self, tool_id: str) -> ToolSpec:
        row = self.index.row_of.get(tool_id)
        if row is None:
            raise UsageError(f"no tool {tool_id!r} in the index; ids look like server/name")
        return self.index.tools[row]

    def search(self, query: str, k: int = 10, method: Method | None = None, with_prereqs: bool = False) -> list[Hit]:
        return self.search_many([query], k, method, with_prereqs)[0]

    def search_many(self, queries: Sequence[str], k: int = 10, method: Method | None = None,
                    with_prereqs: bool = False) -> list[list[Hit]]:
        """One ranked hit list per query; queries are embedded and searched as one batch."""
        if k < 1:
            raise UsageError(f"k must be at least 1, got {k}")
        if method is not None and method not in METHODS:
            raise UsageError(f"unknown search method {method!r}; use one of {', '.join(METHODS)}")
        texts = [q.strip() for q in queries]
        if not all(texts):
            raise UsageError("a search query is empty; describe what you want to do in a few words")
        used = method or self.default_method
        ranked = self.index.rank(texts, k, used)
        return [[self._hit(rank, row, score, used, with_prereqs) for rank, (row, score) in enumerate(hits, 1)]
                for hits in ranked]

    def _hit(self, rank: int, row: int, score: float, method: str, with_prereqs: bool) -> Hit:
        tool = self.index.tools[row]
        prereqs = prerequisites(self.graph, tool.id) if with_prereqs else []
        return Hit(rank=rank, tool_id=tool.id, score=round(float(score), 6), method=method, tool=tool,
                   prerequisites=prereqs)


def surfaced_tools(hits: Sequence[Hit]) -> list[str]:
    """The hits and, after each, its prerequisites not yet listed: what an agent sees with --with-prereqs."""
    out: list[str] = []
    for hit in hits:
        for tool_id in [hit.tool_id, *(p.tool_id for p in hit.prerequisites)]:
            if tool_id not in out:
                out.append(tool_id)
    return out
