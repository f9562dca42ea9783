"""Kinds a server's tool names name that its card lacks, and the fields their answers show (issue 34).

`list_charges` lists charges and `get_customer(id)` reads a customer, whatever card the server got: a
service whose tools list or read a kind by name holds records of it. Without the kind in its world the
engine filed such a tool under the card's first kind (`list_charges` as a listing of clients,
`get_customer(id)` as a read of products), which no request can use honestly. So a kind is named by a
tool's name when its head noun (the last word after the verb and the server's prefix, before `by`/`for`)
is no kind of the card nor a synonym of one, and the tool is a list whose noun is plural, or a read,
change or delete of one record by a bare `id` (`get_dividends(symbol)` reads a stock's dividends: no kind). Its fields are those the tools' output schemas show for a
record of it (a list's item properties, a read's own), so the records hold what the service answers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard
from cworld.engine.cards.operations import (
    LINK_WORDS,
    name_tokens,
    operation_kind,
    same_entity,
    singular_word,
    snake,
    verb_kind,
)

#: Head nouns that name no kind of record: parts of an answer, settings, secrets, the tool itself.
NOT_KINDS = frozenset({
    "name", "value", "detail", "info", "information", "data", "result", "item", "record", "object", "entity",
    "resource", "status", "list", "summary", "count", "stat", "statistic", "config", "configuration", "setting",
    "option", "type", "field", "schema", "content", "text", "id", "all", "credential", "secret", "token", "key",
    "password", "metadata", "property", "attribute", "tool", "capability", "permission", "help", "version",
    "health", "usage", "limit", "quota", "error", "response", "request", "output", "input", "me",
    "link", "url", "stats", "analytics", "insight", "metric", "history", "change", "diff", "update", "default",
    "price", "date", "time",
})
BARE_IDS = ("id", "uuid", "guid")
_WORD = re.compile(r"^[a-z]{3,}$")
#: At most this many answer fields become a kind's fields (a record a person reads, not a full API object).
MAX_FIELDS = 10
_FORMAT_TYPES = {"email": "email", "uri": "url", "url": "url", "date": "date", "date-time": "datetime"}
_JSON_TYPES = {"integer": "int", "number": "float", "boolean": "bool"}
#: Flags the engine's rules refuse a change by (a record in the trash, deleted): drawn at random they would
#: refuse changes to records the answers never showed as such.
GUARD_FLAGS = frozenset({"trashed", "in_trash", "is_trashed", "deleted", "is_deleted", "archived", "is_archived"})
_TEXT_FIELDS = re.compile(r"(^|_)(description|body|content|notes?|text|message|summary|comment)$")


def server_prefix(tools: list[ToolSpec]) -> str | None:
    """The word most of a server's tool names start with (`boond_`, `ebay_`): the service, no noun."""
    firsts = Counter(name_tokens(t.name)[0] for t in tools if name_tokens(t.name))
    word, n = firsts.most_common(1)[0] if firsts else ("", 0)
    return word if len(tools) >= 3 and 2 * n >= len(tools) and verb_kind(word) is None else None


def head_noun(tool: ToolSpec, prefix: str | None) -> str | None:
    """The word of the tool's name for what it acts on: after its verb, before `by`/`for`, not the prefix."""
    words = _object_words(tool, prefix)
    return words[-1] if words else None


def named_kind(tool: ToolSpec, card: CategoryCard, prefix: str | None, parents: frozenset[str] = frozenset()) -> str | None:
    """The kind the tool's name names that the card lacks (`list_charges` -> charge), else None. A bare id
    names the head's record only when no word before the head is a kind of its own (`parents`: the card's
    and the heads of the server's tools that take a bare id) and no other argument names the head (`db-cluster-get-user(id,
    user)` takes the cluster's id)."""
    head = head_noun(tool, prefix)
    if head is None:
        return None
    kind = singular_kind(head)
    if not _WORD.match(kind) or kind in NOT_KINDS or verb_kind(kind) is not None or _card_has(card, kind):
        return None
    op = operation_kind(tool)
    arg = bare_id(tool)
    before = {singular_kind(w) for w in _object_words(tool, prefix)[:-1]}
    if op in ("list", "search"):
        # a list names its records in the plural; one that takes a parent's bare id (`db-cluster-list-users(id)`)
        # leaves its kind's tools reading `id` as their own record's: not filed
        return kind if kind != head and not (arg and before & parents) else None
    if op not in ("get", "update", "delete", "action") or arg is None:
        return None
    others = {snake(p) for p in (tool.input_schema or {}).get("required") or [] if p != arg}
    if before & (parents | {e.name for e in card.entities}) or any(o == kind or o.startswith(f"{kind}_") for o in others):
        return None
    return kind


def singular_kind(word: str) -> str:
    """A noun's singular as a kind's name (`buses` -> bus, `statuses` -> status, `charges` -> charge)."""
    if word.endswith("uses") and not word.endswith(("ouses", "auses")):
        return word[:-2]
    return singular_word(word)


def _object_words(tool: ToolSpec, prefix: str | None) -> list[str]:
    """The name's words for what it acts on, up to its head noun (`head_noun`)."""
    words = name_tokens(tool.name)
    verb = next((i for i, w in enumerate(words) if verb_kind(w) is not None), None)
    rest = [w for i, w in enumerate(words) if i != verb and not (i == 0 and w == prefix)]
    cut = next((i for i, w in enumerate(rest) if w in LINK_WORDS), len(rest))
    return rest[:cut]


def _card_has(card: CategoryCard, kind: str) -> bool:
    """The card holds the kind already, under its name, as part of a kind's name or as a synonym."""
    return any(kind in e.name.split("_") or same_entity(kind, e.name) for e in card.entities)


def bare_id(tool: ToolSpec) -> str | None:
    """The required argument `id` (any case) naming the one record the tool is about."""
    schema = tool.input_schema or {}
    return next((p for p in schema.get("required") or [] if snake(p) in BARE_IDS), None)


def name_kinds(card: CategoryCard, tools: Iterable[ToolSpec]) -> dict[str, tuple[list[Any], dict[str, str]]]:
    """Kind -> (the schemas of the bare ids that name its records, its fields from the tools' answers), for
    the kinds the tools' names name that `card` lacks, in order of first mention."""
    tools = list(tools)
    prefix = server_prefix(tools)
    parents = frozenset(singular_kind(w[-1]) for t in tools if bare_id(t) and (w := _object_words(t, prefix)))
    out: dict[str, tuple[list[Any], dict[str, str]]] = {}
    for tool in tools:
        kind = named_kind(tool, card, prefix, parents)
        if kind is None:
            continue
        ids, fields = out.setdefault(kind, ([], {}))
        arg = bare_id(tool)
        if arg is not None:
            ids.append(((tool.input_schema or {}).get("properties") or {}).get(arg) or {})
        for field, typed in answer_fields(tool, many=arg is None).items():
            if len(fields) < MAX_FIELDS:
                fields.setdefault(field, typed)
    return out


def answer_fields(tool: ToolSpec, many: bool) -> dict[str, str]:
    """Field -> card field type of one record as the tool's output schema shows it: a list's item properties
    (`many`), else the answer's own. Ids, nested values and secrets are left out."""
    schema = tool.output_schema or {}
    props = schema.get("properties") or {}
    if many:
        items = next((_resolved(p.get("items"), schema) for p in props.values()
                      if isinstance(p, dict) and p.get("type") == "array"), None)
        props = (items or {}).get("properties") or {}
    out: dict[str, str] = {}
    for name, prop in props.items():
        typed = field_type(snake(name), _resolved(prop, schema) or {})
        if typed is not None and not snake(name).endswith(("_id", "_ids")) and snake(name) != "id":
            out[snake(name)] = typed
    return out


def _resolved(prop: Any, root: dict[str, Any]) -> dict[str, Any] | None:
    """`prop`, or the definition its local `$ref` names (`#/$defs/Charge`)."""
    if not isinstance(prop, dict):
        return None
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for step in ref[2:].split("/"):
            node = node.get(step) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else None
    return prop


def field_type(name: str, prop: dict[str, Any]) -> str | None:
    """The card field type of an answer property: its format's, its JSON type's, `text` for a long text;
    None for a nested value or a secret."""
    declared = prop.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), None)
    if any(s in name for s in ("password", "secret", "token")) or name in GUARD_FLAGS:
        return None
    if declared in _JSON_TYPES:
        return _JSON_TYPES[declared]
    if declared not in ("string", None) or (declared is None and "enum" not in prop and "format" not in prop):
        return None
    fmt = prop.get("format")
    if fmt in _FORMAT_TYPES:
        return _FORMAT_TYPES[fmt]
    if name in ("email", "url"):
        return name
    return "text" if _TEXT_FIELDS.search(name) else "string"
