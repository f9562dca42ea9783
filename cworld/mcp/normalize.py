"""Turn whatever an MCP call produced — a result, a protocol error, a dead pipe — into a `ToolResult`.

Tool faults are data: every path here returns a `ToolResult`, nothing raises. Real servers report
the same fault in different ways (see docs on real servers: npm servers put "-32602 Input
validation error" into an `isError` result, Python servers answer an unknown tool with a protocol
error, some only say "fetch failed"), so classification reads the error text as well as the code.
"""

from __future__ import annotations

import re
from typing import Any, get_args

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from cworld.data_model import ErrorClass, ToolResult

# JSON-RPC codes the mcp client uses (mcp_types.jsonrpc); spelled out so the mapping reads at a glance.
CONNECTION_CLOSED = types.CONNECTION_CLOSED  # -32000, raised by the client when the transport closes
REQUEST_TIMEOUT = types.REQUEST_TIMEOUT  # -32001, raised by the client when read_timeout elapses
METHOD_NOT_FOUND = types.METHOD_NOT_FOUND  # -32601
INVALID_PARAMS = types.INVALID_PARAMS  # -32602

_CLOSED_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, BrokenPipeError)
"""Exceptions that mean the stream to the server is gone."""

#: An HTTP status as a message states it ("HTTP 503", "(429)"), not digits inside a path or a name
#: (`/tmp/pytest-503/...`, `item-404`, `v1.404`): no word, slash, dot or dash before it, no word, slash or dash
#: after it (a sentence's full stop may follow).
_STATUS = r"(?<![\w/.-]){}(?![\w/-])"

_RULES: list[tuple[ErrorClass, re.Pattern[str]]] = [
    # MCP's own "bad arguments" signal wins over any word that happens to follow it.
    ("invalid_args", re.compile(r"-32602|input validation error|invalid (params|arguments)")),
    ("rate_limit", re.compile(r"rate[ -]?limit|" + _STATUS.format("429") + "|too many requests|quota exceeded")),
    (
        "auth",
        re.compile(
            r"unauthori[sz]ed|" + _STATUS.format("40[13]") + r"|forbidden|(?<!unexpected )\btoken\b|api[ _-]?key"
            r"|authenticat|permission denied|credential"
        ),
    ),
    ("timeout", re.compile(r"timed? ?out|timeout|etimedout|deadline exceeded")),
    (
        "unavailable",
        re.compile(
            r"fetch failed|" + _STATUS.format("50[234]") + r"|unavailable|econnrefused|connection refused"
            r"|econnreset|enotfound|getaddrinfo|network (is )?unreachable"
        ),
    ),
    ("invalid_args", re.compile(r"validation|invalid|missing required|required (property|argument|field)")),
    ("not_found", re.compile(r"not found|unknown tool|no such|does not exist|\benoent\b|" + _STATUS.format("404"))),
]


def classify_error_text(text: str) -> ErrorClass:
    """The error class an error message most likely means; `business` when no rule fires.

    Rules are tried in order, the first match wins: e.g. "403 rate limit exceeded" is a rate limit
    (GitHub answers rate limits with 403), "Invalid token" is auth, "Unknown tool: x" is not_found.
    """
    lowered = text.lower()
    for error_class, pattern in _RULES:
        if pattern.search(lowered):
            return error_class
    return "business"


def content_block(block: Any) -> dict[str, Any]:
    """One MCP content block as its wire-form dict (text, image, audio, resource, resource_link)."""
    if isinstance(block, dict):
        return dict(block)
    return block.model_dump(mode="json", by_alias=True, exclude_none=True)


def from_call_result(result: types.CallToolResult, latency_ms: float, **meta: Any) -> ToolResult:
    """A result the server sent; `isError` results get an error class read from their text."""
    content = [content_block(b) for b in result.content]
    structured = result.structured_content
    if structured is not None and not isinstance(structured, dict):
        # 2026-07-28 allows any JSON value; ToolResult holds an object, so wrap it like MCPServer does.
        structured = {"result": structured}
    out = ToolResult(content=content, structured_content=structured, is_error=bool(result.is_error))
    if out.is_error:
        out.error_class = declared_error_class(result) or classify_error_text(out.text)
    out.meta.update(latency_ms=round(latency_ms, 3), source="live", **meta)
    return out


def declared_error_class(result: types.CallToolResult) -> ErrorClass | None:
    """The class a server states in `_meta.cworld.error_class` (our sandbox does); trusted over the text."""
    meta = result.meta or {}
    declared = (meta.get("cworld") or {}).get("error_class") if isinstance(meta, dict) else None
    return declared if declared in get_args(ErrorClass) else None  # type: ignore[return-value]


def error_class_for_mcp_error(err: MCPError) -> ErrorClass:
    """A protocol-level error: the code says what kind when it can, the message decides otherwise."""
    if err.code == CONNECTION_CLOSED and err.message == "Connection closed":
        return "server_crash"
    if err.code == REQUEST_TIMEOUT:
        return "timeout"
    if err.code == METHOD_NOT_FOUND:
        return "not_found"
    text_class = classify_error_text(err.message)
    if err.code == INVALID_PARAMS:
        # Python servers answer an unknown tool with -32602 "Unknown tool: x".
        return "not_found" if text_class == "not_found" else "invalid_args"
    return text_class


def error_class_for_exception(exc: BaseException) -> ErrorClass:
    """Anything a call raised. Unknown exceptions are `infra`: ours or the SDK's fault, not the agent's."""
    if isinstance(exc, MCPError):
        return error_class_for_mcp_error(exc)
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, _CLOSED_ERRORS):
        return "server_crash"
    if isinstance(exc, httpx2.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx2.HTTPStatusError):
        return classify_error_text(str(exc.response.status_code))
    if isinstance(exc, httpx2.TransportError | ConnectionError):
        return "unavailable"
    if isinstance(exc, ValidationError):
        return "unavailable"  # the server answered, but not with a valid MCP result
    return "infra"


def from_exception(exc: BaseException, latency_ms: float, **meta: Any) -> ToolResult:
    """A failed call as an error result; the message names the exception so logs stay useful."""
    error_class = error_class_for_exception(exc)
    message = str(exc) or type(exc).__name__
    if isinstance(exc, ValidationError):
        message = f"malformed response from the server: {exc.error_count()} validation error(s)"
    elif error_class == "infra":
        message = f"{type(exc).__name__}: {message}"
    return ToolResult.error(error_class, message, latency_ms=round(latency_ms, 3), source="live", **meta)
