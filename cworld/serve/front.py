"""The front of `cworld serve --transport http --workers N`: one HTTP endpoint, each MCP session kept on the
worker process that opened it.

An MCP session spans many HTTP requests (initialize, the calls, a GET stream, DELETE), on any connection,
and its episode lives in one worker's memory. So the front reads the session id, not the connection:

- a request without `Mcp-Session-Id` (an `initialize`) goes to the next worker in turn; a worker at its
  share of `--max-sessions` answers 503 and the next one is asked, so the cap holds for the whole server;
- the worker's session id goes back to the client as `w<worker>-<id>`, and a request carrying such an id
  goes to that worker with the worker's own id: the route is in the id, the front keeps no table (and a
  malformed or unknown id is answered 404, as the SDK answers an unknown session);
- the answer streams back as it comes (SSE events one by one); when the client hangs up, the request to
  the worker is closed too.

The workers listen on Unix sockets in a directory only this user can enter, so the bearer token and the
body limit are checked once, here (`transport.py` puts them around this app); the Host and Origin
headers go through unchanged, and each worker's DNS-rebinding check judges them as it does without a front.
Requests reach the workers through httpx; nothing here parses HTTP.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

SESSION_HEADER = "mcp-session-id"
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "content-length", "host"})
"""Headers that belong to one connection, not the message (and the length and host httpx sets from what
it sends; the client's Host goes on in its own header, see `_headers`)."""
_ROUTED = re.compile(r"^w(\d+)-(.+)$")
CONNECT_TIMEOUT_S = 10.0


class SessionFront:
    """ASGI app: every request to the worker that holds its MCP session."""

    def __init__(self, sockets: Sequence[str]) -> None:
        self.sockets = list(sockets)
        self.workers = [_client(path) for path in self.sockets]
        self._turn = itertools.count()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            response = await self.forward(Request(scope, receive))
            await response(scope, receive, send)

    async def forward(self, request: Request) -> Response:
        routed = request.headers.get(SESSION_HEADER)
        if routed is None:
            start = next(self._turn)
            order = [(start + i) % len(self.workers) for i in range(len(self.workers))]
            session = None
        else:
            match = _ROUTED.match(routed)
            if match is None or int(match.group(1)) >= len(self.workers):
                return _session_not_found()
            order, session = [int(match.group(1))], match.group(2)
        body = await request.body()
        worker = order[0]
        try:
            for worker in order[:-1]:  # a new session: a worker at its share answers 503, the next is asked
                upstream = await self._send(worker, request, body, session)
                if upstream.status_code != 503:
                    return _relayed(worker, upstream)
                await upstream.aclose()
            worker = order[-1]
            return _relayed(worker, await self._send(worker, request, body, session))
        except httpx.TransportError as exc:
            return _error(502, f"cworld serve worker {worker} is not answering ({type(exc).__name__})")

    async def _send(self, worker: int, request: Request, body: bytes, session: str | None) -> httpx.Response:
        url = httpx.URL(path=request.url.path, query=request.url.query.encode("ascii"))
        outgoing = self.workers[worker].build_request(request.method, url, headers=_headers(request, session),
                                                      content=body)
        return await self.workers[worker].send(outgoing, stream=True)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for client in self.workers:
                    await client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _client(path: str) -> httpx.AsyncClient:
    """A client of one worker's Unix socket: as many connections as its sessions need (each may hold a GET
    stream open), no timeout on reading (a stream waits for events), a short one on connecting."""
    transport = httpx.AsyncHTTPTransport(uds=path, limits=httpx.Limits(max_connections=None,
                                                                       max_keepalive_connections=64))
    return httpx.AsyncClient(transport=transport, base_url="http://cworld-worker",
                             timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S))


def _headers(request: Request, session: str | None) -> list[tuple[bytes, bytes]]:
    """The client's headers for the worker: the worker's own session id, the client's Host kept (the
    worker's DNS-rebinding check reads it), connection headers dropped."""
    headers = [(k, v) for k, v in request.headers.raw
               if k.decode("latin-1").lower() not in HOP_BY_HOP and k.lower() != SESSION_HEADER.encode()]
    if "host" in request.headers:
        headers.append((b"host", request.headers["host"].encode("latin-1")))
    if session is not None:
        headers.append((SESSION_HEADER.encode(), session.encode("latin-1")))
    return headers


def _relayed(worker: int, upstream: httpx.Response) -> Response:
    headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}
    if SESSION_HEADER in upstream.headers:
        headers[SESSION_HEADER] = f"w{worker}-{upstream.headers[SESSION_HEADER]}"
    return _Relay(upstream, status_code=upstream.status_code, headers=headers)


class _Relay(StreamingResponse):
    """The worker's answer streamed to the client chunk by chunk; the worker's side is closed when the
    answer ends or the client hangs up (a GET stream could otherwise outlive its client)."""

    def __init__(self, upstream: httpx.Response, *, status_code: int, headers: dict[str, str]) -> None:
        super().__init__(self._chunks(upstream), status_code=status_code, headers=headers)
        self.upstream = upstream

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async with anyio.create_task_group() as group:
            async def stream() -> None:
                await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(stream)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()

    @staticmethod
    async def _chunks(upstream: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for chunk in upstream.aiter_raw():
                yield chunk
        finally:
            with anyio.CancelScope(shield=True):
                await upstream.aclose()


def _session_not_found() -> Response:
    return _error(404, "Session not found", code=-32600)


def _error(status: int, message: str, code: int = -32603) -> Response:
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}},
                        status_code=status)
