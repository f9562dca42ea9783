"""Path helpers of the graph server: path lengths, the shortest-path method for the weights, traversal order."""

from __future__ import annotations

from collections import deque
from typing import Any

from cworld.sandbox.stateless.graphs.build import has_negative, score


def path_length(graph: Any, path: list[str], weighted: bool) -> float:
    if not weighted:
        return float(len(path) - 1)
    return score(sum(graph[a][b]["weight"] for a, b in zip(path, path[1:], strict=False)))


def path_method(graph: Any, weighted: bool) -> str:
    return "bellman-ford" if weighted and has_negative(graph) else "dijkstra"


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
