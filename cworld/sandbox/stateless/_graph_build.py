"""Graph input for the graph server: the edge-list schema every tool takes, and the networkx graph built
from it. networkx is imported on first use (it costs ~0.4 s), so listing the sandbox stays fast.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from cworld.sandbox.stateless._common import invalid

if TYPE_CHECKING:
    import networkx as nx

MAX_EDGES = 2_000
MAX_NODES = 1_000
NodeName = Annotated[str, Field(description="A node name.", min_length=1, max_length=100)]


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
Directed = Annotated[bool, Field(description="True if edges go one way (source -> target).")]
ExtraNodes = Annotated[
    list[NodeName], Field(description="Nodes with no edges, if any (isolated nodes).", max_length=MAX_NODES)
]


def networkx() -> Any:
    import networkx as nx

    return nx


def build(edges: list[Edge], directed: bool, nodes: list[str] | None = None) -> nx.Graph:
    nx = networkx()
    graph = nx.DiGraph() if directed else nx.Graph()
    graph.add_nodes_from(nodes or [])
    for e in edges:
        graph.add_edge(e.source, e.target, weight=float(e.weight))
    if graph.number_of_nodes() > MAX_NODES:
        raise invalid(f"the graph has {graph.number_of_nodes()} nodes; at most {MAX_NODES} are allowed")
    return graph


def require_node(graph: nx.Graph, node: str, what: str = "node") -> str:
    if node not in graph:
        sample = ", ".join(sorted(map(str, graph.nodes))[:10])
        raise invalid(f"{what} {node!r} is not in the graph; nodes include: {sample or '(none)'}")
    return node


def has_negative(graph: nx.Graph) -> bool:
    return any(w < 0 for _, _, w in graph.edges(data="weight"))


def score(x: float) -> float:
    """Scores rounded to 6 decimals: stable across runs and readable."""
    return round(x, 6) + 0.0 if math.isfinite(x) else 0.0


def sorted_groups(groups: Any) -> list[list[str]]:
    """Node groups with each group sorted, largest group first, ties by first name."""
    return sorted((sorted(g) for g in groups), key=lambda g: (-len(g), g))
