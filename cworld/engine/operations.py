"""What a tool does, inferred from annotations, its name and its card: operation kind and entity."""

from __future__ import annotations

import re

from cworld.data_model import ToolSpec
from cworld.engine.cards import CategoryCard, EntityType

_VERBS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("search", ("search", "find", "query", "lookup", "look")),
    ("list", ("list", "browse", "all", "recent", "history")),
    ("get", ("get", "read", "show", "view", "describe", "fetch", "open", "retrieve", "check", "status", "info", "detail")),
    ("create", ("create", "add", "new", "post", "send", "write", "insert", "book", "schedule", "compose", "draft", "upload", "make", "register", "save", "store", "place", "open_")),
    ("update", ("update", "edit", "set", "modify", "rename", "change", "move", "patch", "mark", "assign", "reschedule", "replace")),
    ("delete", ("delete", "remove", "cancel", "archive", "trash", "drop", "clear", "revoke", "unsubscribe")),
)


def name_tokens(name: str) -> list[str]:
    """`listMessages` / `list_messages` / `list-messages` -> ['list', 'messages']."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^a-zA-Z0-9]+", spaced.lower()) if t]


def operation_kind(tool: ToolSpec) -> str:
    """One of list/get/search/create/update/delete/action. The name's verb decides; annotations break ties."""
    tokens = name_tokens(tool.name)
    first = tokens[0] if tokens else ""
    for kind, verbs in _VERBS:
        if first in verbs:
            return _agree_with_annotations(kind, tool)
    if tool.annotations.read_only_hint:
        plural = any(t.endswith("s") for t in tokens)
        return "list" if plural else "get"
    if tool.annotations.destructive_hint:
        return "delete"
    return "action"


def _agree_with_annotations(kind: str, tool: ToolSpec) -> str:
    """A read-only tool never writes: a 'create'-looking name on a read-only tool is a read."""
    if tool.annotations.read_only_hint and kind in ("create", "update", "delete"):
        return "get"
    return kind


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def entity_for(tool: ToolSpec, card: CategoryCard) -> EntityType:
    """The card entity the tool touches: named in the tool name, else in an id parameter, else the first."""
    tokens = [_singular(t) for t in name_tokens(tool.name)]
    params = [_singular(p.removesuffix("_id")) for p in tool.input_schema.get("properties", {})]
    for source in (tokens, params):
        for entity in card.entities:
            if entity.name in source or entity.id_prefix in source:
                return entity
    if card.entities:
        return card.entities[0]
    return EntityType(name="item", id_prefix="item", fields={"name": "string", "description": "text"})
