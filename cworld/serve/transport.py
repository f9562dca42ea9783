"""Running the episode server: stdio (one client, the process that started it) or streamable HTTP on
loopback (many sessions at once, each isolated), with an optional bearer token."""

from __future__ import annotations

import hmac
from typing import Any

from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

from cworld.serve.server import EpisodeServer

HOST = "127.0.0.1"
IDLE_TIMEOUT_S = 30 * 60
"""An HTTP session without a request for this long is closed (its open episode stored as abandoned)."""


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
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
    await send({"type": "http.response.body", "body": body})


def http_app(server: EpisodeServer, token: str | None, *, idle_timeout_s: float = IDLE_TIMEOUT_S) -> Any:
    """The ASGI app: `/mcp`, stateful sessions, DNS-rebinding protection for loopback, the token check."""
    app: Any = server.streamable_http_app(host=HOST, session_idle_timeout=idle_timeout_s)
    return BearerAuth(app, token) if token else app


async def serve_http(server: EpisodeServer, port: int, token: str | None, *, host: str = HOST) -> None:
    import uvicorn

    config = uvicorn.Config(http_app(server, token), host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


async def serve_stdio(server: EpisodeServer) -> None:
    """One handshake-era connection over stdin/stdout; when the client leaves, its open episode is stored."""
    async with stdio_server() as (read_stream, write_stream), server.lifespan(server) as state:
        await serve_loop(server, read_stream, write_stream, lifespan_state=state,
                         init_options=server.create_initialization_options())
