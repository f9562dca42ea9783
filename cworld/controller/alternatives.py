"""Alternatives to a tool: what an agent can switch to when a tool is deprecated.

An alternative is another tool that can take the same call: its required parameters are all among the
original's parameters, it reads or writes like the original, it serves the same category (when both
say), it acts on the same world, and its name says it does the same thing (the same name on another
server, as in the paper's deprecation example, or the same verb and object words). Planning uses this
to deprecate only tools that can be replaced; scripted agents use it to switch.

The same world: a server that holds records (a stateful sandbox app, every other server of the registry)
has its own; a tool of another server reads and writes other records, so switching to it cannot reach
the task's end state. Only the stateless sandbox apps (math, units, text, ...) share one: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from cworld.data_model import ToolSpec

_VERB_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"search", "find", "list", "query", "lookup", "browse"}),
    frozenset({"get", "read", "fetch", "show", "view", "describe"}),
    frozenset({"create", "add", "new", "make", "insert", "post", "book", "place"}),
    frozenset({"update", "edit", "modify", "change", "set", "patch"}),
    frozenset({"delete", "remove", "cancel", "archive", "drop"}),
    frozenset({"send", "post", "reply", "forward", "publish"}),
)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[_\-\s.]+|(?<=[a-z])(?=[A-Z])", name.lower()) if w]


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def _same_verb(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in _VERB_GROUPS)


def name_affinity(a: ToolSpec, b: ToolSpec) -> float:
    """1.0 for the same name; otherwise the share of object words in common, if the verbs agree."""
    if a.name == b.name:
        return 1.0
    wa, wb = _words(a.name), _words(b.name)
    if not wa or not wb or not _same_verb(wa[0], wb[0]):
        return 0.0
    oa, ob = {_singular(w) for w in wa[1:]}, {_singular(w) for w in wb[1:]}
    if not oa or not ob:
        return 0.0
    return 0.9 * len(oa & ob) / len(oa | ob)


def _params(tool: ToolSpec) -> set[str]:
    return set((tool.input_schema or {}).get("properties", {}) or {})


def _required(tool: ToolSpec) -> set[str]:
    return set((tool.input_schema or {}).get("required", []) or [])


def can_take_call(original: ToolSpec, other: ToolSpec) -> bool:
    """Every parameter the other tool requires is one the original call could carry."""
    return _required(other) <= _params(original)


@cache
def _stateless_apps() -> frozenset[str]:
    from cworld.sandbox.catalog import all_apps

    return frozenset(app.name for app in all_apps() if not app.stateful)


def world_of(tool: ToolSpec) -> str | None:
    """The server whose records the tool acts on; None for a stateless sandbox app's tool (no records)."""
    return None if tool.server in _stateless_apps() else tool.server


def similar_tools(tool: ToolSpec, candidates: Iterable[ToolSpec], *, k: int = 5,
                  min_affinity: float = 0.3) -> list[ToolSpec]:
    """The best alternatives to `tool`, best first (an empty list when there is none)."""
    scored = []
    for other in candidates:
        if other.id == tool.id or other.is_read_only != tool.is_read_only or not can_take_call(tool, other):
            continue
        if tool.category and other.category and tool.category != other.category:
            continue
        if world_of(other) != world_of(tool):
            continue
        affinity = name_affinity(tool, other)
        if affinity >= min_affinity:
            shared = len(_params(tool) & _params(other)) / max(1, len(_params(tool) | _params(other)))
            scored.append((affinity + 0.1 * shared, other.id, other))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [s[2] for s in scored[:k]]
