"""Tools whose argument names the kind they act on: HubSpot's `hubspot-list-objects(objectType)`, Kubernetes'
`kubectl_get(resourceType, name)`, QuickBooks' `delete_entity(entity_type, id)`. The call's kind is the value it
gives, so a list reads that kind's records, a get finds the record it names among them, and a type the service
does not take is refused (HubSpot answers 400 for an unknown object type). A type the service takes that the
world holds no records of (its enum or description lists it) reads as empty: it is there, with nothing in it."""

from __future__ import annotations

import re
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import name_tokens, singular_word, snake
from cworld.engine.rules.arguments import named_arg
from cworld.engine.rules.spec import Check, ListRead, Rule
from cworld.engine.world.base import ServerWorld
from cworld.values import norm

#: Arguments whose value is the kind of record a call is about.
KIND_ARGS = ("object_type", "resource_type", "entity_type", "record_type")
#: Arguments naming the one record of that kind a get is about (by key, or by name).
RECORD_ARGS = ("id", "object_id", "record_id", "resource_id", "entity_id", "name", "resource_name")
#: The last word of a tool's name that reads the chosen kind's records: a generic noun, or a bare verb.
_RECORD_WORDS = frozenset({"object", "record", "resource", "entity", "item", "get", "describe", "read", "list",
                           "search", "find"})
#: Arguments holding the words a search looks for.
_QUERY_ARGS = ("query", "q", "search", "keyword", "keywords")
#: A description's list of the values it takes: "Valid values include: appointments, companies, contacts".
_LISTED = re.compile(r"(?:valid values(?: include)?|one of|e\.g\.|such as)\s*:?\s*\(?([\w ,./-]+)", re.IGNORECASE)


def selected_kind_rule(tool: ToolSpec, op: str, world: ServerWorld) -> Rule | None:
    """The rule of a list, search or get whose required argument names its kind; None for any other tool, and
    where the world holds fewer than two kinds to choose from."""
    props, required, chooser, held = _choosing(tool, world)
    last = singular_word(name_tokens(tool.name)[-1]) if name_tokens(tool.name) else ""
    # the records themselves (`list_objects`, `kubectl_get`), not what is said of their kind (`list_properties`,
    # `get_counts`, `kubectl_logs`: the properties, the counts, the logs of that kind)
    if chooser is None or op not in ("list", "search", "get") or len(held) < 2 or last not in _RECORD_WORDS:
        return None
    chosen, known = _chosen(chooser, props[chooser], held)
    checks = [known, Check(let={"picked": f"({chosen} or {{}})"})]
    one = named_arg(props, RECORD_ARGS) if op == "get" else None
    if one is None and op == "get":
        return None  # `describe_object(object_type)` says what the kind is, it lists none of its records
    if one is None:
        query = named_arg(props, _QUERY_ARGS, "string")
        return Rule(op="list" if op == "get" else op, read_only=True, check=checks, origin="inferred",
                    list_=ListRead.model_validate({"from": "picked", "item": "{'id': key, **it}", "page": None,
                                                   "size": None, "page_size": 100, "meta": False,
                                                   "where": f"matches(args[{query!r}], it)" if query else None}))
    # `kubectl_get(resourceType)` without a name lists them all, as kubectl does
    key = (f"([k for k, v in picked.items() if str(k) == str(args[{one!r}]) or (isinstance(v, dict) and "
           f"norm(v.get('name')) == norm(args[{one!r}]))] + [None])[0]")
    every = "{'items': [{'id': k, **v} for k, v in picked.items() if isinstance(v, dict)]}"
    return Rule(op="get", read_only=True, origin="inferred",
                answer=f"({{'id': target_key, **picked[target_key]}} if target_key is not None else {every})",
                check=[*checks, Check(let={"target_key": key}),
                       Check(fail=f"args[{one!r}] is not None and target_key is None", error="not_found",
                             message=f"no {{args[{chooser!r}]}} '{{args[{one!r}]}}'")])


def _taken_values(schema: Any) -> list[str]:
    """The values an argument's schema says it takes: its enum, else the list its description gives."""
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(schema.get("enum"), list):
        return [str(v) for v in schema["enum"]]
    found = _LISTED.search(str(schema.get("description") or ""))
    return [w.strip() for w in re.split(r",|\bor\b|\band\b", found.group(1)) if w.strip()] if found else []


def selected_record_checks(tool: ToolSpec, world: ServerWorld) -> list[Check]:
    """For a call about one record of the kind its argument names (`accelo_list_progressions(object_type,
    object_id)`, QuickBooks' `delete_entity(entity_type, id)`, `create_share_link(record_type, record_id)`): the
    type must be one the service takes and, where the world holds that kind, the record must be there. Empty for
    a tool without both arguments."""
    props, required, chooser, held = _choosing(tool, world)
    one = next((p for p in props if snake(p) in ("object_id", "record_id", "resource_id", "entity_id", "id")
                and p in required), None)
    if chooser is None or one is None or len(held) < 2:
        return []
    chosen, known = _chosen(chooser, props[chooser], held)
    return [known, Check(fail=f"{chosen} is not None and str(args[{one!r}]) not in [str(k) for k in {chosen}]",
                         error="not_found", message=f"no {{args[{chooser!r}]}} '{{args[{one!r}]}}'")]


def _choosing(tool: ToolSpec, world: ServerWorld) -> tuple[dict[str, Any], set[str], str | None, dict[str, str]]:
    """(the tool's arguments, those it requires, the required one naming the kind, None without one; the world's
    kinds it can name, to their collections)."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    chooser = next((p for p in props if snake(p) in KIND_ARGS and p in required), None)
    held = {kind: coll for kind, coll in world.kinds.items()
            if coll.isidentifier() and isinstance(world.state.get(coll), dict)}
    return props, required, chooser, held


def _chosen(chooser: str, schema: Any, held: dict[str, str]) -> tuple[str, Check]:
    """(the expression of the collection the call's type names, None where the world holds no such kind; the
    check refusing a type the service does not take: neither a kind the world holds nor one its schema lists)."""
    table: dict[str, str] = {}
    for kind, coll in sorted(held.items()):
        for name in (kind, coll, f"{kind}s", kind.replace("_", "")):
            table.setdefault(name, coll)
    value = f"norm(args[{chooser!r}]).replace(' ', '_').replace('-', '_')"
    chosen = "{" + ", ".join(f"{n!r}: {c}" for n, c in table.items()) + "}" + f".get({value})"
    taken = sorted({norm(v).replace(" ", "_").replace("-", "_") for v in _taken_values(schema)} - set(table))
    what = snake(chooser).replace("_", " ")
    return chosen, Check(fail=f"{chosen} is None and {value} not in {taken!r}", error="invalid",
                         message=f"unknown {what} '{{args[{chooser!r}]}}': one of {', '.join(sorted(held))}")
