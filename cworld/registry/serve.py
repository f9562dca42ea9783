"""`cworld serve`: the whole registry behind one MCP endpoint, for any MCP client.

Two tools: `search_tools(query, k)` ranks the registry's tools for an intent (the built index, with each
hit's prerequisites), and `call_tool(server, tool, arguments)` runs one: sandbox tools in one in-memory
session that lives as long as the server (seeded, so every client sees the same world), real tools
through a `ServerPool` of connections started on first use against scratch targets made for this
process. Schema-only tools (catalogs, and tools that cannot work here) are described, not run.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import time
from pathlib import Path
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from cworld.data_model import ServerSpec, ToolResult, ToolSpec
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.mcp import Connection, ServerPool
from cworld.registry.build import INDEX_DIR, load_tools
from cworld.registry.launch import LaunchContext, resolve
from cworld.registry.manifest import load_manifest
from cworld.registry.services import ServiceUnavailable

MAX_K = 50


class FoundTool(BaseModel):
    tool: str = Field(description="the id to call: server/name")
    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    availability: str = Field(
        description="live: call it with call_tool; schema-only: described, not runnable here"
    )
    score: float
    prerequisites: list[str] = Field(
        default_factory=list, description="tools that usually must run before it"
    )


class SearchResults(BaseModel):
    query: str
    tools: list[FoundTool]


class RegistryService:
    """Search and calls over a built registry; `close()` stops every server it started."""

    def __init__(
        self,
        env: Environment,
        workspace: Workspace,
        *,
        seed: int = 0,
        timeout_s: float | None = None,
        servers_dir: Path | None = None,
    ) -> None:
        self.env = env
        self.workspace = workspace
        self.seed = seed
        self.timeout_s = timeout_s
        self.specs = {s.id: s for s in load_manifest(env)}
        self.tools = {t.id: t for t in load_tools(workspace)}
        scratch = workspace.path("scratch") / f"serve-{os.getpid()}-{int(time.time())}"
        self.ctx = LaunchContext(workspace.root, servers_dir or workspace.root / "servers", scratch)
        self.pool = ServerPool()
        self._adding: dict[str, asyncio.Lock] = {}
        self._session: Any = None
        self._search: Any = None

    # --- search -------------------------------------------------------------------------------------
    def searcher(self) -> Any:
        """The search service, opened on first use (loading the embedder takes a moment)."""
        if self._search is None:
            from cworld.registry.search import SearchService

            self._search = SearchService.load(self.workspace.root / "registry" / INDEX_DIR)
        return self._search

    def search(self, query: str, k: int = 10) -> SearchResults:
        if not query.strip():
            raise UsageError("search_tools needs a query: describe what you want to do")
        hits = self.searcher().search(query, k=max(1, min(k, MAX_K)), with_prereqs=True)
        return SearchResults(
            query=query, tools=[_found(h.tool, h.score, [p.tool_id for p in h.prerequisites]) for h in hits]
        )

    # --- calls --------------------------------------------------------------------------------------
    async def call(self, server: str, tool: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Run one tool; every outcome (unknown tool, schema-only, a dead server) is a result."""
        spec = self.specs.get(server)
        known = self.tools.get(f"{server}/{tool}")
        if spec is None or known is None:
            return ToolResult.error(
                "not_found",
                f"no tool '{server}/{tool}' in the registry; use search_tools to find tool ids (server/name)",
            )
        if spec.kind == "catalog":
            return ToolResult.error(
                "unavailable",
                f"'{server}/{tool}' is schema-only (a catalog): it is described, not runnable here",
            )
        if (failure := await self._ensure(spec)) is not None:
            return ToolResult.error("unavailable", failure, server=server)
        return await self.pool.call(server, tool, arguments or {}, timeout_s=self.timeout_s)

    async def _ensure(self, spec: ServerSpec) -> str | None:
        """Add the server's connection to the pool on first use; the reason when it cannot be added."""
        lock = self._adding.setdefault(spec.id, asyncio.Lock())
        async with lock:
            if spec.id in self.pool.server_ids:
                return self.pool.failures.get(spec.id)
            try:
                connection = await self._connection(spec)
            except ServiceUnavailable as exc:
                self.pool.failures[spec.id] = f"unavailable: {exc}"
                return self.pool.failures[spec.id]
            self.pool.add(connection)
            return None

    async def _connection(self, spec: ServerSpec) -> Connection:
        timeout = self.timeout_s or spec.timeout_s
        if spec.kind == "sandbox":
            from cworld.sandbox.framework.server import build_server

            return Connection.from_spec(
                spec, server=build_server(self.session(), spec.app or spec.id), default_timeout_s=timeout
            )
        resolved = await asyncio.to_thread(resolve, spec, self.ctx)
        return Connection.from_spec(resolved, default_timeout_s=timeout, handshake_timeout_s=timeout)

    def session(self) -> Any:
        """The one sandbox session every sandbox call of this server shares."""
        if self._session is None:
            from cworld.sandbox.catalog import all_apps
            from cworld.sandbox.framework import SandboxSession

            self._session = SandboxSession(seed=self.seed, apps=all_apps())
        return self._session

    async def close(self) -> None:
        await self.pool.close_all()
        await asyncio.to_thread(self.ctx.close)
        self.ctx.discard_scratch()


def _found(tool: ToolSpec, score: float, prereqs: list[str]) -> FoundTool:
    return FoundTool(
        tool=tool.id,
        server=tool.server,
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        availability=tool.availability,
        score=round(score, 4),
        prerequisites=prereqs,
    )


def call_result(result: ToolResult) -> CallToolResult:
    """A cworld result as the MCP result a client sees; the error class rides in `_meta.cworld`."""
    content = result.content or [{"type": "text", "text": result.text}]
    meta = {
        "cworld": {
            "error_class": result.error_class,
            **{k: v for k, v in result.meta.items() if k != "server"},
        }
    }
    try:
        return CallToolResult.model_validate(
            {
                "content": content,
                "structuredContent": result.structured_content,
                "isError": result.is_error,
                "_meta": meta,
            }
        )
    except ValueError:  # a content block this SDK cannot carry: fall back to its text
        return CallToolResult(
            content=[TextContent(type="text", text=result.text)], is_error=result.is_error, _meta=meta
        )


def build_mcp_server(service: RegistryService) -> MCPServer:
    """The MCP server exposing `search_tools` and `call_tool` over `service`."""
    server = MCPServer(
        "cworld-registry",
        instructions=(
            "Find tools with search_tools (describe the intent in plain words), then run one with "
            "call_tool using the returned server and name. Prerequisites listed with a hit usually must "
            "run first."
        ),
        log_level="WARNING",
    )

    @server.tool(annotations=ToolAnnotations(title="Search tools", read_only_hint=True, idempotent_hint=True))
    def search_tools(
        query: Annotated[str, Field(description="what you want to do, in plain words", max_length=1000)],
        k: Annotated[int, Field(description="how many tools to return", ge=1, le=MAX_K)] = 10,
    ) -> SearchResults:
        """Find the registry's tools that fit an intent, best first, each with its input schema and the
        tools that usually must run before it."""
        return service.search(query, k)

    @server.tool(annotations=ToolAnnotations(title="Call a tool", read_only_hint=False, open_world_hint=True))
    async def call_tool(
        server: Annotated[str, Field(description="the tool's server, as search_tools returned it")],
        tool: Annotated[str, Field(description="the tool's name, as search_tools returned it")],
        arguments: Annotated[
            dict[str, Any] | None, Field(description="the tool's arguments (its input schema)")
        ] = None,
    ) -> CallToolResult:
        """Run one registry tool and return exactly what it answered (errors included, as results)."""
        return call_result(await service.call(server, tool, arguments))

    return server


# --- running ----------------------------------------------------------------------------------------


class BearerAuth:
    """ASGI middleware: every HTTP request needs `Authorization: Bearer <token>` (constant-time compare)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await _deny(send)
                return
        await self.app(scope, receive, send)


async def _deny(send: Any) -> None:
    body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def serve_http(server: MCPServer, port: int, token: str | None) -> None:
    """Streamable HTTP on 127.0.0.1 only (path /mcp); with a token, requests without it get 401."""
    import uvicorn

    app: Any = server.streamable_http_app(host="127.0.0.1")
    if token:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


async def run(service: RegistryService, transport: str, port: int, token: str | None) -> None:
    """Serve until the client goes away (stdio) or the process is stopped (http); servers are closed after."""
    server = build_mcp_server(service)
    try:
        if transport == "stdio":
            await server.run_stdio_async()
        else:
            await serve_http(server, port, token)
    finally:
        await service.close()
