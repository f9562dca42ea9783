"""Constraints for an offline task: the blocks' own decisions plus generic ones read off the composed plan.

Every generic constraint is derived from the plan the probe ran (its length, servers, read/write order,
the facts it found), so the gold plan satisfies it by construction; verification re-checks that anyway.
Round 1 takes a random selection reaching the minimum number of types; a revision asked for more types,
more interaction or more machine checks takes every applicable one. Their wording is
`task_synth/templates/constraints.yaml`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from cworld.data_model import Constraint
from cworld.synth.offline.composer import Composer
from cworld.synth.offline.phrases import SHARED, listed, services
from cworld.synth.toolset import ToolUniverse

#: The template file of the generic constraints' wording.
WORDING = "constraints"
Maker = Callable[[Composer, ToolUniverse, random.Random], Constraint | None]


def _servers(c: Composer) -> list[str]:
    return sorted({s.tool.split("/", 1)[0] for s in c.steps})


def _made(c: Composer, ctype: str, verification: dict[str, Any], key: str = "", **fields: Any) -> Constraint:
    """A constraint of `ctype` worded by the template `key` (default: the type) of `constraints.yaml`."""
    description = c.templates.book(WORDING).text(key or ctype, **fields)
    return Constraint(id="", type=ctype, description=description, verification=verification)


def tool_count(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    limit = len(c.steps) + rng.randint(2, 6)
    return _made(c, "tool_count", {"kind": "max_calls", "value": limit}, limit=limit)


def server_diversity(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    count = len(_servers(c))
    if count < 2:
        return None
    return _made(c, "server_diversity", {"kind": "min_servers", "value": count}, count=count)


def server_restriction(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    servers = _servers(c)
    named = services(c.templates.book(SHARED), servers)
    return _made(c, "server_restriction", {"kind": "allowed_servers", "value": servers}, services=named)


def data_coverage(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    reports = [(label, value) for label, value in c.reports if _printable(c.value_of(value))]
    if not reports:
        return None
    chosen = rng.sample(reports, min(len(reports), rng.randint(2, 3)))
    book = c.templates.book(WORDING)
    for label, value in chosen:
        if not any(value in hint for hint in c.hints):
            c.hint(book.text("data_coverage_hint", label=f"{label[0].upper()}{label[1:]}", value=value))
    said = listed(c.templates.book(SHARED), [label for label, _ in chosen])
    values = [_text(c.value_of(value)) for _, value in chosen]
    return _made(c, "data_coverage", {"kind": "final_answer_mentions", "value": values}, facts=said)


def response_content(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    choice = rng.choice(["summary", "bullets", "words"])
    check: dict[str, Any]
    if choice == "summary":
        check = {"kind": "final_answer_contains", "value": "SUMMARY:"}
        return _made(c, "response_content", check, "response_content.summary")
    if choice == "bullets":
        check = {"kind": "final_answer_format", "value": "bullets"}
        return _made(c, "response_content", check, "response_content.bullets")
    words = sum(len(h.split()) for h in c.hints) + 60
    check = {"kind": "final_answer_max_words", "value": words}
    return _made(c, "response_content", check, "response_content.words", words=words)


def no_redundancy(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    seen = set()
    for call in c.probe.trace.calls:
        key = call.tool + json.dumps(call.arguments, sort_keys=True, default=str)
        if key in seen:
            return None
        seen.add(key)
    return _made(c, "no_redundancy", {"kind": "no_repeated_calls"})


def tool_type_priority(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    first: dict[str, str] = {}
    for step in c.steps:
        first.setdefault(step.tool.split("/", 1)[0], step.tool)
    writes = {
        s.tool.split("/", 1)[0]
        for s in c.steps
        if (spec := u.spec(s.tool)) is not None and not spec.is_read_only
    }
    reading = sorted(
        s for s, t in first.items() if s in writes and (spec := u.spec(t)) is not None and spec.is_read_only
    )
    if not reading:
        return None
    named = services(c.templates.book(SHARED), reading)
    return _made(c, "tool_type_priority", {"kind": "reads_before_writes", "value": reading}, services=named)


def sequence_order(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    writes = [
        (s.subgoal, s.tool)
        for s in c.steps
        if (spec := u.spec(s.tool)) is not None
        and not spec.is_read_only
        and u.executable(s.tool)
        and not s.tool.endswith("/login")
    ]
    topics = c.facts.get("goal_topics", {})
    first = next(((g, t) for g, t in writes if g in topics), None)
    if first is None:
        return None
    goal, before = first
    after = next((t for g, t in writes if g not in topics and t.split("/")[0] != before.split("/")[0]), None)
    if after is None:
        return None
    book = c.templates.book(WORDING)
    return _made(
        c,
        "sequence_order",
        {"kind": "call_order", "before": before, "after": after},
        service=services(c.templates.book(SHARED), [after.split("/")[0]]),
        first=topics[goal] or book.text("first_part"),
    )


def safety(c: Composer, u: ToolUniverse, rng: random.Random) -> Constraint | None:
    if any((spec := u.spec(s.tool)) is not None and spec.annotations.destructive_hint for s in c.steps):
        return None
    return _made(c, "safety", {"kind": "no_destructive_calls"})


GENERIC: list[Maker] = [
    tool_count,
    server_diversity,
    server_restriction,
    data_coverage,
    response_content,
    no_redundancy,
    tool_type_priority,
    sequence_order,
    safety,
]


def build_constraints(
    c: Composer, universe: ToolUniverse, rng: random.Random, *, min_types: int, everything: bool
) -> list[Constraint]:
    """The decisions, then generic constraints (randomly chosen, or all when `everything`), ids c1.."""
    chosen = list(c.constraints())
    types = {x.type for x in chosen}
    makers = list(GENERIC)
    rng.shuffle(makers)
    wanted = len(makers) if everything else max(min_types - len(types), 0) + rng.randint(1, 3)
    for maker in makers:
        if wanted <= 0:
            break
        made = maker(c, universe, rng)
        if made is not None and made.type not in types:
            chosen.append(made)
            types.add(made.type)
            wanted -= 1
    numbered = _numbered(chosen)
    if not any(x.interacts_with for x in numbered):
        numbered = _numbered([*chosen, *_partners(c, universe, rng, types)])
    return numbered


def _partners(c: Composer, universe: ToolUniverse, rng: random.Random, types: set[str]) -> list[Constraint]:
    """The missing half of the first natural pair whose other half is present or can be added too."""
    makers = {m.__name__: m for m in GENERIC}
    for a, b in PAIRS:
        missing = [t for t in (a, b) if t not in types]
        made = [makers[t](c, universe, rng) for t in missing]
        if made and all(m is not None for m in made):
            return [m for m in made if m is not None]
    return []


PAIRS = [
    ("tool_count", "no_redundancy"),
    ("sequence_order", "data_coverage"),
    ("server_restriction", "server_diversity"),
    ("tool_count", "server_diversity"),
    ("response_content", "data_coverage"),
]


def _numbered(constraints: list[Constraint]) -> list[Constraint]:
    """Ids c1..; generic constraints interact with their natural partners (calls limit vs. no repeats,
    ordering vs. what must be reported, server restriction vs. diversity)."""
    out = [x.model_copy(update={"id": x.id or f"c{i}"}) for i, x in enumerate(constraints, 1)]
    by_type = {x.type: x for x in out}
    for a, b in PAIRS:
        if a in by_type and b in by_type:
            by_type[a].interacts_with.append(by_type[b].id)
            by_type[b].interacts_with.append(by_type[a].id)
    return out


def _printable(value: Any) -> bool:
    return (
        isinstance(value, str | int | float) and not isinstance(value, bool) and 0 < len(_text(value)) <= 40
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
