"""Tools whose arguments come wrapped in one object (`get_room(path={room_id})`, `lookup_disease(params={...})`,
`create_policy(body={...})`): a REST path, a pydantic model, a request body. Inference reads the wrapped
arguments as the tool's own, so `path.room_id` is checked as `room_id` is; the call's arguments are unwrapped
the same way before a rule runs on them (`RulesEngine`)."""

from __future__ import annotations

from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import name_tokens, singular_word, snake

#: Names of an argument that only wraps the others (in snake case).
WRAPPER_ARGS = frozenset({"params", "parameters", "path", "path_params", "body", "request", "request_body", "input",
                          "args", "arguments", "payload"})


#: Endings of an argument that wraps a record's fields (`productData`, `customer_input`, `order_body`).
WRAPPER_SUFFIXES = ("_data", "_input", "_body", "_request", "_params", "_payload")


def wrapper_of(tool: ToolSpec) -> str | None:
    """The argument that wraps the tool's others: named as a wrapper (a body, a request, `productData`, or the
    record the tool's name names: `create-workout(workout={title, start_time})`), an object with properties of its
    own, the only such argument, and none of its properties named as one beside it (`create_ad(campaignId,
    request={listingId})`: a path parameter and a body); None for a tool without one."""
    schema = tool.input_schema or {}
    props: dict[str, Any] = schema.get("properties") or {}
    named = {singular_word(w) for w in name_tokens(tool.name)}
    found = [(name, inner) for name, prop in props.items() if _wraps(snake(name), named)
             and (inner := _resolved(prop, schema)).get("type") in ("object", None) and inner.get("properties")]
    if len(found) != 1:
        return None
    name, inner = found[0]
    return None if set(inner["properties"]) & (set(props) - {name}) else name


def _wraps(plain: str, words: set[str]) -> bool:
    """Whether an object argument's name says it holds the call's fields rather than one value."""
    return plain in WRAPPER_ARGS or plain.endswith(WRAPPER_SUFFIXES) or plain in words


def unwrapped(tool: ToolSpec) -> tuple[ToolSpec, str] | None:
    """(the tool as if its wrapped arguments were its own, the wrapper's properties beside the others; the
    wrapper's name); None for a tool without a wrapper."""
    name = wrapper_of(tool)
    if name is None:
        return None
    schema = tool.input_schema
    inner = _resolved(schema["properties"][name], schema)
    props = {**{k: v for k, v in schema["properties"].items() if k != name}, **inner["properties"]}
    outer = [r for r in schema.get("required") or [] if r != name]
    flat = {**{k: v for k, v in schema.items() if k not in ("properties", "required")}, "properties": props,
            "required": [*outer, *(inner.get("required") or [])]}
    return tool.model_copy(update={"input_schema": flat}), name


def unwrapped_arguments(arguments: dict[str, Any], wrapper: str) -> dict[str, Any]:
    """A call's arguments with the wrapper's own laid beside the others (a wrapped one wins a clash)."""
    inner = arguments.get(wrapper)
    outer = {k: v for k, v in arguments.items() if k != wrapper}
    return {**outer, **inner} if isinstance(inner, dict) else outer


def _resolved(prop: Any, root: dict[str, Any]) -> dict[str, Any]:
    """A property's schema with a local `$ref` (`#/$defs/Params`) followed once."""
    if not isinstance(prop, dict):
        return {}
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        found: Any = root
        for part in ref[2:].split("/"):
            found = found.get(part) if isinstance(found, dict) else None
        return found if isinstance(found, dict) else {}
    return prop
