"""Whole-graph algorithms of the graph server (a mixin): spanning trees, flows, ranking and centrality,
bipartiteness, colouring, cut vertices, critical paths, diameter."""

from __future__ import annotations

from collections import deque
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless._common import invalid
from cworld.sandbox.stateless._graph_build import (
    Directed,
    Edges,
    ExtraNodes,
    NodeName,
    build,
    has_negative,
    networkx,
    require_node,
    score,
)

#: Quadratic-or-worse algorithms (betweenness, all-pairs distances) accept at most this many nodes and edges,
#: which keeps them under about a second.
MAX_HEAVY_NODES = 200
MAX_HEAVY_EDGES = 1_000
Top = Annotated[
    int, Field(description="List at most this many nodes, highest first (1..1000).", ge=1, le=1000)
]


class WeightedEdge(BaseModel):
    source: str
    target: str
    weight: float


class SpanningTree(BaseModel):
    edges: list[WeightedEdge] = Field(description="Tree edges, each with source < target, sorted.")
    total_weight: float
    is_forest: bool = Field(description="True when the graph is disconnected (one tree per component).")


class Flow(BaseModel):
    value: float = Field(description="The maximum flow from source to sink.")
    flows: list[WeightedEdge] = Field(description="Flow on each edge that carries any (weight = flow).")
    source_side: list[str] = Field(description="Minimum cut: nodes on the source's side.")
    sink_side: list[str] = Field(description="Minimum cut: nodes on the sink's side.")


class NodeScore(BaseModel):
    node: str
    score: float


class Ranking(BaseModel):
    ranking: list[NodeScore] = Field(description="Highest score first; ties alphabetical.")


class Bipartition(BaseModel):
    bipartite: bool = Field(description="Whether the nodes split into two sides with every edge across.")
    left: list[str] = Field(description="One side (empty if not bipartite).")
    right: list[str] = Field(description="The other side.")


class Coloring(BaseModel):
    colors: dict[str, int] = Field(description="Colour index (0, 1, ...) of each node; neighbours differ.")
    color_count: int


class CutPoints(BaseModel):
    articulation_points: list[str] = Field(description="Nodes whose removal disconnects the graph.")
    bridges: list[list[str]] = Field(
        description="Edges whose removal disconnects the graph, as [a, b], a < b."
    )


class CriticalPath(BaseModel):
    path: list[str] = Field(description="The longest path through the DAG.")
    length: float = Field(description="Its total weight (e.g. the project's minimum duration).")


class Shape(BaseModel):
    diameter: float = Field(description="Largest shortest-path distance between two nodes.")
    radius: float = Field(description="Smallest eccentricity.")
    center: list[str] = Field(description="Nodes whose eccentricity equals the radius.")
    periphery: list[str] = Field(description="Nodes whose eccentricity equals the diameter.")


def _ranking(scores: dict[Any, float], top: int) -> Ranking:
    ordered = sorted(scores.items(), key=lambda kv: (-score(kv[1]), str(kv[0])))[:top]
    return Ranking(ranking=[NodeScore(node=str(n), score=score(s)) for n, s in ordered])


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _two_colour(graph: Any) -> dict[str, int] | None:
    """A 2-colouring by BFS from each component's alphabetically first node, or None if impossible."""
    colour: dict[str, int] = {}
    for start in sorted(graph.nodes):
        if start in colour:
            continue
        colour[start] = 0
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for n in sorted(graph.neighbors(node)):
                if n not in colour:
                    colour[n] = 1 - colour[node]
                    queue.append(n)
                elif colour[n] == colour[node]:
                    return None
    return colour


def _pagerank(graph: Any, damping: float, tol: float = 1e-10, max_iter: int = 1000) -> dict[str, float]:
    """Power iteration (same model as networkx: dangling nodes link to everyone), in pure Python so the
    first call does not pay for importing scipy."""
    nodes = list(graph.nodes)
    n = len(nodes)
    if n == 0:
        return {}
    out: dict[str, list[tuple[str, float]]] = {u: [] for u in nodes}
    for u, v, w in graph.edges(data="weight"):
        out[u].append((v, w))
        if not graph.is_directed() and u != v:
            out[v].append((u, w))
    totals = {u: sum(w for _, w in links) for u, links in out.items()}
    rank = dict.fromkeys(nodes, 1.0 / n)
    for _ in range(max_iter):
        dangling = sum(rank[u] for u in nodes if totals[u] == 0)
        base = (1 - damping) / n + damping * dangling / n
        new = dict.fromkeys(nodes, base)
        for u in nodes:
            if totals[u] > 0:
                share = damping * rank[u] / totals[u]
                for v, w in out[u]:
                    new[v] += share * w
        if sum(abs(new[u] - rank[u]) for u in nodes) < n * tol:
            return new
        rank = new
    raise invalid("PageRank did not converge for this graph; try a damping below 1")


def _residual_reachable(residual: Any, source: str) -> set[str]:
    """Nodes reachable from source along edges with spare capacity: the source side of a minimum cut."""
    seen, queue = {source}, deque([source])
    while queue:
        node = queue.popleft()
        for nxt, attrs in residual[node].items():
            if nxt not in seen and attrs["capacity"] - attrs["flow"] > 0:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _heavy_guard(graph: Any) -> None:
    if graph.number_of_nodes() > MAX_HEAVY_NODES or graph.number_of_edges() > MAX_HEAVY_EDGES:
        raise invalid(
            f"this algorithm accepts at most {MAX_HEAVY_NODES} nodes and {MAX_HEAVY_EDGES} edges; the "
            f"graph has {graph.number_of_nodes()} and {graph.number_of_edges()}"
        )


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
            WeightedEdge(source=_pair(a, b)[0], target=_pair(a, b)[1], weight=d["weight"])
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
        left = _residual_reachable(residual, source)
        right = set(g.nodes) - left
        return Flow(value=score(value), flows=flows, source_side=sorted(left), sink_side=sorted(right))

    @tool(read_only=True)
    def pagerank(
        self,
        edges: Edges,
        directed: Directed = True,
        damping: Annotated[
            float, Field(description="Probability of following a link, 0..1 (usually 0.85).", ge=0, le=1)
        ] = 0.85,
        top: Top = 20,
    ) -> Ranking:
        """PageRank importance of each node (scores sum to 1), using edge weights as link strengths."""
        g = build(edges, directed)
        if has_negative(g):
            raise invalid("PageRank needs non-negative edge weights")
        ranks = _pagerank(g, damping)
        return _ranking(ranks, top)

    @tool(read_only=True)
    def degree_centrality(
        self,
        edges: Edges,
        directed: Directed = False,
        kind: Annotated[
            Literal["total", "in", "out"], Field(description="Which degree: in/out need a directed graph.")
        ] = "total",
        top: Top = 20,
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
        return _ranking(measure(g) if g.number_of_nodes() > 1 else dict.fromkeys(g.nodes, 0.0), top)

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
        _heavy_guard(g)
        if weighted and any(w <= 0 for *_, w in g.edges(data="weight")):
            raise invalid("weighted betweenness needs positive weights; use weighted=false")
        return _ranking(nx.betweenness_centrality(g, weight="weight" if weighted else None), top)

    @tool(read_only=True)
    def bipartite_check(self, edges: Edges, nodes: ExtraNodes = []) -> Bipartition:  # noqa: B006
        """Whether an undirected graph is bipartite (two-colourable: e.g. people vs. projects with no
        same-side links), and the two sides if so."""
        colour = _two_colour(build(edges, False, nodes))
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
        bridges = sorted(list(_pair(a, b)) for a, b in nx.bridges(g))
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
        _heavy_guard(g)
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
