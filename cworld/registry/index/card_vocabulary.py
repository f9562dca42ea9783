"""The words each category card gives a tool's example requests: what the service is called, what it holds.

A card (`category_cards/<name>.yaml`) says what a kind of service is like. The index reads only its plain
words — the title ("Travel booking"), the entity names (flight, hotel, booking) and the example titles its
records carry ("Weekly sync") — so a tool of that card can be asked for the way a user names that world.
Read as plain YAML: the registry sits below the engine that validates cards, and needs none of the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from cworld.environment import packaged_environment_root

#: libyaml's loader when built in: the cards are ~50 files, and the pure-Python parser takes seconds on them.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: How many example record titles a card contributes (a few say what its records look like; more is noise).
MAX_EXAMPLE_TITLES = 3


@dataclass(frozen=True)
class CardVocabulary:
    """A card's everyday words: `where` names the service kind, `things` what it holds."""

    where: str
    things: tuple[str, ...] = ()
    example_titles: tuple[str, ...] = field(default=())


def default_cards_folder() -> Path:
    return packaged_environment_root() / "category_cards"


def vocabulary_of(card: dict[str, Any]) -> CardVocabulary:
    """The plain words of one parsed card."""
    entities = [e for e in card.get("entities") or [] if isinstance(e, dict)]
    titles = [str(example.get("title") or example.get("name")) for e in entities
              for example in e.get("examples") or [] if isinstance(example, dict) and (example.get("title") or example.get("name"))]
    where = re.sub(r"\s*\(.*?\)", "", str(card.get("title") or card.get("name") or "service")).lower().strip()
    things = tuple(str(e["name"]).replace("_", " ") for e in entities if e.get("name"))
    return CardVocabulary(where=where, things=things, example_titles=tuple(titles[:MAX_EXAMPLE_TITLES]))


@lru_cache(maxsize=4)
def load_card_vocabularies(folder: Path | None = None) -> dict[str, CardVocabulary]:
    """card name (and each category a card recognises) -> its vocabulary, for every card file in `folder`
    (default: the packaged environment's).
    A missing folder gives none: requests are then made from the tool alone."""
    folder = folder or default_cards_folder()
    if not folder.is_dir():
        return {}
    out: dict[str, CardVocabulary] = {}
    for path in sorted(folder.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        card = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER) or {}
        if isinstance(card, dict):
            vocabulary = vocabulary_of(card)
            out[str(card.get("name") or path.stem)] = vocabulary
            for category in (card.get("recognition") or {}).get("categories") or []:
                out.setdefault(str(category), vocabulary)  # sandbox tools name a category, not a card
    return out
