"""Settings a server holds once: Gmail's vacation responder (`get_vacation` / `update_vacation`), a store's
profile (`get_store` / `update_store`), a proxy's configuration. A server whose tools read a thing without naming
any record and change it by the same noun holds that thing once, with the fields its tools show and set; so a
read after a change shows the change (`rules/infer._singleton_rule` reads and sets it), where the schema engine
had made up a new one on every read."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import name_tokens, operation_kind, singular_word, snake, verb_kind
from cworld.schemas.plausible import plausible_number, value_for_type

#: Arguments that carry the call, not the thing's fields: credentials and paging.
_NOT_FIELDS = frozenset({"token", "access_token", "session_token", "auth_token", "api_key", "page", "page_size",
                         "limit", "offset", "cursor", "per_page"})


def held_settings(tools: Iterable[ToolSpec], taken: set[str], rng_for: Callable[[str], random.Random]) -> dict[str, Any]:
    """{noun: its fields and values} for each thing a get without arguments reads and an update of the same noun
    sets (`get_vacation`, `update_vacation(enableAutoReply, responseSubject)`), where the noun is no kind or state
    entry the world holds already (`taken`)."""
    tools = list(tools)
    reads = {_noun(t): t for t in tools if operation_kind(t) == "get" and not _asks(t) and not _names_one(t)}
    out: dict[str, Any] = {}
    for tool in tools:
        noun = _noun(tool)
        if not noun or operation_kind(tool) != "update" or noun not in reads or noun in taken or noun in out \
                or not noun.isidentifier() or _names_one(tool):
            continue
        fields = {**_scalars(reads[noun].output_schema or {}), **_scalars(tool.input_schema)}
        rng = rng_for(noun)
        values = {name: _value(name, schema, rng) for name, schema in sorted(fields.items())}
        if values:
            out[noun] = values
    return out


def _noun(tool: ToolSpec) -> str:
    """The thing the tool's name ends on, where it is one thing: not a plural (`get_positions` lists them) and
    not a verb (`crm_check_update`, `browser_close`)."""
    tokens = name_tokens(tool.name)
    last = tokens[-1] if tokens else ""
    return "" if not last or singular_word(last) != last or verb_kind(last) is not None else last


def _asks(tool: ToolSpec) -> bool:
    """Whether a read takes an argument it needs (then it reads one of several things, not the one)."""
    return any(snake(p) not in _NOT_FIELDS for p in tool.input_schema.get("required") or [])


def _names_one(tool: ToolSpec) -> bool:
    """Whether a tool can name one of several records (`update_customer(customer_id)`,
    `disable_inventory_location(merchantLocationKey)`): then its noun is a kind, not a thing held once."""
    return any(plain in ("id", "key", "uuid", "name", "sku") or plain.endswith(_NAMING_ENDS)
               for plain in map(snake, tool.input_schema.get("properties") or {}))


#: Endings of an argument that names one record.
_NAMING_ENDS = ("_id", "_ids", "_key", "_uuid", "_name", "_handle", "_slug")


def _scalars(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The schema's top-level fields that hold one value (a flag, a number, a text), by snake-case name; ids,
    tokens and paging left out."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {snake(name): s for name, s in (props or {}).items() if isinstance(s, dict)
            and s.get("type") in ("string", "boolean", "integer", "number") and snake(name) not in _NOT_FIELDS
            and snake(name) != "id" and not snake(name).endswith("_id")}


def _value(name: str, schema: dict[str, Any], rng: random.Random) -> Any:
    """A plausible value of one field, as its schema types it."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        return plausible_number(rng, name, (0, 100, 0 if kind == "integer" else 2))
    if schema.get("format") == "date-time" or name.endswith(("_at", "_time")):
        return value_for_type("datetime", rng, field=name)
    return value_for_type("email" if "email" in name else "string", rng, field=name)
