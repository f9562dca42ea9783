"""The graph server: graph algorithms on an edge list passed with each call (networkx underneath).

Each tool builds its graph from the arguments, so calls are independent and deterministic; node lists come
back sorted (or in path order) so the same graph always gives the same answer.

It holds no state (no `state.py`): every answer is a function of the call's arguments alone.
"""

from __future__ import annotations

from cworld.sandbox.stateless.graphs.tools import PathTools
from cworld.sandbox.stateless.graphs.tools_algorithms import AlgorithmTools
from cworld.sandbox.stateless.shared import StatelessApp


class GraphServer(PathTools, AlgorithmTools, StatelessApp):
    name = "graph"
    title = "Graph algorithms"
    description = (
        "Graph algorithms on an edge list: shortest paths, traversal, topological order, "
        "cycles, components, spanning trees, max flow, PageRank, centrality, "
        "bipartiteness, colouring, critical path."
    )
    category = "graph"
