"""Assign every tool to a category card.

Order: an explicit manifest hint (`tool_categories`, or a server with one `category_hints` entry), the
card's recognition rules (server ids, then keywords in the name and description), embedding similarity to
card descriptions (when an embedder is given and the best match is clear), else the `generic` card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cworld.data_model import ServerSpec, ToolSpec
from cworld.engine.cards import CategoryCard
from cworld.engine.operations import name_tokens

#: (texts) -> list of unit vectors; the registry's embedder fits.
Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]
SIMILARITY_FLOOR = 0.30


@dataclass(frozen=True)
class Assignment:
    tool_id: str
    card: str
    reason: str  # manifest | server | keywords | embedding | generic


def assign_cards(
    tools: Sequence[ToolSpec],
    cards: dict[str, CategoryCard],
    servers: dict[str, ServerSpec] | None = None,
    embed: Embedder | None = None,
) -> list[Assignment]:
    servers = servers or {}
    out: list[Assignment] = []
    pending: list[ToolSpec] = []
    for tool in tools:
        found = _by_manifest(tool, servers.get(tool.server), cards) or _by_rules(tool, cards)
        if found:
            out.append(found)
        else:
            pending.append(tool)
    out.extend(_by_embedding(pending, cards, embed))
    return out


def _by_manifest(tool: ToolSpec, server: ServerSpec | None, cards: dict[str, CategoryCard]) -> Assignment | None:
    if server is None:
        return None
    explicit = server.tool_categories.get(tool.name)
    if explicit in cards:
        return Assignment(tool.id, explicit, "manifest")  # type: ignore[arg-type]
    hints = [h for h in server.category_hints if h in cards]
    if len(hints) == 1:
        return Assignment(tool.id, hints[0], "manifest")
    return None


def _by_rules(tool: ToolSpec, cards: dict[str, CategoryCard]) -> Assignment | None:
    for card in cards.values():
        if tool.server in card.recognition.servers:
            return Assignment(tool.id, card.name, "server")
    tokens = set(name_tokens(tool.name))
    description = tool.description.lower()
    best, best_hits = None, 0
    for card in cards.values():
        hits = 2 * len(tokens & set(card.recognition.name_keywords))
        hits += sum(1 for k in card.recognition.description_keywords if k in description)
        if hits > best_hits:
            best, best_hits = card.name, hits
    return Assignment(tool.id, best, "keywords") if best and best_hits >= 2 else None


def _by_embedding(tools: list[ToolSpec], cards: dict[str, CategoryCard], embed: Embedder | None) -> list[Assignment]:
    candidates = [c for c in cards.values() if c.name != "generic"]
    if not tools or embed is None or not candidates:
        return [Assignment(t.id, "generic", "generic") for t in tools]
    card_vecs = embed([f"{c.title}: {c.description}" for c in candidates])
    tool_vecs = embed([f"{t.name.replace('_', ' ')}: {t.description}" for t in tools])
    out = []
    for tool, vec in zip(tools, tool_vecs, strict=True):
        scores = [sum(a * b for a, b in zip(vec, cv, strict=True)) for cv in card_vecs]
        best = max(range(len(scores)), key=scores.__getitem__)
        if scores[best] >= SIMILARITY_FLOOR:
            out.append(Assignment(tool.id, candidates[best].name, "embedding"))
        else:
            out.append(Assignment(tool.id, "generic", "generic"))
    return out
