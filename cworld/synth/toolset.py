"""The tools task synthesis draws on: their specs, the dependency graph, a search index and an embedder.

The tools are the environment's (`cworld.registry.tools.environment_tools`); what synthesis adds is the
graph and the index. With a built registry (`cworld registry build`) both come from the workspace, saved
beside the validated tool list. On a fresh machine there is none: the tools are the sandbox apps' (live)
and the schema-only catalogs, with an in-memory index over them and a graph from their declared and
inferred edges.
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
from cworld.registry.tools import ToolList, environment_tools

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
    harvested: set[str] = field(default_factory=set)
    """Server ids of the harvested catalog (`registry/catalogs/harvested/`) among `tools`."""

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


def load_universe(
    env: Environment, workspace: Workspace, *, need_search: bool = True, harvested: bool = False
) -> ToolUniverse:
    """The environment's tools without the recorded real-server listings (their tools cannot run in a
    sandbox session to verify a gold plan), a graph and an index over them; see the module docstring.

    `harvested`: the harvested catalog's tools too (the built registry's when it was built with
    `--harvested`, else read from the catalog files), for `--pool harvested`."""
    listing = environment_tools(env, workspace)
    tools = listing.merged(recorded=False)
    notes: list[str] = []
    servers = _add_harvested(listing, tools, notes) if harvested else set()
    if listing.built:
        notes.append(f"tools: the built registry ({len(listing.built)} tools) over the sandbox's")
    else:
        if listing.manifest_error:
            notes.append(f"catalogs skipped: {listing.manifest_error}")
        catalogs = len(listing.catalogs)
        notes.append(f"tools: no built registry; sandbox apps and {catalogs} schema-only catalog tools")
    graph = _graph(workspace, list(tools.values()), notes)
    universe = ToolUniverse(tools=tools, graph=graph, notes=notes, harvested=servers)
    if need_search:
        _attach_search(universe, env, workspace, bool(listing.built))
    return universe


def _add_harvested(listing: ToolList, tools: dict[str, ToolSpec], notes: list[str]) -> set[str]:
    """The harvested servers' ids; their tools are added to `tools` when the built registry lacks them."""
    servers = {t.server for t in listing.harvested}
    if any(t.server in servers for t in tools.values()):
        notes.append(f"harvested pool: {len(servers)} servers of the built registry")
        return {t.server for t in tools.values() if t.server in servers}
    tools.update({t.id: t for t in listing.harvested})
    notes.append(
        f"harvested pool: {len(servers)} servers read from registry/catalogs/harvested/ (no build holds them; "
        "`cworld run` reads them there too)"
    )
    return servers


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
