"""Arguments for validation calls: from the manifest, else generated from the tool's input schema.

Generated arguments respect the schema (required fields, enums, formats, bounds) so that a rejection
at stage (ii) means the tool, not the probe, is at fault. Identifiers cannot be invented: a `ValueBank`
collects values that earlier responses (and a sandbox app's seeded state) returned, and a parameter
named like one of their keys (`order_id`, `token`, `email`) takes such a value when it fits the schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema

from cworld.data_model import ToolResult, ToolSpec

_NAME_HINTS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"e-?mail"), "alex@example.com"),
    (re.compile(r"ur[li]$|^url|link|href"), "https://example.com/"),
    (re.compile(r"timezone|tz$"), "UTC"),
    (re.compile(r"lang"), "en"),
    (re.compile(r"currency"), "USD"),
    (re.compile(r"country"), "US"),
    (re.compile(r"phone"), "+15550100"),
    (re.compile(r"owner|user|login|author"), "octocat"),
    (re.compile(r"repo"), "hello-world"),
    (re.compile(r"query|search|keyword|term|^q$"), "test"),
    (re.compile(r"(^|_)id$|ids?$"), "1"),
    (re.compile(r"name|title"), "example"),
    (re.compile(r"sha|commit|ref|branch"), "main"),
    (re.compile(r"path|file|dir"), "README.md"),
    (re.compile(r"text|body|content|message|note"), "hello from cworld"),
)

#: What a parameter's description says about its format: checked before the name, and stronger than a
#: value harvested from another answer.
_FORMAT_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"YYYY-MM-DD[T ]HH:MM"), "datetime"),
    (re.compile(r"YYYY-MM-DD"), "date"),
    (re.compile(r"\bHH:MM"), "time"),
    (re.compile(r"\bIANA\b|time ?zone", re.IGNORECASE), "Europe/Paris"),
    (re.compile(r"\bJSON\b"), '{"name": "example", "items": [1, 2, 3]}'),
    (re.compile(r"\bdigits\b|\binteger\b", re.IGNORECASE), "42"),
)
#: Weaker hints: they shape an invented value but do not beat a harvested one (an account's own email).
_DESCRIPTION_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    *_FORMAT_HINTS,
    (re.compile(r"\be-?mail\b", re.IGNORECASE), "alex@example.com"),
    (re.compile(r"\bURL\b", re.IGNORECASE), "https://example.com/"),
)

#: "e.g. 'km'", "such as LIS", "for example: 3": an example the description itself offers.
_EXAMPLE = re.compile(
    r"(?:e\.g\.|for example|such as|example:)\s*[:,]?\s*(?:'([^']+)'|\"([^\"]+)\"|`([^`]+)`|([\w.+/-]+))",
    re.IGNORECASE,
)

_FORMATS: dict[str, str] = {
    "date": "date",
    "date-time": "datetime-z",
    "time": "12:00:00",
    "email": "alex@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000001",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
}

_PATTERN_CANDIDATES = ("example", "abc", "ABC", "a1", "123", "1", "2026-01-15", "AB-123", "main", "x")
_BIG_INT_NAMES = re.compile(r"max|limit|len|chars|size|width|count|top", re.IGNORECASE)

_PAST_NAMES = re.compile(r"birth|dob|born", re.IGNORECASE)
_END_NAMES = re.compile(r"out$|end|until|return|(^|_)to$", re.IGNORECASE)
_READ_LIKE = re.compile(r"^(get|list|search|read|fetch|find|describe|show|query|lookup|count|view|check|browse)")


# --- generation from a schema ----------------------------------------------------------------------


class ArgGenerator:
    """Example values for a schema. Dates and times fall a month after `now`: the sandbox clock's, or the
    real one, so that tools which refuse the past (bookings, reminders) accept them."""

    def __init__(self, root: dict[str, Any], now: datetime | None = None) -> None:
        self.root = root
        self.now = now or datetime.now(UTC)

    def _moment(self, kind: str, name: str = "") -> str:
        """Placeholder kinds become text: a date 30 days ahead (a day later for an end, 30 years back for a
        birth date), 10:00 (11:00 for an end)."""
        end = bool(_END_NAMES.search(name))
        day = self.now + timedelta(days=30 + (1 if end and kind == "date" else 0))
        if _PAST_NAMES.search(name):
            day = self.now - timedelta(days=365 * 30)
        hour = "11:00" if end else "10:00"
        moments = {"date": "%Y-%m-%d", "datetime": f"%Y-%m-%dT{hour}", "datetime-z": f"%Y-%m-%dT{hour}:00Z"}
        if kind in moments:
            return day.strftime(moments[kind])
        return hour if kind == "time" else kind

    def value(self, schema: dict[str, Any], name: str = "") -> Any:
        """A value that satisfies `schema` (as far as a heuristic can), shaped by the parameter's name."""
        schema = _resolve(schema, self.root)
        if (branch := _branch(schema)) is not None:
            return self.value(branch, name)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        if "default" in schema and schema["default"] is not None:
            return schema["default"]
        if schema.get("examples"):
            return schema["examples"][0]
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((t for t in kind if t != "null"), "string")
        kind = kind or _guess_type(schema)
        if kind in ("integer", "number"):
            return _number(schema, name)
        if kind == "array":
            return self._array(schema, name)
        if kind == "object":
            return self._object(schema)
        if kind in ("boolean", "null"):
            return False if kind == "boolean" else None
        return self._string(schema, name)

    def _string(self, schema: dict[str, Any], name: str) -> str:
        description = str(schema.get("description", ""))
        value = _FORMATS.get(str(schema.get("format", ""))) or _described_example(description)
        value = value or next((v for pat, v in _DESCRIPTION_HINTS if pat.search(description)), None)
        if value is None:
            lowered = name.lower()
            value = "datetime" if "datetime" in lowered else "date" if "date" in lowered else None
            value = value or next((v for pat, v in _NAME_HINTS if pat.search(lowered)), "example")
        value = self._moment(value, name)
        pattern = schema.get("pattern")
        if pattern and not _matches(pattern, value):
            value = next((c for c in _PATTERN_CANDIDATES if _matches(pattern, c)), value)
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if len(value) < low:
            value = value + "x" * (low - len(value))
        return value[: int(high)] if high is not None else value

    def _array(self, schema: dict[str, Any], name: str) -> list[Any]:
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        count = max(1, int(schema.get("minItems", 1)))
        item_schema = _resolve(items, self.root)
        if _is_number_list(item_schema, self.root):
            return _matrix(item_schema, name)
        if _is_number(item_schema):
            count = max(count, 3)  # varied numbers: statistics over a constant list are undefined
            return [_number(item_schema, _singular(name), offset=i) for i in range(count)]
        first = self.value(items, _singular(name))
        if schema.get("uniqueItems") and count > 1 and isinstance(first, str):
            return [f"{first}{i}" if i else first for i in range(count)]
        return [first for _ in range(count)]

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        props = schema.get("properties", {})
        return {key: self.value(props.get(key, {}), key) for key in schema.get("required", []) if key in props}


MATRIX_SIZE = 3


def _is_number(schema: dict[str, Any]) -> bool:
    return schema.get("type") in ("number", "integer") and "enum" not in schema


def _is_number_list(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    items = schema.get("items")
    return schema.get("type") == "array" and isinstance(items, dict) and _is_number(_resolve(items, root))


def _matrix(row_schema: dict[str, Any], name: str) -> list[list[float | int]]:
    """A square, invertible matrix (a heavier diagonal): what matrix tools need, as lists of rows."""
    cell = row_schema["items"]
    n = MATRIX_SIZE
    return [[_number(cell, name, offset=i * n + j + (n if i == j else 0)) for j in range(n)] for i in range(n)]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return _resolve(node, root) if isinstance(node, dict) else {}
    return schema


def _branch(schema: dict[str, Any]) -> dict[str, Any] | None:
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key, []) if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            merged = {k: v for k, v in schema.items() if k != key}
            return {**merged, **options[0]}
    return None


def _guess_type(schema: dict[str, Any]) -> str:
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _described_example(description: str) -> str | None:
    match = _EXAMPLE.search(description)
    if match is None:
        return None
    quoted = match.group(1) or match.group(2) or match.group(3)
    return quoted or match.group(4).rstrip(".,;:)")


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return True


def _number(schema: dict[str, Any], name: str, offset: int = 0) -> float | int:
    """1 (10 for sizes and limits), plus `offset`, kept inside the bounds and on `multipleOf`."""
    is_int = schema.get("type") == "integer"
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = (10 if _BIG_INT_NAMES.search(name) else 1) + offset
    if low is not None:
        value = max(value, low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0))
    if high is not None:
        value = min(value, high - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0))
    if multiple := schema.get("multipleOf"):
        value = multiple * max(1, round(value / multiple))
    return int(value) if is_int else float(value)


def example_value(schema: dict[str, Any], name: str = "", root: dict[str, Any] | None = None,
                  now: datetime | None = None) -> Any:
    """A value for `schema` (see `ArgGenerator.value`)."""
    return ArgGenerator(root if root is not None else schema, now).value(schema, name)


# --- values harvested from responses and state ------------------------------------------------------


class ValueBank:
    """Values seen so far, by key name; the newest response values first, seeded state values last."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now
        self._fresh: dict[str, list[Any]] = {}
        self._seeded: dict[str, list[Any]] = {}

    def seed(self, data: Any) -> None:
        _collect(data, self._seeded, parent="")

    def learn(self, result: ToolResult) -> None:
        """Keep the values of a successful response (its structured content, or its text if JSON)."""
        if result.is_error:
            return
        data: Any = result.structured_content
        if data is None:
            try:
                data = json.loads(result.text)
            except (json.JSONDecodeError, TypeError):
                return
        found: dict[str, list[Any]] = {}
        _collect(data, found, parent="")
        for key, values in found.items():
            self._fresh[key] = values + [v for v in self._fresh.get(key, []) if v not in values]

    def candidates(self, name: str) -> list[Any]:
        return [*self._fresh.get(name, []), *self._seeded.get(name, [])]


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _collect(data: Any, out: dict[str, list[Any]], parent: str, depth: int = 0) -> None:
    """Scalars by key; an `id` inside `orders`/`order` also counts as `order_id`."""
    if depth > 8:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str | int | float | bool) and value is not None:
                _add(out, str(key), value)
                if key == "id" and parent:
                    _add(out, f"{_singular(parent)}_id", value)
            else:
                _collect(value, out, str(key), depth + 1)
    elif isinstance(data, list):
        for item in data[:50]:
            _collect(item, out, parent, depth + 1)


def _add(out: dict[str, list[Any]], key: str, value: Any) -> None:
    bucket = out.setdefault(key, [])
    if value not in bucket and len(bucket) < 20:
        bucket.append(value)


# --- arguments for one tool -------------------------------------------------------------------------


def _fits(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(value, {**schema, **({"$defs": root["$defs"]} if "$defs" in root else {})})
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True


_ID_WORDS = re.compile(r"\b([a-z]+) ids?\b", re.IGNORECASE)


def bank_keys(name: str, prop: dict[str, Any]) -> list[str]:
    """Keys whose harvested values may fill this parameter: its name, the singular of an `_ids` list,
    and `<word>_id` for every "<word> id(s)" its description mentions ("contact ids from search_contacts")."""
    keys = [name]
    if prop.get("type") == "array" or name.endswith("_ids"):
        keys.append(_singular(name))
    keys += [f"{w.lower()}_id" for w in _ID_WORDS.findall(str(prop.get("description", "")))]
    return list(dict.fromkeys(keys))


def _harvested(name: str, prop: dict[str, Any], root: dict[str, Any], bank: ValueBank) -> Any:
    """A harvested value (wrapped in a list for array parameters) that fits the schema, else None."""
    is_array = prop.get("type") == "array"
    for key in bank_keys(name, prop):
        for value in bank.candidates(key):
            candidate = [value] if is_array and not isinstance(value, list) else value
            if _fits(candidate, prop, root):
                return candidate
    return None


def generate_args(tool: ToolSpec, bank: ValueBank | None = None) -> dict[str, Any]:
    """Required parameters only: a harvested value when one fits, else an example from the schema."""
    schema = tool.input_schema or {}
    props: dict[str, Any] = schema.get("properties", {}) or {}
    gen = ArgGenerator(schema, bank.now if bank else None)
    args: dict[str, Any] = {}
    for key in schema.get("required", []) or []:
        prop = _resolve(props.get(key, {}), schema)
        harvested = _harvested(key, prop, schema, bank) if bank else None
        args[key] = harvested if harvested is not None and _prefer_harvest(key, prop) else gen.value(prop, key)
    return args


def _prefer_harvest(name: str, prop: dict[str, Any]) -> bool:
    """Identifiers always come from the bank; other strings (an account's email) only when the description
    does not say what to pass itself; numbers, lists and objects are never borrowed from other answers."""
    if is_identifier(name, prop):
        return True
    if prop.get("type") != "string":
        return False
    description = str(prop.get("description", ""))
    return _described_example(description) is None and not any(p.search(description) for p, _ in _FORMAT_HINTS)


_IDENTIFIER = re.compile(r"(^|_)(id|ids|token|key|code|sku|handle|slug)$", re.IGNORECASE)


def is_identifier(name: str, prop: dict[str, Any]) -> bool:
    """Ids and tokens must be harvested (an invented one names nothing); other values may be invented,
    and a description's own example beats a value seen elsewhere."""
    return bool(_IDENTIFIER.search(name) or _ID_WORDS.search(str(prop.get("description", ""))))


def planned_args(tool: ToolSpec, probe_args: dict[str, dict[str, Any]], bank: ValueBank | None) -> tuple[dict[str, Any], str]:
    """(arguments, source): the manifest's own for this tool (over its "*" defaults), else generated."""
    defaults = {k: v for k, v in probe_args.get("*", {}).items() if k in tool.input_schema.get("properties", {})}
    if tool.name in probe_args:
        return {**defaults, **probe_args[tool.name]}, "manifest"
    generated = generate_args(tool, bank)
    return {**generated, **defaults}, ("manifest+generated" if defaults else "generated")


def schema_problem(tool: ToolSpec, args: dict[str, Any]) -> str | None:
    """Why `args` break the tool's input schema (a probe bug, noted in the report), or None."""
    try:
        jsonschema.validate(args, tool.input_schema)
    except jsonschema.ValidationError as exc:
        return exc.message[:200]
    except jsonschema.SchemaError:
        return None
    return None


def looks_read_only(tool: ToolSpec) -> bool:
    """The annotation when the server gives one; otherwise a read-like name (get_, list_, search_ ...)."""
    hint = tool.annotations.read_only_hint
    if hint is not None:
        return bool(hint)
    return bool(_READ_LIKE.match(tool.name.lower()))


def probe_order(tools: list[ToolSpec], edges: Iterable[tuple[str, str]] = ()) -> list[ToolSpec]:
    """Producers before consumers (declared edges `before -> after`, by tool name), destructive tools last,
    otherwise the server's own order: so ids exist before tools that need them, and deletes come at the end."""
    by_name = {t.name: t for t in tools}
    position = {t.name: i for i, t in enumerate(tools)}
    incoming: dict[str, set[str]] = {t.name: set() for t in tools}
    for before, after in edges:
        if before in by_name and after in by_name and before != after:
            incoming[after].add(before)
    done: list[ToolSpec] = []
    while incoming:
        ready = [n for n, deps in incoming.items() if not deps] or list(incoming)  # a cycle: take the rest as is
        pick = min(ready, key=lambda n: (bool(by_name[n].annotations.destructive_hint), position[n]))
        done.append(by_name[pick])
        del incoming[pick]
        for deps in incoming.values():
            deps.discard(pick)
    return done
