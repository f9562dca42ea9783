"""Tool search for agents: `search_tools(query, k)` over the environment's tools.

Two searchers behind one protocol. `BM25Search` indexes the episode's tools in process (a few ms for a
few hundred tools, no model to load): the default, always available. `RegistrySearch` asks the built
registry index (`<workspace>/registry/index`, dense + BM25 + the dependency graph), the paper's
retrieval index, when one exists. Either returns `ToolSpec`s, best first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cworld.data_model import ToolSpec
from cworld.environment import Workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.registry.index.bm25 import BM25Index


class ToolSearch(Protocol):
    async def search(self, query: str, k: int) -> list[ToolSpec]: ...


class LazySearch:
    """Builds the real searcher on the first search: runs whose agents never search pay nothing."""

    def __init__(self, factory: Callable[[], ToolSearch]) -> None:
        self._factory = factory
        self._searcher: ToolSearch | None = None

    async def search(self, query: str, k: int) -> list[ToolSpec]:
        if self._searcher is None:
            self._searcher = self._factory()
        return await self._searcher.search(query, k)


class BM25Search:
    """BM25F over the tools' names, descriptions, parameters and servers (the registry's own fields)."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self.tools = list(tools)
        self._index = _bm25_for(self.tools)

    async def search(self, query: str, k: int) -> list[ToolSpec]:
        return self.search_sync(query, k)

    def search_sync(self, query: str, k: int) -> list[ToolSpec]:
        if not self.tools or not query.strip() or k < 1:
            return []
        scores, rows = self._index.search([query], k)
        return [self.tools[int(r)] for r, s in zip(rows[0], scores[0], strict=True) if s > 0]


_INDEXES: dict[tuple[str, ...], BM25Index] = {}
_MAX_INDEXES = 8


def _bm25_for(tools: list[ToolSpec]) -> BM25Index:
    """One index per distinct tool set: every episode of a run shares it."""
    from cworld.registry.index.bm25 import BM25Index
    from cworld.registry.index.documents import tool_documents

    key = tuple(t.id for t in tools)
    index = _INDEXES.get(key)
    if index is None:
        if len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.pop(next(iter(_INDEXES)))
        index = _INDEXES[key] = BM25Index.build([doc.fields for doc in tool_documents(tools)])
    return index


class RegistrySearch:
    """The workspace's built retrieval index, limited to tools this episode can call."""

    def __init__(self, folder: Path, tools: Mapping[str, ToolSpec]) -> None:
        from cworld.registry.search import SearchService

        self.service = SearchService.load(folder)
        self.tools = tools

    async def search(self, query: str, k: int) -> list[ToolSpec]:
        hits = await asyncio.to_thread(self.service.search, query, k * 2, None, True)
        found: list[ToolSpec] = []
        for hit in hits:
            for tool_id in [hit.tool_id, *(p.tool_id for p in hit.prerequisites)]:
                spec = self.tools.get(tool_id)
                if spec is not None and spec not in found:
                    found.append(spec)
        return found[:k]


def registry_index_folder(workspace: Workspace) -> Path | None:
    folder = workspace.root / "registry" / "index"
    return folder if (folder / "meta.json").is_file() else None


def default_search(tools: Mapping[str, ToolSpec], workspace: Workspace | None = None,
                   prefer_registry: bool = False) -> ToolSearch:
    """BM25 over `tools`; the registry index instead when asked for (it must have been built)."""
    if not prefer_registry:
        return BM25Search(sorted(tools.values(), key=lambda t: t.id))
    folder = registry_index_folder(workspace) if workspace is not None else None
    if folder is None:
        raise UsageError("no registry index in the workspace; run `cworld registry build` or drop --registry-search")
    return RegistrySearch(folder, tools)
