"""`cworld engine cards`: which card each tool is assigned to, and how many are left to the fallback."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from cworld.engine.cards.assign import Assignment, Embedder, assign_cards
from cworld.engine.cards.card import CategoryCard
from cworld.registry.tools import ToolList


def coverage(toolset: ToolList, cards: dict[str, CategoryCard], embed: Embedder | None = None) -> dict[str, Any]:
    """Per card: its tools and why they were assigned; `uncategorized`: tools that reached `generic` only
    because nothing recognised them (an explicit choice of `generic` in the manifest is not counted)."""
    assignments = assign_cards(toolset.tools, cards, toolset.servers, embed)
    per_card: dict[str, list[Assignment]] = defaultdict(list)
    for assignment in assignments:
        per_card[assignment.card].append(assignment)
    rows = {
        name: {
            "title": card.title,
            "live": card.live,
            "tools": len(per_card.get(name, [])),
            "servers": sorted({a.tool_id.split("/", 1)[0] for a in per_card.get(name, [])}),
            "by_reason": dict(Counter(a.reason for a in per_card.get(name, []))),
            "tool_ids": [a.tool_id for a in per_card.get(name, [])],
        }
        for name, card in sorted(cards.items())
    }
    unassigned = [a.tool_id for a in assignments if a.reason == "generic"]
    return {"source": toolset.source, "tools": len(assignments), "cards": rows,
            "uncategorized": len(unassigned), "uncategorized_tools": unassigned}
