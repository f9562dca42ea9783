"""Whole-graph algorithms of the graph server (a mixin): spanning trees, flows, ranking and centrality,
bipartiteness, colouring, cut vertices, critical paths, diameter."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.graphs.algorithms import (
    heavy_guard,
    ordered_pair,
    pagerank_scores,
    residual_reachable,
    top_ranking,
    two_colour,
)
from cworld.sandbox.stateless.graphs.build import build, has_negative, networkx, require_node, score
from cworld.sandbox.stateless.graphs.models import (
    Bipartition,
    Coloring,
    CriticalPath,
    CutPoints,
    Damping,
    DegreeKind,
    Directed,
    Edges,
    ExtraNodes,
    Flow,
    NodeName,
    Ranking,
    Shape,
    SpanningTree,
    Top,
    WeightedEdge,
)
from cworld.sandbox.stateless.shared import invalid


class AlgorithmTools:
    @tool(read_only=True)
    def minimum_spanning_tree(
        self,
        edges: Edges,
        nodes: ExtraNodes = [],  # noqa: B006
        maximum: Annotated[bool, Field(description="Find the maximum spanning tree instead.")] = False,
    ) -> SpanningTree:
        """The minimum (or maximum) spanning tree of an undirected weighted graph, by Kruskal's algorithm:
        the cheapest set of edges connecting every node. A disconnected graph gives a spanning forest."""
        nx = networkx()
        g = build(edges, False, nodes)
        algorithm = nx.maximum_spanning_edges if maximum else nx.minimum_spanning_edges
        tree = [
            WeightedEdge(source=ordered_pair(a, b)[0], target=ordered_pair(a, b)[1], weight=d["weight"])
            for a, b, d in algorithm(g, algorithm="kruskal", data=True)
        ]
        tree.sort(key=lambda e: (e.source, e.target))
        return SpanningTree(
            edges=tree,
            total_weight=score(sum(e.weight for e in tree)),
            is_forest=g.number_of_nodes() > 0 and not nx.is_connected(g),
        )

    @tool(read_only=True)
    def max_flow(self, edges: Edges, source: NodeName, sink: NodeName) -> Flow:
        """Maximum flow from source to sink in a directed network whose edge weights are capacities
        (pipes, bandwidth, shipping lanes), with a minimum cut that proves it."""
        nx = networkx()
        g = build(edges, True)
        require_node(g, source, "source")
        require_node(g, sink, "sink")
        if source == sink:
            raise invalid("source and sink are the same node; pass two different nodes")
        if has_negative(g):
            raise invalid("capacities (edge weights) must be >= 0")
        residual = nx.flow.preflow_push(g, source, sink, capacity="weight")
        value = residual.graph["flow_value"]
        flows = sorted(
            (
                WeightedEdge(source=a, target=b, weight=score(residual[a][b]["flow"]))
                for a, b in g.edges
                if residual[a][b]["flow"] > 0
            ),
            key=lambda e: (e.source, e.target),
        )
        left = residual_reachable(residual, source)
        right = set(g.nodes) - left
        return Flow(value=score(value), flows=flows, source_side=sorted(left), sink_side=sorted(right))

    @tool(read_only=True)
    def pagerank(
        self, edges: Edges, directed: Directed = True, damping: Damping = 0.85, top: Top = 20
    ) -> Ranking:
        """PageRank importance of each node (scores sum to 1), using edge weights as link strengths."""
        g = build(edges, directed)
        if has_negative(g):
            raise invalid("PageRank needs non-negative edge weights")
        ranks = pagerank_scores(g, damping)
        return top_ranking(ranks, top)

    @tool(read_only=True)
    def degree_centrality(
        self, edges: Edges, directed: Directed = False, kind: DegreeKind = "total", top: Top = 20
    ) -> Ranking:
        """Degree centrality: each node's number of connections divided by (n - 1), highest first."""
        nx = networkx()
        g = build(edges, directed)
        if kind != "total" and not directed:
            raise invalid("in/out degree needs directed=true; use kind 'total' for undirected graphs")
        measure = {
            "total": nx.degree_centrality,
            "in": nx.in_degree_centrality,
            "out": nx.out_degree_centrality,
        }[kind]
        return top_ranking(measure(g) if g.number_of_nodes() > 1 else dict.fromkeys(g.nodes, 0.0), top)

    @tool(read_only=True)
    def betweenness_centrality(
        self,
        edges: Edges,
        directed: Directed = False,
        weighted: Annotated[
            bool, Field(description="Use weights as lengths (they must be positive).")
        ] = False,
        top: Top = 20,
    ) -> Ranking:
        """Betweenness centrality (normalized): how often a node lies on shortest paths between others —
        brokers and bottlenecks score high. At most 200 nodes and 1,000 edges."""
        nx = networkx()
        g = build(edges, directed)
        heavy_guard(g)
        if weighted and any(w <= 0 for *_, w in g.edges(data="weight")):
            raise invalid("weighted betweenness needs positive weights; use weighted=false")
        return top_ranking(nx.betweenness_centrality(g, weight="weight" if weighted else None), top)

    @tool(read_only=True)
    def bipartite_check(self, edges: Edges, nodes: ExtraNodes = []) -> Bipartition:  # noqa: B006
        """Whether an undirected graph is bipartite (two-colourable: e.g. people vs. projects with no
        same-side links), and the two sides if so."""
        colour = two_colour(build(edges, False, nodes))
        if colour is None:
            return Bipartition(bipartite=False, left=[], right=[])
        return Bipartition(
            bipartite=True,
            left=sorted(n for n, c in colour.items() if c == 0),
            right=sorted(n for n, c in colour.items() if c == 1),
        )

    @tool(read_only=True)
    def graph_coloring(self, edges: Edges, nodes: ExtraNodes = []) -> Coloring:  # noqa: B006
        """Colour nodes so that neighbours differ (scheduling exams, assigning frequencies), greedily with
        the largest-degree-first rule: few colours, not always the minimum. Self-loops are ignored."""
        nx = networkx()
        g = build(edges, False, nodes)
        g.remove_edges_from(list(nx.selfloop_edges(g)))
        colours = nx.greedy_color(g, strategy="largest_first")
        ordered = {n: colours[n] for n in sorted(colours)}
        return Coloring(colors=ordered, color_count=len(set(colours.values())))

    @tool(read_only=True)
    def cut_vertices_and_bridges(self, edges: Edges, nodes: ExtraNodes = []) -> CutPoints:  # noqa: B006
        """Single points of failure of an undirected network: nodes (articulation points) and edges
        (bridges) whose removal splits it."""
        nx = networkx()
        g = build(edges, False, nodes)
        bridges = sorted(list(ordered_pair(a, b)) for a, b in nx.bridges(g))
        return CutPoints(articulation_points=sorted(nx.articulation_points(g)), bridges=bridges)

    @tool(read_only=True)
    def critical_path(self, edges: Edges) -> CriticalPath:
        """The longest weighted path through a directed acyclic graph: with tasks as edges weighted by
        duration, the project's critical path. Fails on a cycle."""
        nx = networkx()
        g = build(edges, True)
        if not nx.is_directed_acyclic_graph(g):
            raise invalid("the graph has a cycle, so it has no critical path; pass a DAG")
        path = [
            str(n)
            for n in nx.dag_longest_path(
                g, weight="weight", topo_order=list(nx.lexicographical_topological_sort(g))
            )
        ]
        return CriticalPath(path=path, length=score(nx.dag_longest_path_length(g, weight="weight")))

    @tool(read_only=True)
    def diameter_and_center(
        self,
        edges: Edges,
        weighted: Annotated[bool, Field(description="Use weights as lengths (they must be >= 0).")] = False,
    ) -> Shape:
        """Diameter, radius, center and periphery of a connected undirected graph (at most 200 nodes and
        1,000 edges)."""
        nx = networkx()
        g = build(edges, False)
        heavy_guard(g)
        if g.number_of_nodes() == 0 or not nx.is_connected(g):
            raise invalid("the graph must be connected (and non-empty) for diameter and center")
        if weighted and has_negative(g):
            raise invalid("weighted distances need weights >= 0")
        ecc = nx.eccentricity(g, weight="weight" if weighted else None)
        diameter, radius = max(ecc.values()), min(ecc.values())
        return Shape(
            diameter=score(diameter),
            radius=score(radius),
            center=sorted(n for n, e in ecc.items() if e == radius),
            periphery=sorted(n for n, e in ecc.items() if e == diameter),
        )
