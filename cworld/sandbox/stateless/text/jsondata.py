"""JSON and CSV helpers of the text server: parsing with a clear error, JSON type names, path steps into
a document, and CSV cells."""

from __future__ import annotations

import json
import re
from typing import Any

from cworld.sandbox.stateless.shared import invalid, strict_loads


def parse_json(text: str) -> Any:
    try:
        return strict_loads(text)
    except json.JSONDecodeError as err:
        raise invalid(f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    except (ValueError, RecursionError) as err:
        raise invalid(f"not usable JSON: {err}") from None


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    return names[type(value)]


_PATH_STEP = re.compile(r"\.?([^.\[\]]+)|\[(-?\d+)\]")


def path_steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _PATH_STEP.match(path, pos)
        if m is None or m.end() == pos:
            raise invalid(f"cannot read the path {path!r} at position {pos}; write it like 'items[0].name'")
        steps.append(int(m.group(2)) if m.group(2) is not None else m.group(1))
        pos = m.end()
    return steps


def path_step(value: Any, step: str | int) -> tuple[bool, Any]:
    if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
        return True, value[step]
    if isinstance(step, str) and isinstance(value, dict) and step in value:
        return True, value[step]
    return False, None


def csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
