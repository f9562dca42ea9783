"""Tool candidate sampling (C-World §2.2): seed tools → retrieval query → recall → round-robin by server.

1–3 seed tools are drawn with the attempt's own RNG; their names and descriptions form one retrieval
query; the index recalls a larger related set; the recalled tools are grouped by server and taken one
server at a time, so no single service dominates; the bundle size is drawn from a configured range, and
tools from further servers are added until the bundle spans the minimum number of distinct servers.
"""

from __future__ import annotations

import random
import re
from collections.abc import Collection
from dataclasses import dataclass

from cworld.data_model import ToolSpec
from cworld.errors import UsageError
from cworld.synth.toolset import ToolUniverse

RECALL_K = 40


@dataclass(frozen=True)
class Candidates:
    seeds: list[str]
    query: str
    tools: list[str]

    @property
    def servers(self) -> list[str]:
        return sorted({t.split("/", 1)[0] for t in self.tools})


def seed_query(specs: list[ToolSpec]) -> str:
    """Names (as words) and first sentences of the seed tools' descriptions: what the paper's query holds."""
    parts = []
    for spec in specs:
        words = re.sub(r"[_\-]+", " ", spec.name)
        first = re.split(r"(?<=[.!?])\s", spec.description.strip(), maxsplit=1)[0]
        parts.append(f"{words}: {first}")
    return " ".join(parts)


def sample_candidates(
    universe: ToolUniverse,
    rng: random.Random,
    *,
    min_tools: int,
    max_tools: int,
    min_servers: int,
    pool: Collection[str] | None = None,
) -> Candidates:
    """One candidate bundle; `pool` limits which tools may be drawn (the offline synthesizer's own)."""
    allowed = sorted(t for t in (pool if pool is not None else universe.tools) if t in universe.tools)
    servers = {t.split("/", 1)[0] for t in allowed}
    if len(servers) < min_servers:
        raise UsageError(
            f"only {len(servers)} servers have tools to sample from; lower --min-servers to {len(servers)}"
        )
    size = rng.randint(min_tools, max(min_tools, max_tools))
    seeds = rng.sample(allowed, rng.randint(1, 3))
    query = seed_query([universe.tools[s] for s in seeds])
    recalled = _recall(universe, query, set(allowed))
    ordered = list(dict.fromkeys([*seeds, *recalled]))
    bundle = _round_robin(ordered, size)
    bundle = _ensure_servers(bundle, ordered, allowed, min_servers, rng)
    return Candidates(seeds=seeds, query=query, tools=bundle)


def _recall(universe: ToolUniverse, query: str, allowed: set[str]) -> list[str]:
    if universe.search is None:
        return []
    hits = universe.search.search_many([query], k=min(RECALL_K * 3, max(RECALL_K, len(universe.tools))))[0]
    return [h.tool_id for h in hits if h.tool_id in allowed][:RECALL_K]


def _by_server(tool_ids: list[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for tool_id in tool_ids:
        groups.setdefault(tool_id.split("/", 1)[0], []).append(tool_id)
    return groups


def _round_robin(ordered: list[str], size: int) -> list[str]:
    """One tool per server in turn (servers in order of their best-ranked tool) until `size` are taken."""
    queues = list(_by_server(ordered).values())
    bundle: list[str] = []
    while len(bundle) < size and any(queues):
        for queue in queues:
            if queue and len(bundle) < size:
                bundle.append(queue.pop(0))
    return bundle


def _ensure_servers(
    bundle: list[str], ordered: list[str], allowed: list[str], min_servers: int, rng: random.Random
) -> list[str]:
    """Swap tools of the best-represented server for tools of new servers until enough servers appear."""
    have = {t.split("/", 1)[0] for t in bundle}
    extra = [t for t in ordered if t.split("/", 1)[0] not in have]
    others = [t for t in allowed if t.split("/", 1)[0] not in have]
    rng.shuffle(others)
    for tool_id in [*extra, *others]:
        if len(have) >= min_servers:
            break
        server = tool_id.split("/", 1)[0]
        if server in have:
            continue
        groups = _by_server(bundle)
        biggest = max(groups, key=lambda s: (len(groups[s]), s))
        if len(groups[biggest]) > 1:
            bundle.remove(groups[biggest][-1])
        bundle.append(tool_id)
        have.add(server)
    return bundle
