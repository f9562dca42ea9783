"""Candidate bundles for `--pool harvested`: thematic bundles of harvested servers, a chain per server.

The harvested catalog is 167 real servers' tools, schema only. A bundle takes a theme (a trip: maps,
travel, calendar, messaging...), draws 3–4 servers of distinct category cards within it, and takes from
each a short chain: a producer→consumer edge of the dependency graph when the server has one, else a
read with an output schema (its fields can feed later steps) and one more tool. Servers that only take
in what others produce (messaging, documents, task boards, calendars, CRMs) go last, so a bundle reads
then acts. Every choice uses the attempt's RNG. No retrieval index is needed: the themes and the graph
stand in for it, so the same bundle comes out with or without an embedder.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable

from cworld.data_model import ToolSpec
from cworld.errors import UsageError
from cworld.synth.sampling import Candidates
from cworld.synth.toolset import ToolUniverse

THEMES: dict[str, tuple[str, ...]] = {
    "trip": ("maps", "travel", "calendar", "messaging", "utilities", "web_search"),
    "research": ("web_search", "knowledge_graph", "documents", "education", "media", "messaging"),
    "commerce": ("ecommerce", "finance", "crm", "messaging", "documents"),
    "engineering": ("code_hosting", "devops", "cloud_infrastructure", "task_board", "security", "messaging"),
    "data": ("sql_database", "documents", "utilities", "knowledge_graph", "task_board", "browser_automation"),
    "health": ("health_records", "calendar", "messaging", "documents", "education"),
    "markets": ("finance", "web_search", "documents", "messaging", "knowledge_graph"),
    "content": ("media", "web_search", "documents", "messaging", "browser_automation"),
    "operations": ("devices", "cloud_infrastructure", "devops", "security", "messaging", "task_board"),
    "team": ("task_board", "calendar", "messaging", "documents", "crm", "code_hosting"),
}
"""Themes by the category cards of the servers they bundle."""
SINKS = frozenset({"messaging", "documents", "task_board", "calendar", "crm"})
"""Cards whose servers mostly take in what others found: they go last in a bundle."""
_DESTRUCTIVE = re.compile(r"(^|[_\-])(delete|remove|drop|destroy|purge|kill|terminate|wipe|revoke|reset)", re.I)
_SIMPLE = frozenset({"string", "integer", "number", "boolean"})


def card_of(tool: ToolSpec) -> str:
    return tool.category or ""


def usable(tool: ToolSpec) -> bool:
    """A tool a composed task may call: not destructive, and every required argument is a plain value
    (string, number, boolean, enum, or a list of those) a request can state or an earlier step can give."""
    if tool.annotations.destructive_hint or _DESTRUCTIVE.search(tool.name):
        return False
    schema = tool.input_schema or {}
    props = schema.get("properties", {}) or {}
    for key in schema.get("required", []) or []:
        prop = props.get(key)
        if not isinstance(prop, dict):
            return False
        kind = prop.get("type")
        if kind == "array":
            items = prop.get("items")
            kind = items.get("type") if isinstance(items, dict) else None
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind not in _SIMPLE and "enum" not in prop:
            return False
    return True


def english(tool: ToolSpec) -> bool:
    """A description a request can be written from: nearly all ASCII (no translation is attempted, so a
    tool described in another language is never drawn)."""
    text = tool.description or ""
    return not text or sum(c.isascii() for c in text) >= 0.95 * len(text)


def producer(tool: ToolSpec) -> bool:
    """A read whose output schema has fields: what a chain starts with."""
    out = tool.output_schema or {}
    return tool.is_read_only and bool(out.get("properties") or out.get("items"))


def harvested_servers(universe: ToolUniverse) -> dict[str, list[ToolSpec]]:
    """Harvested server -> its usable tools (servers with none are left out)."""
    found: dict[str, list[ToolSpec]] = {}
    for tool in sorted(universe.tools.values(), key=lambda t: t.id):
        if tool.server in universe.harvested and usable(tool) and english(tool):
            found.setdefault(tool.server, []).append(tool)
    return found


def sample_harvested(
    universe: ToolUniverse,
    rng: random.Random,
    *,
    min_tools: int,
    max_tools: int,
    min_servers: int,
    avoid: Iterable[str] = (),
) -> Candidates:
    """A thematic bundle over at least `min_servers` harvested servers, a short chain from each."""
    banned = set(avoid)
    servers = {s: [t for t in ts if t.id not in banned] for s, ts in harvested_servers(universe).items()}
    servers = {s: ts for s, ts in servers.items() if ts}
    by_card: dict[str, list[str]] = {}
    for server, own in servers.items():
        by_card.setdefault(card_of(own[0]), []).append(server)
    themes = [name for name, cards in THEMES.items() if sum(c in by_card for c in cards) >= min_servers]
    if not themes:
        raise UsageError(
            f"the harvested catalog has no theme spanning {min_servers} kinds of server; "
            "lower --min-servers or run `cworld registry harvest`"
        )
    theme = rng.choice(themes)
    cards = [c for c in THEMES[theme] if c in by_card]
    count = min(len(cards), rng.randint(min_servers, max(min_servers, min_servers + 1)))
    chosen = [rng.choice(sorted(by_card[c])) for c in rng.sample(cards, count)]
    chosen.sort(key=lambda s: card_of(servers[s][0]) in SINKS)
    tools: list[str] = []
    for n, server in enumerate(chosen):
        tools += _chain(universe, servers[server], rng, later=n > 0)
    tools = _fill(tools, chosen, servers, rng, min_tools, max_tools)
    return Candidates(seeds=[tools[0]], query=f"theme: {theme}", tools=tools)


def linkable(tool: ToolSpec) -> bool:
    """A parameter of the tool can take a value an earlier service found (`schema_links`): a place, an
    email, a ticker, a name to search for..."""
    from cworld.synth.offline.schema_links import input_type

    props = (tool.input_schema or {}).get("properties", {}) or {}
    return any(isinstance(p, dict) and input_type(k, p) for k, p in props.items())


def _chain(universe: ToolUniverse, tools: list[ToolSpec], rng: random.Random, *, later: bool = False) -> list[str]:
    """A producer→consumer edge of the graph within the server when it has one, else a read with fields
    and another tool (or the only tool). A server after the first starts, when it can, with a tool that
    takes in what the earlier ones found (so the chain crosses services)."""
    ids = {t.id for t in tools}
    edges = sorted(
        (a, b) for a, b in universe.graph.edges() if a in ids and b in ids and a != b
    )
    takers = sorted(t.id for t in tools if linkable(t))
    if later and takers and rng.random() < 0.7:
        first = rng.choice(takers)
        follow = sorted({b for a, b in edges if a == first} or ids - {first})
        return [first, rng.choice(follow)] if follow else [first]
    if edges and rng.random() < 0.8:
        return list(rng.choice(edges))
    reads = [t.id for t in tools if producer(t)]
    first = rng.choice(reads) if reads else rng.choice(sorted(ids))
    rest = sorted(ids - {first})
    return [first, rng.choice(rest)] if rest else [first]


def _fill(
    tools: list[str],
    servers: list[str],
    pool: dict[str, list[ToolSpec]],
    rng: random.Random,
    min_tools: int,
    max_tools: int,
) -> list[str]:
    """Top the bundle up to `min_tools` with more tools of its servers (reads first); cap it at `max_tools`
    by dropping second tools of the earliest servers."""
    spare = [t.id for s in servers for t in sorted(pool[s], key=lambda t: not producer(t)) if t.id not in tools]
    rng.shuffle(spare)
    while len(tools) < min_tools and spare:
        extra = spare.pop()
        at = max(i for i, t in enumerate(tools) if t.split("/", 1)[0] == extra.split("/", 1)[0])
        tools.insert(at + 1, extra)
    while len(tools) > max_tools:
        owners = [t.split("/", 1)[0] for t in tools]
        drop = next((i for i, owner in enumerate(owners) if owner in owners[:i]), len(tools) - 1)
        tools.pop(drop)
    return list(dict.fromkeys(tools))
