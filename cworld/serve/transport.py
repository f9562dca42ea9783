"""Running the episode server: stdio (one client, the process that started it) or streamable HTTP on
loopback (many sessions at once, each isolated), with an optional bearer token; over HTTP in one process
or in worker processes behind one front (`serve_front`, `front.py`).

Under abuse HTTP stays up for the sessions it has: at most `max_sessions` are open at once (the MCP SDK's
session manager counts them; a request that would open one more is answered 503 with `Retry-After` and a
line saying why, and the open sessions are untouched), and a request body larger than `max_body_bytes` is
answered 413 before it is parsed or opens a session.
"""

from __future__ import annotations

import hmac
import json
import multiprocessing.connection
import threading
from collections.abc import Sequence
from typing import Any

from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import RequestBodyLimitMiddleware

from cworld.serve.front import SessionFront
from cworld.serve.server import EpisodeServer
from cworld.serve.workers import GRACEFUL_S, Workers

HOST = "127.0.0.1"
IDLE_TIMEOUT_S = 30 * 60
"""An HTTP session without a request for this long is closed (its open episode stored as abandoned)."""
MAX_SESSIONS = 64
"""Open HTTP sessions at most (each holds at most one episode: a sandbox or a simulated world)."""
MAX_BODY_BYTES = 1024 * 1024
"""The largest request body: a tool call's arguments are small; a bigger body is refused with 413."""
RETRY_AFTER_S = 10
"""What a client refused at the session cap is told to wait before trying again."""


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


class SessionCapAnswer:
    """ASGI middleware: the session manager's 503 (its session cap reached) gets `Retry-After` and a body
    that says what happened and what to do."""

    def __init__(self, app: Any, max_sessions: int, retry_after_s: int = RETRY_AFTER_S) -> None:
        self.app, self.retry_after_s = app, retry_after_s
        message = (f"cworld serve is at its cap of {max_sessions} open sessions (--max-sessions); retry after "
                   f"{retry_after_s} s, or end a session you hold (HTTP DELETE)")
        self.body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": message}}).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = False

        async def answer(message: Any) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 503:
                refused = True
                await send({"type": "http.response.start", "status": 503, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(self.body)).encode()),
                    (b"retry-after", str(self.retry_after_s).encode())]})
                await send({"type": "http.response.body", "body": self.body})
            elif not refused:
                await send(message)

        await self.app(scope, receive, answer)


def http_app(server: EpisodeServer, token: str | None, *, idle_timeout_s: float = IDLE_TIMEOUT_S,
             max_sessions: int = MAX_SESSIONS, max_body_bytes: int = MAX_BODY_BYTES) -> Any:
    """The ASGI app: `/mcp`, stateful sessions (at most `max_sessions`), bodies of at most `max_body_bytes`,
    DNS-rebinding protection for loopback, the token check (outermost: a client without it learns nothing)."""
    app: Any = server.streamable_http_app(host=HOST, session_idle_timeout=idle_timeout_s, max_sessions=max_sessions,
                                          max_request_body_size=max_body_bytes)
    app = SessionCapAnswer(app, max_sessions)
    return BearerAuth(app, token) if token else app


async def serve_http(server: EpisodeServer, port: int, token: str | None, *, host: str = HOST,
                     max_sessions: int = MAX_SESSIONS, max_body_bytes: int = MAX_BODY_BYTES) -> None:
    import uvicorn

    app = http_app(server, token, max_sessions=max_sessions, max_body_bytes=max_body_bytes)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def front_app(sockets: Sequence[str], token: str | None, *, max_sessions: int = MAX_SESSIONS,
              max_body_bytes: int = MAX_BODY_BYTES) -> Any:
    """The front's ASGI app: the token check (outermost), the session cap's answer for the whole server,
    the body limit, then the workers (`front.py`)."""
    app: Any = RequestBodyLimitMiddleware(SessionFront(sockets), max_body_bytes)
    app = SessionCapAnswer(app, max_sessions)
    return BearerAuth(app, token) if token else app


async def serve_front(workers: Workers, sockets: Sequence[str], port: int, token: str | None, *, host: str = HOST,
                      max_sessions: int = MAX_SESSIONS, max_body_bytes: int = MAX_BODY_BYTES) -> None:
    """The front on host:port until a signal, or until a worker ends (its sessions are gone: the front
    stops, and the caller stops the rest)."""
    import uvicorn

    app = front_app(sockets, token, max_sessions=max_sessions, max_body_bytes=max_body_bytes)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=GRACEFUL_S))

    def stop_when_a_worker_ends() -> None:
        multiprocessing.connection.wait(workers.sentinels())
        server.should_exit = True

    threading.Thread(target=stop_when_a_worker_ends, name="cworld-front-watch", daemon=True).start()
    await server.serve()


async def serve_stdio(server: EpisodeServer) -> None:
    """One handshake-era connection over stdin/stdout; when the client leaves, its open episode is stored."""
    async with stdio_server() as (read_stream, write_stream), server.lifespan(server) as state:
        await serve_loop(server, read_stream, write_stream, lifespan_state=state,
                         init_options=server.create_initialization_options())
