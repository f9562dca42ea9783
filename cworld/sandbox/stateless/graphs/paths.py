"""Path helpers of the graph server: checked endpoints, search options and path lengths, traversal order."""

from __future__ import annotations

from collections import deque
from typing import Any

from cworld.sandbox.stateless.graphs.build import build, has_negative, require_node, score
from cworld.sandbox.stateless.graphs.models import Edge


def path_length(graph: Any, path: list[str], weighted: bool) -> float:
    if not weighted:
        return float(len(path) - 1)
    return score(sum(graph[a][b]["weight"] for a, b in zip(path, path[1:], strict=False)))


def path_method(graph: Any, weighted: bool) -> str:
    return "bellman-ford" if weighted and has_negative(graph) else "dijkstra"


#: The error of a shortest-path search on a graph with a negative cycle.
NEGATIVE_CYCLE = "the graph has a negative-weight cycle, so shortest paths are undefined"


def endpoints_graph(edges: list[Edge], directed: bool, source: str, target: str) -> Any:
    """The graph of a source-to-target query, with both ends checked to be in it."""
    graph = build(edges, directed)
    require_node(graph, source, "source")
    require_node(graph, target, "target")
    return graph


def search_options(graph: Any, weighted: bool) -> dict[str, Any]:
    """networkx's `weight` and `method` arguments for a shortest-path search."""
    return {"weight": "weight" if weighted else None, "method": path_method(graph, weighted)}


def walk(graph: Any, source: str, breadth_first: bool) -> list[str]:
    """BFS or DFS visiting neighbours in alphabetical order, so the order never depends on edge order."""
    order: list[str] = []
    seen: set[str] = set()
    pending: deque[str] = deque([source])
    while pending:
        node = pending.popleft() if breadth_first else pending.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        following = sorted(graph.successors(node) if graph.is_directed() else graph.neighbors(node))
        pending.extend(following if breadth_first else reversed(following))
    return order
