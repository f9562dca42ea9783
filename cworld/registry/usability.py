"""Is a tool's answer usable? Error payloads in disguise are caught by what they say, not by their flag.

Servers do not always set `isError`: mcp-server-sqlite answers "Database error: no such table: x" as a
normal result, APIs wrap failures in `{"error": ...}` JSON, some servers print a traceback. The rules
here are general (no rule names a server): a first line that opens like an error report, a traceback
anywhere, error keys in a JSON payload, and error words in a short plain-text payload. An empty
answer is not actionable either.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cworld.data_model import ToolResult

SHORT_PAYLOAD_CHARS = 300
"""Plain-text answers up to this length are searched for error words anywhere; longer ones (a fetched
page, a file) only by how they open, since any long text may mention an error."""

_OPENERS = re.compile(
    r"^\s*(?:"
    r"err(?:or)?\b|fatal\b|failed\b|failure\b|exception\b|panic\b"
    r"|(?-i:[\w.]*(?:Error|Exception))\b\s*:?"  # ValueError: ..., sqlite3.OperationalError
    r"|(?:[\w-]+ ){0,2}error\s*[:\-(\[]"  # "Database error:", "MCP error -32602", "HTTP error (500)"
    r"|(?:could ?not|cannot|can't|unable to)\b"
    r"|(?:no such|not found|unknown|invalid|denied|permission denied|access denied"
    r"|unauthori[sz]ed|forbidden)\b"
    r")",
    re.IGNORECASE,
)
_TRACEBACK = re.compile(
    r"traceback \(most recent call last\)|^\s+at \S+ \(\S+:\d+:\d+\)", re.IGNORECASE | re.MULTILINE
)
_SHORT_WORDS = re.compile(
    r"\b(?:error\s*:|exception\b|failed\b|not found\b|no such\b|invalid\b|denied\b|unauthori[sz]ed\b"
    r"|rate limit|timed out\b|refused\b)",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:no|0|zero|without|never)\s+(?:\w+\s+)?$", re.IGNORECASE)
_ERROR_KEYS = ("error", "errors", "error_message", "errorMessage", "exception", "fault")
_BAD_STATUS = {"error", "fail", "failed", "failure", "fault"}


def _clip(text: str, limit: int = 120) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 3] + "..."


def json_error(data: Any) -> str | None:
    """Error markers at the top of a JSON object: an `error` key with a value, `success: false`, ..."""
    if not isinstance(data, dict):
        return None
    for key in _ERROR_KEYS:
        value = data.get(key)
        if value not in (None, "", [], {}, False, 0):
            return f"JSON payload carries `{key}`: {_clip(json.dumps(value, default=str), 100)}"
    for key in ("success", "ok"):
        if data.get(key) is False:
            return f"JSON payload says `{key}: false`"
    status = data.get("status")
    if isinstance(status, str) and status.strip().lower() in _BAD_STATUS:
        return f"JSON payload says `status: {status}`"
    if data.get("isError") is True:
        return "JSON payload says `isError: true`"
    return None


def text_error(text: str) -> str | None:
    """Error-like plain text: an error opener on the first line, a traceback, or error words in a
    short answer (unless negated: "no errors found")."""
    stripped = text.strip()
    first = stripped.splitlines()[0] if stripped else ""
    if _OPENERS.match(first):
        return f"answer reads as an error: {_clip(first)}"
    if _TRACEBACK.search(stripped):
        return "answer holds a stack trace"
    if len(stripped) <= SHORT_PAYLOAD_CHARS:
        for match in _SHORT_WORDS.finditer(stripped):
            if not _NEGATED.search(stripped[: match.start()]):
                return f"short answer mentions '{match.group(0).strip()}': {_clip(stripped)}"
    return None


def _parsed_json(text: str) -> Any:
    candidate = text.strip()
    if not candidate or candidate[0] not in "[{":
        return None
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        return None


def unusable_reason(result: ToolResult) -> str | None:
    """Why a tool result cannot be used (error flag, disguised error, empty), or None when it can."""
    if result.is_error:
        return f"error result ({result.error_class or 'unclassified'}): {_clip(result.text)}"
    if result.structured_content is not None and (reason := json_error(result.structured_content)):
        return reason
    texts = [str(b.get("text", "")) for b in result.content if b.get("type") == "text"]
    others = [b for b in result.content if b.get("type") != "text"]
    if not any(t.strip() for t in texts) and not others and not result.structured_content:
        return "empty answer: nothing an agent could act on"
    for text in texts:
        parsed = _parsed_json(text)
        if parsed is not None:
            if reason := json_error(parsed):
                return reason
            continue
        if reason := text_error(text):
            return reason
    return None
