"""Servers shared by every caller: each started once, on first use, and closed together.

A run drives many episodes at once against the same servers; starting a Python server costs
about a second, so servers are keyed by id and shared. A server that cannot start is recorded
with its reason once, and every call to it returns an `unavailable` result carrying that reason
(no retry storm, no exception in the agent loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from cworld.data_model import ErrorClass, ServerSpec, ToolResult, ToolSpec
from cworld.errors import UsageError
from cworld.mcp.connection import Connection
from cworld.mcp.errors import NotConnectableError, ServerStartError


class ServerPool:
    """A set of connections by server id; safe to use from many asyncio tasks at once."""

    def __init__(self, connections: Iterable[Connection] = ()) -> None:
        self._connections: dict[str, Connection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._started: set[str] = set()
        self._closed = False
        self.failures: dict[str, str] = {}
        """server id -> why it could not start (or be built); calls to it return `unavailable`."""
        for connection in connections:
            self.add(connection)

    @classmethod
    def from_specs(
        cls,
        specs: Iterable[ServerSpec],
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        **options: Any,
    ) -> ServerPool:
        """One connection per spec; `overrides[id]` are passed to `Connection.from_spec` for that server.

        A spec that cannot be connected at all (no command, a catalog) is recorded as a failure.
        """
        pool = cls()
        for spec in specs:
            try:
                pool.add(Connection.from_spec(spec, **{**options, **(overrides or {}).get(spec.id, {})}))
            except NotConnectableError as err:
                pool._reject(spec.id, str(err))
        return pool

    def add(self, connection: Connection) -> None:
        """Register a connection (not started yet); a server id can be registered once."""
        if connection.server_id in self._connections or connection.server_id in self.failures:
            raise UsageError(
                f"server id {connection.server_id!r} is registered twice; server ids must be unique"
            )
        self._connections[connection.server_id] = connection
        self._locks[connection.server_id] = asyncio.Lock()

    @property
    def server_ids(self) -> list[str]:
        return sorted({*self._connections, *self.failures})

    async def __aenter__(self) -> ServerPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close_all()

    async def start(self, server_id: str) -> Connection | None:
        """The started connection, or None when the server failed to start (see `failures`)."""
        connection = self._connections.get(server_id)
        if connection is None or self._closed:
            return None
        async with self._locks[server_id]:
            if server_id in self.failures:
                return None
            if server_id not in self._started:
                try:
                    await connection.start()
                except ServerStartError as err:
                    self.failures[server_id] = str(err)
                    return None
                self._started.add(server_id)
        return connection

    async def start_all(self) -> dict[str, str]:
        """Start every server concurrently; returns the failures (id -> reason)."""
        await asyncio.gather(*(self.start(server_id) for server_id in self._connections))
        return dict(self.failures)

    async def list_tools(self, server_id: str) -> list[ToolSpec]:
        """The server's tools; raises `ServerStartError` for a server that could not start."""
        connection = await self.start(server_id)
        if connection is None:
            raise ServerStartError(self._unavailable_reason(server_id))
        return await connection.list_tools()

    async def call(
        self,
        server_id: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        timeout_s: float | None = None,
    ) -> ToolResult:
        """Call `tool` on `server_id`; unknown or broken servers are results, never exceptions."""
        if self._closed:
            return ToolResult.error("infra", self._unavailable_reason(server_id), server=server_id)
        connection = await self.start(server_id)
        if connection is None:
            error_class: ErrorClass = "unavailable" if server_id in self.failures else "not_found"
            return ToolResult.error(error_class, self._unavailable_reason(server_id), server=server_id)
        return await connection.call(tool, arguments, timeout_s)

    async def close_all(self) -> None:
        """Close every started server concurrently; the pool can not be used afterwards."""
        self._closed = True
        connections = list(self._connections.values())
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

    def _reject(self, server_id: str, reason: str) -> None:
        if server_id in self._connections or server_id in self.failures:
            raise UsageError(f"server id {server_id!r} is registered twice; server ids must be unique")
        self.failures[server_id] = reason

    def _unavailable_reason(self, server_id: str) -> str:
        if self._closed:
            return f"the server pool is closed; cannot reach {server_id!r}"
        if server_id in self.failures:
            return self.failures[server_id]
        return f"no MCP server {server_id!r} in this pool (known: {', '.join(self.server_ids) or 'none'})"
