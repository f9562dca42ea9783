"""Normalization of MCP outcomes into ToolResults, tool conversion and targets: pure functions, no servers."""

from __future__ import annotations

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from cworld.data_model import ServerSpec
from cworld.mcp import (
    NotConnectableError,
    classify_error_text,
    from_call_result,
    from_exception,
    to_tool_spec,
)
from cworld.mcp.normalize import error_class_for_exception
from cworld.mcp.targets import http_target, target_from_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Messages real servers send (see design/REAL-MCP-SERVERS.md).
        ("MCP error -32602: Input validation error: Invalid arguments for tool read_file", "invalid_args"),
        ("Error executing tool add: 1 validation error for addArguments", "invalid_args"),
        ("Unknown tool: nope", "not_found"),
        ("Database error: no such table: users", "not_found"),
        ("ENOENT: no such file or directory, open '/x'", "not_found"),
        ("fetch failed", "unavailable"),
        ("connect ECONNREFUSED 127.0.0.1:5432", "unavailable"),
        ("HTTP 503 Service Unavailable", "unavailable"),
        ("Rate limit exceeded", "rate_limit"),
        ("403 rate limit exceeded for this token", "rate_limit"),
        ("HTTP 429 Too Many Requests", "rate_limit"),
        ("Bad credentials: 401 Unauthorized", "auth"),
        ("Invalid token", "auth"),
        ("BRAVE_API_KEY environment variable is required", "auth"),
        ("Request timed out after 30s", "timeout"),
        ("Unexpected token < in JSON at position 0", "business"),
        ("Insufficient funds in account 42", "business"),
        ("", "business"),
    ],
)
def test_classify_error_text(text: str, expected: str) -> None:
    assert classify_error_text(text) == expected


def test_error_result_is_classified_by_its_text_and_keeps_latency() -> None:
    raw = types.CallToolResult(
        content=[types.TextContent(type="text", text="Unknown tool: nope")], is_error=True
    )
    result = from_call_result(raw, latency_ms=1.23456, server="s")
    assert result.is_error and result.error_class == "not_found"
    assert result.meta == {"latency_ms": 1.235, "source": "live", "server": "s"}


def test_success_keeps_every_content_block_and_structured_content() -> None:
    raw = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hi"),
            types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a.txt", text="A", mime_type="text/plain"),
            ),
        ],
        structured_content={"n": 1},
    )
    result = from_call_result(raw, latency_ms=2.0)
    assert not result.is_error and result.error_class is None
    assert [b["type"] for b in result.content] == ["text", "image", "resource"]
    assert result.content[1] == {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    assert result.content[2]["resource"]["uri"] == "file:///a.txt"
    assert result.structured_content == {"n": 1}


class _Model(BaseModel):
    x: int


def _validation_error() -> ValidationError:
    try:
        _Model.model_validate({"x": "no"})
    except ValidationError as exc:
        return exc
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (MCPError(types.CONNECTION_CLOSED, "Connection closed"), "server_crash"),
        (MCPError(types.CONNECTION_CLOSED, "Server error: rate limit"), "rate_limit"),
        (MCPError(types.REQUEST_TIMEOUT, "Request 'tools/call' timed out"), "timeout"),
        (MCPError(types.METHOD_NOT_FOUND, "Method not found"), "not_found"),
        (MCPError(types.INVALID_PARAMS, "Unknown tool: nope"), "not_found"),
        (MCPError(types.INVALID_PARAMS, "Invalid params"), "invalid_args"),
        (MCPError(types.INVALID_PARAMS, "x must be a number"), "invalid_args"),
        (MCPError(types.INTERNAL_ERROR, "fetch failed"), "unavailable"),
        (MCPError(types.INTERNAL_ERROR, "Something broke"), "business"),
        (TimeoutError(), "timeout"),
        (anyio.ClosedResourceError(), "server_crash"),
        (BrokenPipeError(), "server_crash"),
        (httpx2.ConnectError("All connection attempts failed"), "unavailable"),
        (ConnectionRefusedError(), "unavailable"),
        (_validation_error(), "unavailable"),
        (ValueError("bug in a client callback"), "infra"),
    ],
)
def test_exceptions_map_to_error_classes(exc: BaseException, expected: str) -> None:
    assert error_class_for_exception(exc) == expected
    result = from_exception(exc, latency_ms=5.0)
    assert result.is_error and result.error_class == expected
    assert result.text and result.meta["latency_ms"] == 5.0


def test_tool_spec_has_schemas_and_snake_case_annotations() -> None:
    tool = types.Tool(
        name="write_file",
        title="Write a file",
        description="Write text to a file.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        annotations=types.ToolAnnotations(destructive_hint=True, read_only_hint=False),
    )
    spec = to_tool_spec(tool, "fs", "real")
    assert spec.id == "fs/write_file" and spec.server_kind == "real" and spec.availability == "live"
    assert spec.input_schema["required"] == ["path"]
    assert spec.output_schema == {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    assert spec.annotations.destructive_hint is True and spec.annotations.read_only_hint is False
    assert spec.annotations.title == "Write a file"  # the tool's title fills in for the annotations'
    assert spec.annotations.idempotent_hint is None


def test_stdio_target_from_spec_passes_credentials_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOY_API_KEY", "k123")
    spec = ServerSpec(
        id="toy",
        kind="real",
        command="node",
        args=["a.js"],
        env={"MODE": "x"},
        credentials=["TOY_API_KEY", "ABSENT"],
    )
    target = target_from_spec(spec, env={"MODE": "y"}, cwd="/tmp")
    assert target.kind == "stdio" and target.command == "node" and target.args == ["a.js"]
    assert target.env == {"MODE": "y", "TOY_API_KEY": "k123"}
    assert target.cwd == "/tmp"
    assert target_from_spec(spec, command="python", args=["b.py"]).describe() == "python b.py"


def test_http_target_puts_the_bearer_token_in_a_header_but_not_in_its_description() -> None:
    spec = ServerSpec(id="web", kind="real", transport="http", url="http://127.0.0.1:1/mcp")
    target = target_from_spec(spec, bearer_token="s3cret")
    assert target.headers == {"Authorization": "Bearer s3cret"}
    assert "s3cret" not in target.describe()
    assert http_target("http://h/mcp").headers == {}


def test_unconnectable_specs_raise_a_clear_error() -> None:
    with pytest.raises(NotConnectableError, match="schema-only catalog"):
        target_from_spec(ServerSpec(id="cat", kind="catalog", transport="catalog"))
    with pytest.raises(NotConnectableError, match="needs a command"):
        target_from_spec(ServerSpec(id="x", kind="real"))
    with pytest.raises(NotConnectableError, match="needs a url"):
        target_from_spec(ServerSpec(id="x", kind="real", transport="http"))


def test_declared_error_class_in_meta_wins_over_text():
    import mcp_types as types

    from cworld.mcp.normalize import from_call_result

    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="not_found: no contact named 'Jon'; search first")],
        is_error=True,
        _meta={"cworld": {"error_class": "not_found"}},
    )
    assert from_call_result(result, 1.0).error_class == "not_found"
    result.meta = {"cworld": {"error_class": "bogus"}}
    assert from_call_result(result, 1.0).error_class == classify_error_text(result.content[0].text)


def test_a_status_inside_a_path_or_a_name_is_no_status() -> None:
    """A pytest or scratch folder numbered 503 or 429 made a missing file read as an outage or a rate limit."""
    assert classify_error_text("ENOENT: no such file or directory, open '/tmp/pytest-of-root/pytest-503/x'") == "not_found"
    assert classify_error_text("ENOENT: open '/tmp/pytest-429/notes.txt'") == "not_found"
    assert classify_error_text("item-404 could not be saved") == "business"
    assert classify_error_text("The service returned 503.") == "unavailable"
    assert classify_error_text("HTTP 429 Too Many Requests") == "rate_limit"
