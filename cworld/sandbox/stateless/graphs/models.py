"""The edge-list argument every graph tool takes, the other argument types, and the result models."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

MAX_EDGES = 2_000

MAX_NODES = 1_000


NodeName = Annotated[str, Field(description="A node name.", min_length=1, max_length=100)]


Strongly = Annotated[
    bool,
    Field(
        description="For directed graphs: strongly connected components "
        "(mutually reachable) instead of weakly connected ones."
    ),
]

Directed = Annotated[bool, Field(description="True if edges go one way (source -> target).")]

ExtraNodes = Annotated[
    list[NodeName], Field(description="Nodes with no edges, if any (isolated nodes).", max_length=MAX_NODES)
]

Weighted = Annotated[bool, Field(description="Use edge weights as lengths (false counts hops).")]

Top = Annotated[
    int, Field(description="List at most this many nodes, highest first (1..1000).", ge=1, le=1000)
]


Damping = Annotated[
    float, Field(description="Probability of following a link, 0..1 (usually 0.85).", ge=0, le=1)
]
DegreeKind = Annotated[
    Literal["total", "in", "out"], Field(description="Which degree: in/out need a directed graph.")
]
VisitOrder = Annotated[Literal["breadth_first", "depth_first"], Field(description="Visit order.")]


class Edge(BaseModel):
    source: NodeName
    target: NodeName
    weight: float = Field(
        default=1.0,
        ge=-1e9,
        le=1e9,
        description="Length/cost for paths and trees, capacity for max flow (default 1).",
    )


Edges = Annotated[
    list[Edge],
    Field(
        description="The graph as a list of edges {source, target, weight}; at most "
        "2,000. A repeated edge keeps its last weight.",
        max_length=MAX_EDGES,
    ),
]


class GraphSummary(BaseModel):
    node_count: int
    edge_count: int
    density: float = Field(description="Edges present / edges possible, 0..1.")
    connected: bool = Field(description="One piece (weakly connected, for a directed graph).")
    is_dag: bool | None = Field(description="Directed and acyclic; null for undirected graphs.")
    self_loops: int
    min_degree: int
    max_degree: int
    average_degree: float
    isolated_nodes: list[str]


class Neighbors(BaseModel):
    node: str
    successors: list[str] = Field(description="Nodes this node points to (all neighbours if undirected).")
    predecessors: list[str] = Field(description="Nodes pointing to this node (all neighbours if undirected).")
    degree: int


class PathResult(BaseModel):
    found: bool = Field(description="False when target cannot be reached from source.")
    path: list[str] = Field(description="Nodes from source to target (empty if not found).")
    length: float | None = Field(description="Total weight (or hop count when unweighted).")
    hops: int | None


class PathList(BaseModel):
    paths: list[list[str]] = Field(description="The shortest paths, sorted.")
    length: float = Field(description="Their common length.")
    truncated: bool = Field(description="True when more shortest paths exist than max_paths.")


class Distances(BaseModel):
    distances: dict[str, float] = Field(
        description="Shortest distance from the source to each reachable node."
    )
    unreachable: list[str]


class NodeOrder(BaseModel):
    nodes: list[str]
    count: int


class Cycle(BaseModel):
    has_cycle: bool
    cycle: list[str] = Field(
        description="One cycle's nodes in order (the edge back to the first is implied)."
    )


class Components(BaseModel):
    components: list[list[str]] = Field(
        description="Each component's nodes, sorted; largest component first."
    )
    count: int


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
