"""The tools task synthesis draws on: their specs, the dependency graph, a search index and an embedder.

With a built registry (`cworld registry build`) everything comes from the workspace: the validated tool
list, the index and the graph saved beside it. On a fresh machine there is none, so the universe is
assembled from what ships with cworld: every sandbox app's tools (live) plus the environment's
schema-only catalogs, an in-memory index over them and a graph from their declared and inferred edges.
Which of these happened is kept in `notes`, for the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import networkx as nx

from cworld.data_model import ToolSpec
from cworld.environment import Environment, Workspace
from cworld.errors import CworldError

INDEX_PARTS = ("registry", "index")


@dataclass
class ToolUniverse:
    tools: dict[str, ToolSpec]
    graph: nx.DiGraph
    search: Any = None
    """A `SearchService`-like object with `search_many(queries, k)`, or None when no index could be had."""
    embedder: Any = None
    """The registry's embedder (for near-duplicate checks), or None (token Jaccard is used then)."""
    notes: list[str] = field(default_factory=list)

    @cached_property
    def sandbox_apps(self) -> set[str]:
        from cworld.sandbox.catalog import all_apps

        return {app.name for app in all_apps()}

    def spec(self, tool_id: str) -> ToolSpec | None:
        return self.tools.get(tool_id)

    def executable(self, tool_id: str) -> bool:
        """Runs in-process in a seeded sandbox session, so a gold plan using it can be executed."""
        spec = self.tools.get(tool_id)
        return spec is not None and spec.availability == "live" and spec.server in self.sandbox_apps

    def servers(self) -> list[str]:
        return sorted({t.server for t in self.tools.values()})

    def tool_names(self) -> set[str]:
        return {t.name for t in self.tools.values()}


def load_universe(env: Environment, workspace: Workspace, *, need_search: bool = True) -> ToolUniverse:
    """The registry's tools when built, else the sandbox's and the catalogs'; see the module docstring."""
    notes: list[str] = []
    tools = _sandbox_tools()
    built = _registry_tools(workspace)
    if built:
        tools.update(built)
        notes.append(f"tools: the built registry ({len(built)} tools) over the sandbox's")
    else:
        catalog = _catalog_tools(env, notes)
        tools.update(catalog)
        notes.append(f"tools: no built registry; sandbox apps and {len(catalog)} schema-only catalog tools")
    graph = _graph(workspace, list(tools.values()), notes)
    universe = ToolUniverse(tools=tools, graph=graph, notes=notes)
    if need_search:
        _attach_search(universe, env, workspace, bool(built))
    return universe


def _sandbox_tools() -> dict[str, ToolSpec]:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import tool_specs

    return {spec.id: spec for app in all_apps() for spec in tool_specs(app)}


def _registry_tools(workspace: Workspace) -> dict[str, ToolSpec]:
    from cworld.registry.build import load_tools

    if not (workspace.root / "registry" / "tools.jsonl").is_file():
        return {}
    return {t.id: t for t in load_tools(workspace)}


def _catalog_tools(env: Environment, notes: list[str]) -> dict[str, ToolSpec]:
    from cworld.registry.manifest import load_catalog, load_manifest

    found: dict[str, ToolSpec] = {}
    try:
        specs = load_manifest(env)
    except CworldError as exc:
        notes.append(f"catalogs skipped: {exc}")
        return found
    for spec in specs:
        if spec.kind == "catalog":
            for tool in load_catalog(env, spec):
                found[tool.id] = tool.model_copy(
                    update={"availability": "schema-only", "server_kind": "catalog"}
                )
    return found


def _graph(workspace: Workspace, tools: list[ToolSpec], notes: list[str]) -> nx.DiGraph:
    from cworld.registry.graph import GRAPH_FILE, build_graph, declared_prerequisites, load_graph

    path = workspace.root.joinpath(*INDEX_PARTS, GRAPH_FILE)
    if path.is_file():
        graph = load_graph(path)
        missing = [t.id for t in tools if t.id not in graph]
        if not missing:
            notes.append("dependency graph: the registry's")
            return graph
    notes.append("dependency graph: built from the tools' declared and inferred edges")
    return build_graph(tools, declared_prerequisites())


def _attach_search(universe: ToolUniverse, env: Environment, workspace: Workspace, built: bool) -> None:
    folder = workspace.root.joinpath(*INDEX_PARTS)
    try:
        if built and (folder / "meta.json").is_file():
            from cworld.registry.search import SearchService

            universe.search = SearchService.load(folder)
            universe.embedder = universe.search.index.embedder
            universe.notes.append(f"retrieval: the registry's index ({universe.search.default_method})")
            return
        universe.search = _memory_search(universe, workspace)
        universe.embedder = universe.search.index.embedder
        universe.notes.append(f"retrieval: an in-memory index over the tools ({universe.embedder.name})")
    except (CworldError, ImportError, OSError, RuntimeError, ValueError) as exc:
        universe.search = _lexical_search(universe)
        universe.embedder = None
        universe.notes.append(f"retrieval: BM25 only; no embedder ({str(exc).splitlines()[0][:120]})")


def _memory_search(universe: ToolUniverse, workspace: Workspace) -> Any:
    from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache
    from cworld.registry.index.embedder import resolve_embedder
    from cworld.registry.index.store import ToolIndex
    from cworld.registry.search import SearchService

    embedder = CachedEmbedder(resolve_embedder(), EmbeddingCache(workspace.cache / "synth_embed.sqlite"))
    index, _ = ToolIndex.build(
        sorted(universe.tools.values(), key=lambda t: t.id),
        embedder,
        server_descriptions=_server_descriptions(),
    )
    return SearchService(index, universe.graph)


def _lexical_search(universe: ToolUniverse) -> Any:
    """BM25 over the tools with a hashing embedder standing in for vectors; searched with method bm25."""
    from cworld.registry.index.embedder import HashEmbedder
    from cworld.registry.index.store import ToolIndex
    from cworld.registry.search import SearchService

    index, _ = ToolIndex.build(
        sorted(universe.tools.values(), key=lambda t: t.id),
        HashEmbedder(64),
        server_descriptions=_server_descriptions(),
    )
    index.meta.default_method = "bm25"
    return SearchService(index, universe.graph)


def _server_descriptions() -> dict[str, str]:
    from cworld.sandbox.catalog import all_apps

    return {app.name: app.description for app in all_apps()}
