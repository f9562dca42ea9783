"""Formats a tool's schema documents in words (`"UTC time, YYYY-MM-DDTHH:MM"`): a value in another form is
refused as the service that documents it refuses it, whatever engine answers the tool (issue 33: inference
that reads real schemas). JSON Schema's `format` and `pattern` are the validator's; this reads what only the
description says."""

from __future__ import annotations

import re
from typing import Any

#: A written date-time format: a date, `T` or a space, hours and minutes (seconds, a `Z` as the description may add).
_DATETIME = re.compile(r"YYYY-MM-DD[T ]HH:MM")
#: A written date format not followed by a time.
_DATE = re.compile(r"YYYY-MM-DD(?![T ]HH)")
#: Words saying other forms are welcome too: the description does not pin one down.
_OPEN = re.compile(r"ISO ?8601|offset|[+±]HH|timezone|time zone|natural|relative", re.IGNORECASE)

#: What each written format admits: seconds (and fractions) and the `Z` of UTC are the same time in that form;
#: another offset, a date alone for a time or a time for a date is not.
_ADMITS = {
    "datetime": re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?"),
    "date": re.compile(r"\d{4}-\d{2}-\d{2}"),
}


def documented_formats(schema: dict[str, Any]) -> list[str]:
    """The formats (`datetime`, `date`) a string argument's description pins down; none when it names no
    format or also welcomes others (ISO 8601 in general, offsets, relative times)."""
    text = str(schema.get("description") or "")
    if not text or _OPEN.search(text):
        return []
    return [name for name, found in (("datetime", _DATETIME), ("date", _DATE)) if found.search(text)]


#: A closed list of words a description names the values by: "one of red, orange or blue" (two or more plain
#: words, quoted or not, the list ending the clause).
_ONE_OF = re.compile(r"\bone of:?\s+((?:[`'\"]?[a-z][\w-]*[`'\"]?(?:\s*,\s*(?:or\s+)?|\s+or\s+)){1,}[`'\"]?[a-z][\w-]*[`'\"]?)"
                     r"\s*(?:$|[.;)])", re.IGNORECASE)


def documented_values(schema: dict[str, Any]) -> list[str]:
    """The values a string argument's description lists as the only ones ("one of red, orange, blue"); none
    where its schema has an enum (the validator's) or its description lists none."""
    found = _ONE_OF.search(str(schema.get("description") or "")) if "enum" not in schema else None
    if found is None:
        return []
    return [w.strip("`'\" ") for w in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", found.group(1)) if w.strip()]


def format_error(input_schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """One line naming the first string argument not in the form its description documents (a written format,
    or a closed list of values), else None."""
    for name, values, lowered, formats in _documented(input_schema):
        value = arguments.get(name)
        if not isinstance(value, str):
            continue
        if values and value.strip().lower() not in lowered:
            return f"'{name}' is {value!r}, not one of {', '.join(values)}"
        if formats and not any(_ADMITS[f].fullmatch(value.strip()) for f in formats):
            shown = " or ".join("YYYY-MM-DDTHH:MM" if f == "datetime" else "YYYY-MM-DD" for f in formats)
            return f"'{name}' is {value!r}, not in the documented form: give it as {shown}"
    return None


#: (property, its documented values, the same in lower case, its documented formats), for the properties that
#: document either, in schema order
_Documented = list[tuple[str, list[str], frozenset[str], list[str]]]
_READ: dict[int, tuple[dict[str, Any], _Documented]] = {}


def _documented(input_schema: dict[str, Any]) -> _Documented:
    """What an input schema's descriptions document, read once per schema object (every call of a tool passes
    the same one; the entry holds the schema, so its id stays its own)."""
    found = _READ.get(id(input_schema))
    if found is not None and found[0] is input_schema:
        return found[1]
    out: _Documented = []
    for name, whole in (input_schema.get("properties") or {}).items():
        if isinstance(whole, dict):
            schema = _string_branch(whole)
            values, formats = documented_values(schema), documented_formats(schema)
            if values or formats:
                out.append((name, values, frozenset(v.lower() for v in values), formats))
    if len(_READ) > 8192:
        _READ.clear()
    _READ[id(input_schema)] = (input_schema, out)
    return out


def _string_branch(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema a string value is read against: an optional argument's string branch (`anyOf: [{type: string,
    description: "due time as YYYY-MM-DDTHH:MM"}, {type: null}]`) where that branch has its own description."""
    for branch in schema.get("anyOf") or schema.get("oneOf") or []:
        if isinstance(branch, dict) and branch.get("type") == "string" and branch.get("description"):
            return branch
    return schema
