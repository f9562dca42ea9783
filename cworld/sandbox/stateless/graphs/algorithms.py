"""Whole-graph computations of the graph server: ranking, PageRank, two-colouring, residual reachability and
the size guard of the quadratic algorithms."""

from __future__ import annotations

from collections import deque
from typing import Any

from cworld.sandbox.stateless.graphs.build import score
from cworld.sandbox.stateless.graphs.models import NodeScore, Ranking
from cworld.sandbox.stateless.shared import invalid

#: Quadratic-or-worse algorithms (betweenness, all-pairs distances) accept at most this many nodes and edges,
#: which keeps them under about a second.
MAX_HEAVY_NODES = 200


MAX_HEAVY_EDGES = 1_000


def top_ranking(scores: dict[Any, float], top: int) -> Ranking:
    ordered = sorted(scores.items(), key=lambda kv: (-score(kv[1]), str(kv[0])))[:top]
    return Ranking(ranking=[NodeScore(node=str(n), score=score(s)) for n, s in ordered])


def ordered_pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def two_colour(graph: Any) -> dict[str, int] | None:
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


def pagerank_scores(graph: Any, damping: float, tol: float = 1e-10, max_iter: int = 1000) -> dict[str, float]:
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


def residual_reachable(residual: Any, source: str) -> set[str]:
    """Nodes reachable from source along edges with spare capacity: the source side of a minimum cut."""
    seen, queue = {source}, deque([source])
    while queue:
        node = queue.popleft()
        for nxt, attrs in residual[node].items():
            if nxt not in seen and attrs["capacity"] - attrs["flow"] > 0:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def heavy_guard(graph: Any) -> None:
    if graph.number_of_nodes() > MAX_HEAVY_NODES or graph.number_of_edges() > MAX_HEAVY_EDGES:
        raise invalid(
            f"this algorithm accepts at most {MAX_HEAVY_NODES} nodes and {MAX_HEAVY_EDGES} edges; the "
            f"graph has {graph.number_of_nodes()} and {graph.number_of_edges()}"
        )
