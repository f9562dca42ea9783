"""Graph input for the graph server: the edge-list schema every tool takes, and the networkx graph built
from it. networkx is imported on first use (it costs ~0.4 s), so listing the sandbox stays fast.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from cworld.sandbox.stateless.graphs.models import MAX_NODES, Edge
from cworld.sandbox.stateless.shared import invalid

if TYPE_CHECKING:
    import networkx as nx


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
