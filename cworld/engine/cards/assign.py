"""Assign every tool to a category card.

Order: an explicit manifest hint (`tool_categories`, or a server with one `category_hints` entry that
names a card), a tool category that is a card name, the cards' recognition rules (server ids, category
aliases, then keywords in the name and description), embedding similarity to card descriptions (when an
embedder is given and the best match is clear), else the `generic` card.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cworld.data_model import ServerSpec, ToolSpec
from cworld.engine.cards.card import CategoryCard
from cworld.engine.cards.operations import name_tokens, singular

#: (texts) -> list of unit vectors; the registry's embedder fits.
Embedder = Callable[[Sequence[str]], Sequence[Sequence[float]]]
SIMILARITY_FLOOR = 0.30
KEYWORD_FLOOR = 2


@dataclass(frozen=True)
class Assignment:
    tool_id: str
    card: str
    reason: str  # manifest | category | server | alias | keywords | embedding | generic


def assign_cards(
    tools: Sequence[ToolSpec],
    cards: dict[str, CategoryCard],
    servers: dict[str, ServerSpec] | None = None,
    embed: Embedder | None = None,
) -> list[Assignment]:
    """One assignment per tool, in the order given."""
    servers = servers or {}
    found = {t.id: assign_tool(t, cards, servers.get(t.server)) for t in tools}
    pending = [t for t in tools if found[t.id] is None]
    for assignment in _by_embedding(pending, cards, embed):
        found[assignment.tool_id] = assignment
    return [found[t.id] for t in tools]  # type: ignore[misc]


def assign_tool(tool: ToolSpec, cards: dict[str, CategoryCard], server: ServerSpec | None = None) -> Assignment | None:
    """The card by every rule short of embeddings, or None when no rule decides."""
    return _by_manifest(tool, server, cards) or _by_category(tool, cards) or _by_rules(tool, cards)


class CardIndex:
    """Tool -> card at run time, remembered per tool id (the engines ask on every call)."""

    def __init__(self, cards: dict[str, CategoryCard]) -> None:
        self.cards = cards
        self._memo: dict[str, CategoryCard] = {}

    def card_for(self, tool: ToolSpec) -> CategoryCard:
        card = self._memo.get(tool.id)
        if card is None:
            found = assign_tool(tool, self.cards)
            card = self.cards[found.card] if found else self.cards["generic"]
            self._memo[tool.id] = card
        return card


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


#: Harvested categories that say only "a tool": the words of a tool under one decide where they name a card.
CATCH_ALL = frozenset({"utilities"})


def _by_category(tool: ToolSpec, cards: dict[str, CategoryCard]) -> Assignment | None:
    if tool.category in CATCH_ALL:  # `fast_read_file` of a server filed as utilities reads a file system
        named = _by_keywords(tool, cards)
        if named is not None and named.card not in CATCH_ALL:
            return named
    if tool.category and tool.category in cards and tool.category != "generic":
        named = _by_keywords(tool, cards, floor=2 * KEYWORD_FLOOR)
        if named is not None and named.card != tool.category and _hits(_words(tool), cards[tool.category]) == 0:
            return named  # `git_add` of a server filed as code hosting works a local repository
        return Assignment(tool.id, tool.category, "category")
    return None


def _by_rules(tool: ToolSpec, cards: dict[str, CategoryCard]) -> Assignment | None:
    for card in cards.values():
        if tool.server in card.recognition.servers:
            return Assignment(tool.id, card.name, "server")
    for card in cards.values():
        if tool.category and tool.category in card.recognition.categories:
            return Assignment(tool.id, card.name, "alias")
    return _by_keywords(tool, cards)


def _by_keywords(tool: ToolSpec, cards: dict[str, CategoryCard], floor: int = KEYWORD_FLOOR) -> Assignment | None:
    best, best_hits = None, 0
    words = _words(tool)
    for card in cards.values():
        hits = _hits(words, card)
        if hits > best_hits:
            best, best_hits = card.name, hits
    return Assignment(tool.id, best, "keywords") if best and best_hits >= floor else None


def _words(tool: ToolSpec) -> tuple[set[str], str]:
    """(the tool's name tokens and their singulars, its description in lower case): what `_hits` matches, read once."""
    tokens = set(name_tokens(tool.name))
    return tokens | {singular(t) for t in tokens}, tool.description.lower()


def _hits(words: tuple[set[str], str], card: CategoryCard) -> int:
    """How strongly the tool's name (twice) and description (`_words`) name the card's recognition keywords."""
    tokens, description = words
    return 2 * len(tokens & set(card.recognition.name_keywords)) + sum(
        1 for k in card.recognition.description_keywords if k in description)


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
