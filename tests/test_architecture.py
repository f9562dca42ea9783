"""The house plan as a test: every part of `cworld/` imports only parts below it, and no part imports tests.

A part is a subpackage of `cworld` (`cworld.engine`) or a top-level module (`cworld.errors`). Every import
counts, including the ones inside functions and under `TYPE_CHECKING`: a lazy import still couples two rooms.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cworld"

#: Low to high. A part may import parts of a lower rank and of its own; never a higher one.
RANKS: dict[str, int] = {
    "errors": 0, "seeding": 0, "values": 0,
    "data_model": 1,
    "redact": 2, "config": 2, "environment": 2,
    "schemas": 3, "llm": 3, "mcp": 3, "sandbox": 3,
    "registry": 4,
    "engine": 5,
    "controller": 6,
    "agents": 7,
    "rollout": 8,
    "judges": 9,
    "synth": 10,
    "fidelity": 11,
    "report": 12, "export": 12,
    "doctor": 13, "gym": 13, "serve": 13, "harness": 13,
    "cli": 14,
    "__main__": 15, "__init__": 15,
}

#: Parts that must stay islands: they import nothing of cworld outside this set.
ISLANDS: dict[str, set[str]] = {
    "errors": set(),
    "seeding": set(),
    "values": set(),
    "data_model": {"errors"},
    "sandbox": {"errors", "seeding", "data_model", "values"},
}


def _part_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "cworld" or len(parts) == 1:
        return None  # the root is a lazy facade (`__version__`, `make`): importing it couples nothing
    return parts[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__" and len(names) > 1:
        names = names[:-1]
    return ".".join(names)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _module_name(path).split(".")
    package = own if path.name == "__init__.py" else own[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                found.add(node.module)
    return found


@cache
def _part_graph() -> nx.DiGraph:
    """Every part's imports, parsed from the source when a test first asks (not at collection: every
    worker collects this file, one runs it)."""
    graph = nx.DiGraph()
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _part_of(_module_name(path))
        if path.parent == PACKAGE and path.name == "__init__.py":
            source = "__init__"
        graph.add_node(source)
        for target in filter(None, map(_part_of, _imports(path))):
            if target != source:
                graph.add_edge(source, target, where=str(path.relative_to(PACKAGE.parent)))
    return graph


def test_every_part_has_a_rank() -> None:
    assert sorted(set(_part_graph().nodes) - set(RANKS)) == []


def test_no_cycle_between_parts() -> None:
    assert list(nx.simple_cycles(_part_graph())) == []


@pytest.mark.parametrize("source", sorted(RANKS))
def test_no_arrow_runs_up(source: str) -> None:
    graph = _part_graph()
    if source not in graph:
        pytest.skip(f"no part {source}")
    upward = [
        f"{graph.edges[source, target]['where']} imports cworld.{target}"
        for target in graph.successors(source)
        if RANKS[target] > RANKS[source]
    ]
    assert upward == []


@pytest.mark.parametrize("island", sorted(ISLANDS))
def test_islands_stay_islands(island: str) -> None:
    graph = _part_graph()
    outside = set(graph.successors(island)) - ISLANDS[island] if island in graph else set()
    assert sorted(outside) == []


def test_production_code_never_reads_tests() -> None:
    readers = [
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if '"tests"' in path.read_text(encoding="utf-8") or "tests/fixtures" in path.read_text(encoding="utf-8")
    ]
    assert readers == []


def test_no_test_helpers_in_the_package() -> None:
    assert sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("testing.py")) == []
