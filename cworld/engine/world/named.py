"""Kinds a server's tools name that its card lacks: `get_branch(organizationId, repositoryId)` on a card
without organizations. A service that takes an organization's id holds organizations, and refuses one it
does not hold; so the server's world holds records of every kind its tools' id arguments name, with the
ids those arguments take (numbers, uuids or `organization_0001`) and a name, the one thing every such
record has (`Acme organization`, `Organization 4821`). The rules then check these references as they check the card's own (`not_found`).
A kind a list reads under another record (`list_pipelines(organizationId)`) holds a reference to it
(`organization_id`): each pipeline is some organization's, so the list of one organization shows its
pipelines rather than none (the list's filter reads that field). A card kind
every one of the server's id arguments takes as a number (`contact_id: integer`) is numbered in its world
(`1`, `2`), so the ids it shows are ids its tools accept."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.kinds import head_noun, name_kinds, server_prefix, singular_kind
from cworld.engine.cards.operations import (
    id_stem,
    key_stem,
    kind_named,
    name_tokens,
    named_entity,
    names_many,
    operation_kind,
    singular_word,
    snake,
)
from cworld.engine.world.base import ServerWorld
from cworld.engine.world.idformat import card_format
from cworld.engine.world.names import NAME_FIELDS
from cworld.schemas.validation import validation_error

#: Stems that name no kind of their own: the record's parent or target (of the tool's own kind or any kind),
#: and values a client makes up for one call (an idempotency or request id).
GENERIC_STEMS = frozenset({"parent", "object", "entity", "resource", "target", "source", "external", "request",
                           "trace", "correlation", "idempotency", "reference", "ref", "related", "child", "root",
                           "client_request", "custom", "unique", "local", "global", "remote", "new", "old",
                           "name"})  # `name_or_id` names a record of any kind by either
#: Id formats tried in order; the first every argument naming the kind accepts is the kind's.
_FORMATS = ("{prefix}_{n:04d}", "{n}", "{uuid}")
_SAMPLE = {"{n}": "7", "{uuid}": "7f3c1a52-0b8e-4c1d-9a6e-2d4b5c6e7f80"}
_KIND_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def named_kinds(card: CategoryCard, tools: Iterable[ToolSpec]) -> list[EntityType]:
    """The kinds the tools' id arguments name that `card` lacks (in order of first mention), and the card's
    kinds they all take as numbers, renumbered."""
    found: list[tuple[str, bool, Any]] = []
    for tool in tools:
        props = tool.input_schema.get("properties") or {}
        typed = {snake(p) for p in props}
        for arg, schema in props.items():
            named = id_stem(arg) or _name_stem(tool, arg) or _key_stem(tool, arg)
            # `against_id` beside `against_type` names a record of any kind: no kind of its own
            if named is not None and _KIND_NAME.match(named[0]) and not _generic(named[0]) \
                    and f"{named[0]}_type" not in typed:
                found.append((named[0], named[1], schema if isinstance(schema, dict) else {}))
    stems = sorted({stem for stem, _, _ in found}, key=len)
    schemas: dict[str, list[Any]] = {}
    for stem, many, schema in found:
        # as the rules read an id argument: `testRepoId` names a repo, `relatedWorkItemId` a work item
        kind = kind_named(card, stem) or next((s for s in stems if stem.endswith(f"_{s}")), stem)
        schemas.setdefault(kind, []).append(schema.get("items", {}) if many else schema)
    by_name = name_kinds(card, tools)  # `list_charges`, `get_customer(id)`: kinds the tools' names name
    for kind, (ids, _) in by_name.items():
        schemas.setdefault(kind, []).extend(ids)
    parents = _parents(card, tools, stems, set(schemas))
    out = []
    listed_only: dict[str, list[Any]] = {k: [] for k in parents if k not in schemas and card.entity(k) is not None}
    for kind, taken in {**schemas, **listed_only}.items():
        own = card.entity(kind)
        if own is None:
            out.append(_entity(kind, taken, by_name.get(kind, ([], {}))[1], parents.get(kind, ())))
            continue
        update: dict[str, Any] = {}
        if taken and own.key_field == "id" and own.id_format != "{n}" and _numbered(own, taken):
            update = {"id_format": "{n}", "fields": {"id": "int", **own.fields}}
        linked = _linked(card, own, parents.get(kind, ()))
        if linked:
            update["fields"] = {**update.get("fields", own.fields), **linked}
        if update:
            out.append(own.model_copy(update=update))
    return _with_naming_fields(card, tools, out)


#: Fields a service names one record by besides its id (`get_inventory_item(sku)`, `get-collection-by-handle`),
#: with the card field type their values take. Not a URL: a tool that takes one reads any page of the open web.
NAMING_ARGS = {"sku": "code", "asin": "code", "ean": "code", "upc": "code", "gtin": "code", "isbn": "code",
               "ticker": "code", "symbol": "code", "code": "code", "handle": "string", "slug": "string",
               "username": "string", "login": "string", "email": "email", "domain": "string",
               "hostname": "string", "filename": "path"}


def _with_naming_fields(card: CategoryCard, tools: Iterable[ToolSpec], kinds: list[EntityType]) -> list[EntityType]:
    """`kinds` with the fields the server's tools name a card kind's records by that the card lacks: a store whose
    `get_inventory_item(sku)` names an item by its SKU holds items that have one (and a get by it finds one), as a
    service that takes an id holds records with ids (`named_kinds`). Only where the tool's name names the kind."""
    added: dict[str, dict[str, str]] = {}
    held = with_named_kinds(card, kinds)  # a kind the tools name that the card lacks (`item`) too
    for tool in tools:
        entity, op = named_entity(tool, held), operation_kind(tool)
        if entity is None or op in ("create", "search"):
            continue
        props = tool.input_schema.get("properties") or {}
        for arg in tool.input_schema.get("required") or []:
            plain = snake(arg).removeprefix(f"{entity.name}_")
            typed = (props.get(arg) or {}).get("type") if isinstance(props.get(arg), dict) else None
            if typed == "array":  # `get_users(usernames)`: several records, each by its username
                plain, typed = singular_word(plain), "string"
            elif op == "list":  # `list_repos(username)`: the owner's, not each repo's
                continue
            if plain in NAMING_ARGS and plain not in entity.fields and typed in ("string", None) \
                    and id_stem(arg) is None:
                added.setdefault(entity.name, {})[plain] = NAMING_ARGS[plain]
    if not added:
        return kinds
    by_name = {k.name: k for k in kinds}
    for name, fields in added.items():
        own = by_name.get(name) or held.entity(name)
        if own is not None:
            by_name[name] = own.model_copy(update={"fields": {**own.fields, **fields}})
    return list(by_name.values())


#: Words before `_name` that name no kind: whose or what name it is (`display_name`, `profile_name` of a login).
_NAME_WORDS = frozenset({"display", "first", "last", "full", "given", "family", "nick", "user", "host", "domain",
                         "file", "profile", "region", "author", "sender", "contact", "company", "field", "column",
                         "model", "function", "tool", "key", "new", "old", "output", "input", "class", "object"})


def _name_stem(tool: ToolSpec, arg: str) -> tuple[str, bool] | None:
    """For a required `<kind>_name` argument of a tool whose name names that kind (`get_alarm_history(alarm_name)`,
    `ptt_get_board(boardName)`): (the kind, False), as a `<kind>_id` names one; None otherwise."""
    plain = snake(arg)
    if not plain.endswith("_name") or arg not in (tool.input_schema.get("required") or []):
        return None
    stem = singular_word(plain.removesuffix("_name"))
    words = {singular_word(w) for w in name_tokens(tool.name)}
    return (stem, False) if stem in words and stem not in _NAME_WORDS and "_" not in stem else None


def _key_stem(tool: ToolSpec, arg: str) -> tuple[str, bool] | None:
    """For a required `<kind>Key` argument of a tool whose name names that kind's last word
    (`get_inventory_location(merchantLocationKey)`, `delete_inventory_item_group(inventoryItemGroupKey)`): the kind
    and whether it holds several, as a `<kind>_id` names one. Never a credential (`api_key` of `get_weather`: the
    name names no api)."""
    stem = key_stem(arg)
    if stem is None or arg not in (tool.input_schema.get("required") or []):
        return None
    words = {singular_word(w) for w in name_tokens(tool.name)}
    last = stem[0].split("_")[-1]
    return stem if last in words and last not in _NAME_WORDS and last not in _CREDENTIALS else None


#: Last words of a `<x>_key` argument that is a secret or a storage key, never a record of a kind.
_CREDENTIALS = frozenset({"api", "access", "secret", "license", "private", "public", "ssh", "encryption", "signing",
                          "cache", "partition", "sort", "primary", "idempotency", "session", "auth", "token"})


def _linked(card: CategoryCard, own: EntityType, parents: Iterable[str]) -> dict[str, str]:
    """The references a card's kind gains on this server: one to each kind its lists are read under
    (`list_channels(teamId)` on a messaging card whose channels name no team), unless it names that kind
    already."""
    held = {kind_named(card, name.removesuffix("_id")) for name in own.fields}
    return {f"{p}_id": "id" for p in parents if f"{p}_id" not in own.fields and p not in held and p != own.name}


def _parents(card: CategoryCard, tools: Iterable[ToolSpec], stems: list[str], kinds: set[str]) -> dict[str, list[str]]:
    """Kind -> the kinds its lists are read under (`list_pipelines(organizationId)`, `getRevisions(fileId)`: a
    pipeline is an organization's): the list's head noun is the kind, and each id argument that names another
    kind of the server is its parent."""
    tools = list(tools)
    prefix = server_prefix(tools)
    out: dict[str, list[str]] = {}
    for tool in tools:
        op = operation_kind(tool)
        head = head_noun(tool, prefix) if op in ("list", "search") or (op == "get" and names_many(tool)) else None
        listed = _kind_of(card, singular_kind(head), stems) if head else None
        if listed is not None and listed not in kinds and card.entity(listed) is None:
            listed = _compound(tool, kinds)  # `getProjectUpdates` lists project updates, not updates
        if listed is None or (listed not in kinds and card.entity(listed) is None):
            continue
        for arg in (tool.input_schema or {}).get("properties") or {}:
            named = id_stem(arg)
            if named is None or named[1] or _generic(named[0]):
                continue
            parent = _kind_of(card, named[0], stems)
            if parent in kinds and parent != listed and parent not in out.setdefault(listed, []):
                out[listed].append(parent)
    return out


def _compound(tool: ToolSpec, kinds: set[str]) -> str | None:
    """The kind the name's last two words name together (`ebay_get_ad_groups`: `ad_group`), when it is one."""
    tokens = name_tokens(tool.name)
    compound = "_".join([*tokens[-2:-1], singular_word(tokens[-1])]) if len(tokens) >= 2 else ""
    return compound if compound in kinds else None


def _kind_of(card: CategoryCard, stem: str, stems: list[str]) -> str:
    """The kind an id stem names, as `named_kinds` files it (`testRepoId` names a repo)."""
    return kind_named(card, stem) or next((s for s in stems if stem.endswith(f"_{s}")), stem)


def thin_kinds(world: ServerWorld) -> set[str]:
    """The kinds a world holds only the names of (those its tools name that its card lacks) and the records
    they are under: a goal can find such a record, but nothing about it to decide on."""
    return {k["name"] for k in world.named_kinds
            if {f for f, typed in (k.get("fields") or {}).items() if typed != "id"} <= {"id", "name"}}


def with_named_kinds(card: CategoryCard, kinds: Iterable[EntityType]) -> CategoryCard:
    """The card with the server's kinds: its own renumbered ones in their place, the ones it lacks after."""
    named = {k.name: k for k in kinds}
    if not named:
        return card
    own = [named.pop(e.name, e) for e in card.entities]
    return card.model_copy(update={"entities": [*own, *named.values()]})


def _generic(stem: str) -> bool:
    return stem in GENERIC_STEMS or stem.split("_")[-1] in GENERIC_STEMS or len(stem) < 2


def _numbered(own: EntityType, schemas: list[Any]) -> bool:
    """Whether a card's kind is numbered on this server: every id argument naming it takes a number, or one
    refuses the card's own ids (`service_ids: [string, pattern ^[0-9]+$]` against `svc_0001`) and every one
    takes a number's digits."""
    if all(_numeric(s) for s in schemas):
        return True
    own_sample = card_format(own).make(1, random.Random(0))
    return any(not _accepts(s, own_sample) for s in schemas) and all(_accepts(s, _sample("{n}", own.name, s))
                                                                     for s in schemas)


def _numeric(schema: dict[str, Any]) -> bool:
    """An id argument that takes a number, alone or beside null (`anyOf: [integer, null]`, an optional id)."""
    options = [schema, *(o for o in schema.get("anyOf") or schema.get("oneOf") or [] if isinstance(o, dict))]
    return any(o.get("type") in ("integer", "number") for o in options)


def _entity(stem: str, schemas: list[Any], answered: dict[str, str] | None = None,
            parents: Iterable[str] = ()) -> EntityType:
    """The kind's entity: ids its arguments accept, a name, the fields the tools' answers show for it, and a
    reference to each kind its lists are read under (`organization_id`)."""
    template = next((t for t in _FORMATS if all(_accepts(s, _sample(t, stem, s)) for s in schemas)), _FORMATS[0])
    numeric = template == "{n}" and any(_numeric(s) for s in schemas)
    label = stem.replace("_", " ")
    shown = dict(answered or {})
    named = {} if any(f in shown for f in NAME_FIELDS) else {"name": "string"}
    return EntityType(name=stem, id_prefix=stem, id_format=template, seed_count=4,
                      fields={**({"id": "int"} if numeric else {}), **named, **shown,
                              **{f"{p}_id": "id" for p in parents if f"{p}_id" not in shown}},
                      vocabulary=[f"{{company}} {label}", f"{{city}} {label}", f"{label.capitalize()} {{n}}"])


def _sample(template: str, stem: str, schema: dict[str, Any]) -> Any:
    text = _SAMPLE.get(template, f"{stem}_0001")
    return int(text) if template == "{n}" and _numeric(schema) else text


def _accepts(schema: dict[str, Any], value: Any) -> bool:
    if "$ref" in schema:  # a schema of the tool's own definitions: only its type is read here
        return True
    try:
        return validation_error(schema, value) is None
    except Exception:  # noqa: BLE001 - an unreadable schema constrains nothing we can check
        return True
