"""The whole-registry browse: `search_tools` outside an episode ranks the built registry's tools for an
intent (dense + BM25 + the dependency graph, with each hit's prerequisites).

Only the search is offered outside an episode. Running a tool is an episode's business: it goes through
the state controller (faults, backends, the trajectory), so there is no `call_tool` that would bypass it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from cworld.data_model import ToolSpec
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.registry.build import INDEX_DIR

MAX_K = 50


class FoundTool(BaseModel):
    tool: str = Field(description="the tool id: server/name")
    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    availability: str = Field(description="live: runs on this machine; schema-only: simulated in an episode")
    score: float
    prerequisites: list[str] = Field(default_factory=list, description="tools that usually must run before it")


class SearchResults(BaseModel):
    query: str
    tools: list[FoundTool]


class RegistryBrowse:
    """Search over a built registry index; the embedder loads on the first search."""

    def __init__(self, index: Path) -> None:
        self.index = index
        self._search: Any = None

    @classmethod
    def of(cls, workspace: Workspace) -> RegistryBrowse | None:
        """The browse over the workspace's built registry; None when it was never built."""
        index = workspace.root / "registry" / INDEX_DIR
        return cls(index) if index.is_dir() else None

    def search(self, query: str, k: int = 10) -> SearchResults:
        if not query.strip():
            raise UsageError("search_tools needs a query: describe what you want to do")
        if self._search is None:
            from cworld.registry.search import SearchService

            self._search = SearchService.load(self.index)
        hits = self._search.search(query, k=max(1, min(k, MAX_K)), with_prereqs=True)
        return SearchResults(query=query, tools=[_found(h.tool, h.score, [p.tool_id for p in h.prerequisites])
                                                 for h in hits])


def _found(tool: ToolSpec, score: float, prereqs: list[str]) -> FoundTool:
    return FoundTool(tool=tool.id, server=tool.server, name=tool.name, description=tool.description,
                     input_schema=tool.input_schema, availability=tool.availability, score=round(score, 4),
                     prerequisites=prereqs)
