"""`{{step_id.path.to.field}}` references in gold-plan arguments, resolved from earlier results.

A gold plan (`Task.gold_plan`) cannot know the ids a live world will hand out, so a step names them
by where they come from: `{{find.contacts.0.contact_id}}` is field `contact_id` of the first item of
`contacts` in the structured result of step `find`. A list item may also be picked by content:
`{{find.contacts[name=Omar Hussain].contact_id}}` (first item whose field equals the value, ignoring
case) or `[name~omar]` (whose field contains it), conditions joined by `&`; a plan written that way survives a tool that returns
the same items in another order or among more. A string that is exactly one reference takes the
referenced value as is (a list stays a list, a number a number); a reference inside longer text is
replaced by the value's text. Lists and dicts are resolved item by item.

A path steps into a JSON object or array held as text (`json_in_text`): a FastMCP tool whose result is one
string answers `{"result": "<a JSON text>"}`, and `{{find.result.items[name=Q3].id}}` reads the
list inside it, whether the results hold the answer as it came or as an agent reads it (`agents.observe.payload`
opens that one field already).

Task synthesis uses the same resolver to verify a plan by executing it; scripted agents use it to
follow one. A reference that cannot be resolved raises `UnresolvedReference`, which says which step
and which part of the path failed, so an agent can decide to look again.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from cworld.data_model.references import REFERENCE, references

_PART = re.compile(r"\.([^.\[\]]+)|\[([^\]]*)\]")
_SELECTOR = re.compile(r"^\s*([^=~]+?)\s*([=~])\s*(.*?)\s*$")


class UnresolvedReference(LookupError):
    """A reference to a step that has no result yet, or to a path its result does not hold."""

    def __init__(self, step_id: str, path: str, reason: str) -> None:
        super().__init__(f"{{{{{step_id}{path}}}}}: {reason}")
        self.step_id = step_id
        self.path = path
        self.reason = reason


def referenced_steps(value: Any) -> list[str]:
    """The step ids `value` depends on, each once."""
    return list(dict.fromkeys(step for step, _ in references(value)))


def resolve(value: Any, results: Mapping[str, Any], *, strict: bool = True) -> Any:
    """`value` with every reference replaced from `results` (step id -> structured result).

    `strict=False` leaves a reference it cannot resolve as written, instead of raising: what a careless
    caller would send."""
    if isinstance(value, str):
        return _resolve_text(value, results, strict)
    if isinstance(value, Mapping):
        return {key: resolve(item, results, strict=strict) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [resolve(item, results, strict=strict) for item in value]
    return value


def lookup(results: Mapping[str, Any], step_id: str, path: str) -> Any:
    """The value at `path` (`.a.0.b`) in the result of `step_id`."""
    if step_id not in results:
        raise UnresolvedReference(step_id, path, "that step has no result yet")
    node = results[step_id]
    walked = ""
    for match in _PART.finditer(path):
        walked += match.group(0)
        if match.group(1) is not None:
            node = _child(node, match.group(1), step_id, walked)
        else:
            node = _select(node, match.group(2), step_id, walked)
    return node


def json_in_text(value: Any) -> dict[str, Any] | list[Any] | None:
    """The JSON object or array a text holds, else None: what a reference steps into and what an agent's
    observation reads (`agents.observe.payload`), one rule for both. A text that is a JSON number, string
    or word (`42`, `"ok"`, `true`) holds no record, so it stays text. Rows written in Python's repr (the
    sqlite server's `str(rows)`: `[{'id': 1}]`) are read as a client of such a server reads them."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "["):
        return None
    try:
        parsed = json.loads(value)
    except (json.JSONDecodeError, ValueError):
        parsed = _python_literal(value)
    return parsed if isinstance(parsed, dict | list) else None


def _python_literal(text: str) -> Any:
    """A Python literal's value (a dict or list of plain values), else None; never code run."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _opened(node: Any) -> Any:
    """`node`, or the JSON it holds as text: a path goes on into it."""
    held = json_in_text(node)
    return node if held is None else held


def _child(node: Any, part: str, step_id: str, walked: str) -> Any:
    node = _opened(node)
    if isinstance(node, Mapping):
        if part in node:
            return node[part]
        raise UnresolvedReference(step_id, walked, "no such field")
    if isinstance(node, list) and re.fullmatch(r"-?\d+", part):
        return _index(node, int(part), step_id, walked)
    raise UnresolvedReference(step_id, walked, f"cannot step into a {type(node).__name__}")


def _index(node: list[Any], index: int, step_id: str, walked: str) -> Any:
    if -len(node) <= index < len(node):
        return node[index]
    raise UnresolvedReference(step_id, walked, f"index out of range (the list has {len(node)} items)")


def _select(node: Any, selector: str, step_id: str, walked: str) -> Any:
    """`[3]` by position; `[field=value]` the first item whose field equals value, `[field~value]` whose
    field contains it; conditions joined with `&` must all hold."""
    node = _opened(node)
    if not isinstance(node, list):
        raise UnresolvedReference(step_id, walked, f"a selector needs a list, found a {type(node).__name__}")
    if re.fullmatch(r"\s*-?\d+\s*", selector):
        return _index(node, int(selector), step_id, walked)
    matched = [_SELECTOR.match(part) for part in selector.split("&")]
    conditions = [c for c in matched if c is not None]
    if len(conditions) != len(matched):
        raise UnresolvedReference(step_id, walked, "a selector is [n], [field=value] or [field~value]")
    for item in node:
        if isinstance(item, Mapping) and all(_holds(item, c) for c in conditions):
            return item
    raise UnresolvedReference(step_id, walked, "no item matches")


def _holds(item: Mapping[str, Any], condition: re.Match[str]) -> bool:
    field, op, wanted = condition.group(1), condition.group(2), condition.group(3).lower()
    if item.get(field) is None:
        return False
    have = str(item[field]).lower()
    return have == wanted or (op == "~" and wanted in have)


def _resolve_text(text: str, results: Mapping[str, Any], strict: bool) -> Any:
    whole = REFERENCE.fullmatch(text)
    if whole:
        return _lookup_or_keep(results, whole, strict, as_text=False)
    return REFERENCE.sub(lambda m: _lookup_or_keep(results, m, strict, as_text=True), text)


def _lookup_or_keep(results: Mapping[str, Any], match: re.Match[str], strict: bool, *, as_text: bool) -> Any:
    try:
        value = lookup(results, match.group(1), match.group(2))
    except UnresolvedReference:
        if strict:
            raise
        return match.group(0)
    return _as_text(value) if as_text else value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
