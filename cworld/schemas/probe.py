"""The probe mode of the value generator: example values for validation calls when the manifest gives none.

The values respect the schema (enums, formats, bounds, patterns, lengths) and read the parameter's name
and description for what a heuristic can tell: an example the description offers ("e.g. 'km'"), a
format it names ("YYYY-MM-DD", "JSON"), dates a month ahead of `now` (tools that book or remind refuse
the past), varied numbers for statistics, a square invertible matrix for matrix tools.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from cworld.schemas.values import UNSET, ValueGenerator, fit_length
from cworld.schemas.walk import resolve_ref

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
FORMAT_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"YYYY-MM-DD[T ]HH:MM|ISO ?8601 date/?time|date/time", re.IGNORECASE), "datetime"),
    (re.compile(r"YYYY-MM-DD|ISO ?8601", re.IGNORECASE), "date"),
    (re.compile(r"\bHH:MM"), "time"),
    (re.compile(r"\bIANA\b|time ?zone", re.IGNORECASE), "Europe/Paris"),
    (re.compile(r"\bJSON\b"), '{"name": "example", "items": [1, 2, 3]}'),
    (re.compile(r"\bdigits\b|\binteger\b", re.IGNORECASE), "42"),
)
#: Weaker hints: they shape an invented value but do not beat a harvested one (an account's own email).
_DESCRIPTION_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    *FORMAT_HINTS,
    (re.compile(r"\be-?mail\b", re.IGNORECASE), "alex@example.com"),
    (re.compile(r"\bURL\b", re.IGNORECASE), "https://example.com/"),
)

#: "e.g. 'km'", "such as LIS", "for example: 3": an example the description itself offers.
_EXAMPLE_LEAD = r"(?:e\.g\.|for example|such as|example:)"
#: A quoted example a few words after the lead ("e.g. a card number '4539 ...'"), else the next bare word.
_QUOTED_EXAMPLE = re.compile(
    _EXAMPLE_LEAD + r"[^'\"`;.]{0,40}?(?:'([^']+)'|\"([^\"]+)\"|`([^`]+)`)", re.IGNORECASE
)
_BARE_EXAMPLE = re.compile(_EXAMPLE_LEAD + r"\s*[:,]?\s*([\w.+/-]+)", re.IGNORECASE)

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

#: The far end of a pair (an edge's target, a flow's sink) gets another value than the near end.
_SECOND_NAMES = re.compile(r"target|sink|dest|(^|_)to$|(^|_)end$", re.IGNORECASE)
_PAST_NAMES = re.compile(r"birth|dob|born", re.IGNORECASE)
_END_NAMES = re.compile(r"out$|end|until|return|(^|_)to$", re.IGNORECASE)


class ProbeValues(ValueGenerator):
    """The probe mode: values a tool most likely accepts, with no randomness. Dates and times fall a month
    after `now` (the sandbox clock's, or the real one), so that tools which refuse the past (bookings,
    reminders) accept them."""

    null_only = "string"
    untyped_items_are_arrays = True

    def __init__(self, root: dict[str, Any], now: datetime | None = None) -> None:
        self.root = root
        self.now = now or datetime.now(UTC)

    def normalize(self, schema: dict[str, Any]) -> dict[str, Any]:
        """References followed and the first non-null option of a composite merged in, until neither is left."""
        schema = resolve_ref(schema, self.root)
        branch = _branch(schema)
        return schema if branch is None else self.normalize(branch)

    def fixed(self, schema: dict[str, Any]) -> Any:
        """The schema's own first choice: `const`, the first `enum` member, the `default`, the first example."""
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        if "default" in schema and schema["default"] is not None:
            return schema["default"]
        if schema.get("examples"):
            return schema["examples"][0]
        return UNSET

    def boolean(self) -> bool:
        return False

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

    def string(self, schema: dict[str, Any], name: str, depth: int = 0) -> str:
        description = str(schema.get("description", ""))
        value = _FORMATS.get(str(schema.get("format", ""))) or described_example(description)
        value = value or next((v for pat, v in _DESCRIPTION_HINTS if pat.search(description)), None)
        if value is None:
            lowered = name.lower()
            value = "datetime" if "datetime" in lowered else "date" if "date" in lowered else None
            value = value or next((v for pat, v in _NAME_HINTS if pat.search(lowered)), None)
            value = value or ("example-2" if _SECOND_NAMES.search(lowered) else "example")
        value = self._moment(value, name)
        pattern = schema.get("pattern")
        if pattern and not _matches(pattern, value):
            value = next((c for c in _PATTERN_CANDIDATES if _matches(pattern, c)), value)
        return fit_length(value, schema)

    def number(self, schema: dict[str, Any], name: str, depth: int = 0) -> float | int:
        return _number(schema, name)

    def array(self, schema: dict[str, Any], name: str, depth: int = 0) -> list[Any]:
        raw = schema.get("items")
        items: dict[str, Any] = raw if isinstance(raw, dict) else {}
        count = max(1, int(schema.get("minItems", 1)))
        item_schema = resolve_ref(items, self.root)
        if _is_number_list(item_schema, self.root):
            return _matrix(item_schema, name)
        if _is_number(item_schema):
            count = max(count, 3)  # varied numbers: statistics over a constant list are undefined
            return [_number(item_schema, singular(name), offset=i) for i in range(count)]
        first = self.value(items, singular(name))
        if schema.get("uniqueItems") and count > 1 and isinstance(first, str):
            return [f"{first}{i}" if i else first for i in range(count)]
        return [first for _ in range(count)]

    def obj(self, schema: dict[str, Any], name: str = "", depth: int = 0) -> dict[str, Any]:
        """Required properties only: what a call needs and nothing it might refuse."""
        props = schema.get("properties", {})
        return {
            key: self.value(props.get(key, {}), key) for key in schema.get("required", []) if key in props
        }


MATRIX_SIZE = 3


def _is_number(schema: dict[str, Any]) -> bool:
    return schema.get("type") in ("number", "integer") and "enum" not in schema


def _is_number_list(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    items = schema.get("items")
    return schema.get("type") == "array" and isinstance(items, dict) and _is_number(resolve_ref(items, root))


def _matrix(row_schema: dict[str, Any], name: str) -> list[list[float | int]]:
    """A square, invertible matrix (a heavier diagonal): what matrix tools need, as lists of rows."""
    cell = row_schema["items"]
    n = MATRIX_SIZE
    return [
        [_number(cell, name, offset=i * n + j + (n if i == j else 0)) for j in range(n)] for i in range(n)
    ]


def _branch(schema: dict[str, Any]) -> dict[str, Any] | None:
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key, []) if isinstance(o, dict) and o.get("type") != "null"]
        if options:
            merged = {k: v for k, v in schema.items() if k != key}
            return {**merged, **options[0]}
    return None


def described_example(description: str) -> str | None:
    quoted = _QUOTED_EXAMPLE.search(description)
    if quoted is not None:
        return next(g for g in quoted.groups() if g)
    bare = _BARE_EXAMPLE.search(description)
    return bare.group(1).rstrip(".,;:)") if bare is not None else None


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


def example_value(
    schema: dict[str, Any], name: str = "", root: dict[str, Any] | None = None, now: datetime | None = None
) -> Any:
    """A value for `schema` in the probe mode (see `ProbeValues`)."""
    return ProbeValues(root if root is not None else schema, now).value(schema, name)


def singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word
