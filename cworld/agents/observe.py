"""Reading an observation the way a careful agent does: is it usable, and if not, why.

Only what the agent can see is used: the result's text, structured content and error class (as an
MCP client gets them). A result is `pending` (accepted, not ready: ask again), `truncated` (cut with
an explicit marker), `corrupted` (garbled characters in its fields), or one of the error kinds whose
remedy differs: wait and retry (`rate_limit`, `transient`), log in again (`auth`), switch tools
(`deprecated`), or rethink the call (`error`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any, Literal

from cworld.agents.references import json_in_text
from cworld.controller.faults import GARBLE, TRUNCATION_MARKER
from cworld.controller.faults.base import SECONDS_PER_TURN
from cworld.data_model import ToolResult

Verdict = Literal[
    "ok",
    "pending",
    "truncated",
    "corrupted",
    "deprecated",
    "auth",
    "rate_limit",
    "transient",
    "infra",
    "error",
]

_RETRY_AFTER = re.compile(r"retry after (\d+(?:\.\d+)?)\s*s", re.IGNORECASE)
_DEPRECATED = re.compile(r"deprecat|has been removed|no longer (?:available|supported)", re.IGNORECASE)
_TRANSIENT = ("timeout", "unavailable")


def verdict(result: ToolResult) -> Verdict:
    if result.is_error:
        return _error_verdict(result)
    if is_pending(result):
        return "pending"
    if TRUNCATION_MARKER in result.text and result.structured_content is None:
        return "truncated"
    if has_garble(result.structured_content if result.structured_content is not None else result.text):
        return "corrupted"
    return "ok"


def _error_verdict(result: ToolResult) -> Verdict:
    error_class = result.error_class or "business"
    if error_class in ("server_crash", "infra"):
        return "infra"
    if error_class == "not_found" and _DEPRECATED.search(result.text):
        return "deprecated"
    if error_class == "auth":
        return "auth"
    if error_class == "rate_limit":
        return "rate_limit"
    if error_class in _TRANSIENT:
        return "transient"
    return "error"


def is_pending(result: ToolResult) -> bool:
    body = result.structured_content or {}
    return str(body.get("status", "")).lower() == "pending" and bool(body.get("job_id"))


def has_garble(value: Any) -> bool:
    if isinstance(value, str):
        return GARBLE in value
    if isinstance(value, dict):
        return any(has_garble(v) for v in value.values())
    if isinstance(value, list):
        return any(has_garble(v) for v in value)
    return False


def retry_after_turns(result: ToolResult, default: int = 1) -> int:
    """How many turns a rate-limited agent should wait: the server's `retry after Ns`, in turns."""
    match = _RETRY_AFTER.search(result.text)
    if match is None:
        return default
    return max(1, math.ceil(float(match.group(1)) / SECONDS_PER_TURN))


def salvage(result: ToolResult) -> Any:
    """What can still be read from a truncated JSON answer: the complete fields before the cut."""
    text = result.text
    cut = text.rfind(TRUNCATION_MARKER)
    if cut >= 0:
        text = text[:cut].rstrip().removesuffix("...")
    value = _close_json(text)
    return value if isinstance(value, dict | list) else payload(result)


def _close_json(text: str) -> Any:
    """Parse a JSON prefix by dropping the incomplete tail and closing what is still open."""
    safe = 0
    for i, ch in _scan(text, []):
        safe = i + 1 if ch in "}]" else i
    for end in (len(text), safe):
        candidate = text[:end].rstrip().rstrip(",")
        try:
            return json.loads(candidate + "".join(reversed(_open_after(candidate))))
        except (json.JSONDecodeError, ValueError):
            continue
    return None


def _open_after(text: str) -> list[str]:
    stack: list[str] = []
    for _ in _scan(text, stack):
        pass
    return stack


def _scan(text: str, stack: list[str]) -> Iterator[tuple[int, str]]:
    """Walk JSON text outside its strings, keeping in `stack` the closers still open; yield each comma,
    and each closer that closed something, with its index (where a prefix may safely be cut)."""
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            escaped = not escaped and ch == "\\"
            in_string = escaped or ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
            yield i, ch
        elif ch == ",":
            yield i, ch


def payload(result: ToolResult) -> Any:
    """The structured result, else the text parsed as JSON, else `{"text": ...}`: what references read. An
    answer whose one field holds a JSON object or array as text is read with that field opened (`opened`)."""
    if result.structured_content is not None:
        return opened(result.structured_content)
    text = result.text
    value = json_in_text(text)  # JSON, or rows in Python's repr
    return opened(value) if value is not None else {"text": text}


def opened(value: Any) -> Any:
    """`value` with its one field read as the JSON it holds as text. A FastMCP tool whose output is one string
    answers `{"result": "<JSON text>"}` (594 harvested tools on 38 servers): the string is the tool's whole
    answer, so its records are read as records, under the same path (`result.items`) a reference into the
    text takes. Only a sole field is opened: a file's JSON `content` beside its `path` stays the text it is."""
    if not isinstance(value, dict) or len(value) != 1:
        return value
    ((key, held),) = value.items()
    inner = json_in_text(held)
    return value if inner is None else {key: inner}
