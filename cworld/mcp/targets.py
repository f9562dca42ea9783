"""Where a connection goes: a subprocess over stdio, a streamable-HTTP URL, or a server object in memory.

A `Target` is plain data built from a `ServerSpec` (plus explicit overrides); `open()` makes a fresh
transport for each connection attempt, so a restart never reuses a dead process or HTTP client.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2
from mcp.client.streamable_http import streamable_http_client

from cworld.data_model import ServerSpec
from cworld.mcp.errors import NotConnectableError
from cworld.mcp.stdio import StdioTransport

TargetKind = Literal["stdio", "http", "memory"]

HTTP_CONNECT_TIMEOUT_S = 10.0
HTTP_READ_TIMEOUT_S = 300.0
"""Long: a streamable-HTTP response may be an SSE stream held open for the whole call."""


@dataclass(frozen=True)
class Target:
    """How to reach one MCP server. Only the fields of its `kind` are used."""

    kind: TargetKind
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | Path | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    server: Any = None
    """An `mcp.server.MCPServer` or lowlevel `Server` (kind=memory)."""

    def __post_init__(self) -> None:
        if self.kind == "stdio" and not self.command:
            raise NotConnectableError("a stdio MCP target needs a command; set `command` in the server spec")
        if self.kind == "http" and not self.url:
            raise NotConnectableError("an HTTP MCP target needs a url; set `url` in the server spec")
        if self.kind == "memory" and self.server is None:
            raise NotConnectableError("an in-memory MCP target needs a server object; pass server=...")

    def describe(self) -> str:
        """A short human label for messages; never includes header values (tokens)."""
        if self.kind == "stdio":
            return " ".join([str(self.command), *self.args])
        if self.kind == "http":
            return str(self.url)
        return f"in-memory {type(self.server).__name__}"

    def open(self) -> Any:
        """A fresh value for `mcp.Client(...)`: a transport, or the server object itself."""
        if self.kind == "stdio":
            assert self.command is not None
            return StdioTransport(self.command, self.args, self.env, self.cwd)
        if self.kind == "http":
            assert self.url is not None
            return _http_transport(self.url, self.headers)
        return self.server


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """Streamable HTTP with our own HTTP client, so headers (a bearer token) go on every request."""
    timeout = httpx2.Timeout(HTTP_CONNECT_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def stdio_target(
    command: str,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
) -> Target:
    return Target(kind="stdio", command=command, args=list(args or []), env=dict(env or {}), cwd=cwd)


def http_target(url: str, bearer_token: str | None = None, headers: dict[str, str] | None = None) -> Target:
    all_headers = dict(headers or {})
    if bearer_token:
        all_headers["Authorization"] = f"Bearer {bearer_token}"
    return Target(kind="http", url=url, headers=all_headers)


def memory_target(server: Any) -> Target:
    return Target(kind="memory", server=server)


def target_from_spec(
    spec: ServerSpec,
    *,
    server: Any = None,
    command: str | None = None,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    url: str | None = None,
    bearer_token: str | None = None,
) -> Target:
    """The target a `ServerSpec` describes; explicit keyword arguments win over the spec's fields.

    Credentials listed in the spec are env var names: their values are read from this process's
    environment and passed to a stdio server (the SDK's default environment would drop them).
    `env` is merged over the spec's env, not instead of it.
    """
    if server is not None or spec.transport == "memory":
        return memory_target(server)
    if spec.transport == "catalog":
        raise NotConnectableError(f"server {spec.id!r} is a schema-only catalog; it has no live connection")
    if spec.transport == "http":
        return http_target(url or spec.url or "", bearer_token=bearer_token)
    merged_env = {**spec.env, **_credential_env(spec.credentials), **(env or {})}
    return stdio_target(command or spec.command or "", spec.args if args is None else args, merged_env, cwd)


def _credential_env(names: list[str]) -> dict[str, str]:
    return {name: os.environ[name] for name in names if name in os.environ}
