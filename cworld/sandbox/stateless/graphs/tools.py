"""Path and structure tools of the graph server (a mixin): summary, neighbours, shortest paths, traversal,
reachability, topological order, cycles and components."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.graphs.build import (
    build,
    has_negative,
    networkx,
    require_node,
    score,
    sorted_groups,
)
from cworld.sandbox.stateless.graphs.models import (
    Components,
    Cycle,
    Directed,
    Distances,
    Edges,
    ExtraNodes,
    GraphSummary,
    Neighbors,
    NodeName,
    NodeOrder,
    PathList,
    PathResult,
    Strongly,
    VisitOrder,
    Weighted,
)
from cworld.sandbox.stateless.graphs.paths import (
    NEGATIVE_CYCLE,
    endpoints_graph,
    path_length,
    search_options,
    walk,
)
from cworld.sandbox.stateless.shared import invalid, rejecting

MaxPaths = Annotated[int, Field(description="List at most this many paths (1..100).", ge=1, le=100)]


class PathTools:
    @tool(read_only=True)
    def graph_summary(self, edges: Edges, directed: Directed = False, nodes: ExtraNodes = []) -> GraphSummary:  # noqa: B006
        """Size and shape of a graph: node and edge counts, density, connectivity, degrees, isolated nodes,
        self-loops and (for directed graphs) whether it is acyclic."""
        nx = networkx()
        g = build(edges, directed, nodes)
        degrees = [d for _, d in g.degree()] or [0]
        n = g.number_of_nodes()
        connected = n > 0 and (nx.is_weakly_connected(g) if directed else nx.is_connected(g))
        return GraphSummary(
            node_count=n,
            edge_count=g.number_of_edges(),
            density=score(nx.density(g)) if n > 1 else 0.0,
            connected=connected,
            is_dag=nx.is_directed_acyclic_graph(g) if directed else None,
            self_loops=nx.number_of_selfloops(g),
            min_degree=min(degrees),
            max_degree=max(degrees),
            average_degree=score(sum(degrees) / max(n, 1)),
            isolated_nodes=sorted(nx.isolates(g)),
        )

    @tool(read_only=True)
    def node_neighbors(self, edges: Edges, node: NodeName, directed: Directed = False) -> Neighbors:
        """A node's neighbours: successors and predecessors for a directed graph, and its degree."""
        g = build(edges, directed)
        require_node(g, node)
        if directed:
            return Neighbors(
                node=node,
                successors=sorted(g.successors(node)),
                predecessors=sorted(g.predecessors(node)),
                degree=g.degree(node),
            )
        around = sorted(g.neighbors(node))
        return Neighbors(node=node, successors=around, predecessors=around, degree=g.degree(node))

    @tool(read_only=True)
    def shortest_path(self, edges: Edges, source: NodeName, target: NodeName, directed: Directed = False,
                      weighted: Weighted = True) -> PathResult:
        """The shortest path between two nodes (Dijkstra; Bellman-Ford when weights are negative). Not
        reachable is a normal answer (found=false); a negative cycle is an error."""
        nx = networkx()
        g = endpoints_graph(edges, directed, source, target)
        try:
            path = nx.shortest_path(g, source, target, **search_options(g, weighted))
        except nx.NetworkXNoPath:
            return PathResult(found=False, path=[], length=None, hops=None)
        except nx.NetworkXUnbounded:
            raise invalid(NEGATIVE_CYCLE) from None
        return PathResult(found=True, path=path, length=path_length(g, path, weighted), hops=len(path) - 1)

    @tool(read_only=True)
    def all_shortest_paths(self, edges: Edges, source: NodeName, target: NodeName, directed: Directed = False,
                           weighted: Weighted = True, max_paths: MaxPaths = 20) -> PathList:
        """Every shortest path between two nodes (ties included), up to max_paths. Fails when target is
        unreachable."""
        nx = networkx()
        g = endpoints_graph(edges, directed, source, target)
        found: list[list[str]] = []
        try:
            for path in nx.all_shortest_paths(g, source, target, **search_options(g, weighted)):
                found.append(path)
                if len(found) > max_paths:
                    break
        except nx.NetworkXNoPath:
            raise invalid(f"{target!r} cannot be reached from {source!r}") from None
        except nx.NetworkXUnbounded:
            raise invalid(NEGATIVE_CYCLE) from None
        kept = sorted(found[:max_paths])
        return PathList(
            paths=kept, length=path_length(g, kept[0], weighted), truncated=len(found) > max_paths
        )

    @tool(read_only=True)
    def shortest_path_lengths(
        self, edges: Edges, source: NodeName, directed: Directed = False, weighted: Weighted = True
    ) -> Distances:
        """Shortest distance from one node to every node it can reach (single-source), plus the nodes it
        cannot reach."""
        nx = networkx()
        g = build(edges, directed)
        require_node(g, source, "source")
        with rejecting(
            nx.NetworkXUnbounded, "the graph has a negative-weight cycle, so distances are undefined"
        ):
            if not weighted:
                dist = nx.single_source_shortest_path_length(g, source)
            elif has_negative(g):
                dist = nx.single_source_bellman_ford_path_length(g, source)
            else:
                dist = nx.single_source_dijkstra_path_length(g, source)
        return Distances(
            distances={n: score(float(dist[n])) for n in sorted(dist)},
            unreachable=sorted(n for n in g if n not in dist),
        )

    @tool(read_only=True)
    def traverse(
        self, edges: Edges, source: NodeName, directed: Directed = False, order: VisitOrder = "breadth_first"
    ) -> NodeOrder:
        """Nodes reachable from source in breadth-first or depth-first order (neighbours alphabetically)."""
        g = build(edges, directed)
        require_node(g, source, "source")
        visited = walk(g, source, order == "breadth_first")
        return NodeOrder(nodes=visited, count=len(visited))

    @tool(read_only=True)
    def reachable_nodes(
        self,
        edges: Edges,
        node: NodeName,
        direction: Annotated[
            Literal["descendants", "ancestors"],
            Field(description="descendants: what the node leads to; ancestors: what leads to it."),
        ] = "descendants",
    ) -> NodeOrder:
        """In a directed graph, every node reachable from a node (or that can reach it), e.g. everything a
        task blocks, or all its prerequisites."""
        nx = networkx()
        g = build(edges, True)
        require_node(g, node)
        found = nx.descendants(g, node) if direction == "descendants" else nx.ancestors(g, node)
        return NodeOrder(nodes=sorted(found), count=len(found))

    @tool(read_only=True)
    def topological_sort(self, edges: Edges, nodes: ExtraNodes = []) -> NodeOrder:  # noqa: B006
        """An order of a directed graph's nodes where every edge goes forward (dependencies first);
        alphabetical among ties. Fails on a cycle, naming it."""
        nx = networkx()
        g = build(edges, True, nodes)
        try:
            order = list(nx.lexicographical_topological_sort(g))
        except nx.NetworkXUnfeasible:
            cycle = [u for u, _ in nx.find_cycle(g)]
            raise invalid(
                f"the graph has a cycle ({' -> '.join([*cycle, cycle[0]])}), so no topological order "
                "exists; remove one of those edges"
            ) from None
        return NodeOrder(nodes=order, count=len(order))

    @tool(read_only=True)
    def find_cycle(self, edges: Edges, directed: Directed = True) -> Cycle:
        """Whether the graph has a cycle, and one such cycle (following edge directions if directed)."""
        nx = networkx()
        g = build(edges, directed)
        try:
            found = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            return Cycle(has_cycle=False, cycle=[])
        return Cycle(has_cycle=True, cycle=[u for u, *_ in found])

    @tool(read_only=True)
    def connected_components(
        self,
        edges: Edges,
        directed: Directed = False,
        nodes: ExtraNodes = [],  # noqa: B006
        strongly: Strongly = False,
    ) -> Components:
        """Split a graph into its connected pieces (weak or strong for directed graphs)."""
        nx = networkx()
        g = build(edges, directed, nodes)
        if not directed:
            groups = nx.connected_components(g)
        else:
            groups = nx.strongly_connected_components(g) if strongly else nx.weakly_connected_components(g)
        comps = sorted_groups(groups)
        return Components(components=comps, count=len(comps))
