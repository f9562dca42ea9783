"""One live `mcp.Client` held open by a task of its own.

anyio ties a client's task groups and cancel scopes to the task that entered them, so a client
opened in one caller's task cannot be closed from another's. A pool shares servers between
callers and restarts them from whichever call notices a crash, so each client lives in a
dedicated owner task: callers only send requests (safe from any task), and closing it means
asking its owner to leave the `async with`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp import Client

from cworld.mcp.stdio import StdioTransport
from cworld.mcp.targets import Target

CLOSE_TIMEOUT_S = 5.0
"""Upper bound for a polite close; the stdio transport's own shutdown needs about 2 s at worst."""

SCHEMA_ERRORS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "cworld_mcp_schema_errors", default=None
)
"""Where the lenient output validator reports, per call (see `_lenient_output_validation`)."""


@dataclass
class LiveSession:
    """A started client and what is known about its health."""

    client: Client
    transport: Any
    owner: asyncio.Task[None]
    stop: asyncio.Event
    ready: asyncio.Future[None]
    crashed: bool = False
    suspect: bool = False
    """A call timed out: the server may be wedged; probe it before the next call."""
    exit_info: dict[str, Any] = field(default_factory=dict)
    """The stderr tail and exit code of a stdio server, kept when the session closes."""

    @property
    def process(self) -> StdioTransport | None:
        return self.transport if isinstance(self.transport, StdioTransport) else None

    @property
    def process_exited(self) -> bool:
        return self.process is not None and self.process.exited

    def stderr_tail(self) -> str:
        return self.process.stderr_tail() if self.process is not None else ""

    async def close(self, kill: bool = False) -> None:
        """Leave the client's context in its owner task; `kill` skips the polite stdio shutdown."""
        if kill and self.process is not None:
            self.process.kill()
        if self.ready.done():
            self.stop.set()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self.owner), CLOSE_TIMEOUT_S)
        if not self.owner.done():
            self.owner.cancel()  # still in the handshake (or stuck leaving): it would not see `stop`
            with contextlib.suppress(BaseException):
                await self.owner
        if not self.ready.cancelled() and self.ready.done():
            self.ready.exception()  # mark a late handshake error as seen; it was reported already
        if self.process is not None:
            self.exit_info = {"stderr": self.process.stderr_tail(), "returncode": self.process.returncode}
            self.process.close_stderr()


class StartFailure(Exception):
    """The server did not get through the handshake; carries what the process left behind."""

    def __init__(self, cause: BaseException, timed_out: bool, stderr: str, returncode: int | None) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.cause = cause
        self.timed_out = timed_out
        self.stderr = stderr
        self.returncode = returncode


async def open_session(target: Target, handshake_timeout_s: float, mode: str = "auto") -> LiveSession:
    """Start the server (if it is a process) and finish the MCP handshake, or raise `StartFailure`.

    Nothing is left running after a failure: the owner task is gone and a process is killed.
    """
    transport = target.open()
    # cache=None: the default CacheConfig() would serve repeated tools/list (and resources/read)
    # from memory when a server sends ttl hints; a registry must see what the server says now.
    client = Client(transport, cache=None, mode=mode)
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    stop = asyncio.Event()
    owner = asyncio.create_task(_hold(client, ready, stop), name=f"mcp-session:{target.describe()}")
    session = LiveSession(client=client, transport=transport, owner=owner, stop=stop, ready=ready)
    try:
        await asyncio.wait_for(asyncio.shield(ready), handshake_timeout_s)
    except asyncio.CancelledError:
        await session.close(kill=True)
        raise
    except Exception as exc:
        await session.close(kill=True)
        info = session.exit_info
        timed_out = isinstance(exc, TimeoutError)
        raise StartFailure(exc, timed_out, info.get("stderr", ""), info.get("returncode")) from exc
    return session


async def _hold(client: Client, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
    """The owner task: enter the client, report readiness, stay inside until asked to stop."""
    try:
        async with client:
            _lenient_output_validation(client)
            ready.set_result(None)
            await stop.wait()
    except asyncio.CancelledError:
        if not ready.done():
            ready.cancel()
        raise
    except BaseException as exc:
        if not ready.done():
            ready.set_exception(_leaf(exc))
        # After readiness a failure here is the transport dying; calls see it as a closed connection.


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _lenient_output_validation(client: Client) -> None:
    """Keep results whose structured content breaks the tool's outputSchema, instead of losing them.

    The 2.x client validates structured results against the advertised outputSchema and raises
    `RuntimeError`, which throws the server's answer away. For an agent environment the answer is
    what the server really returned, so we keep it as a normal (non-error) result and report the
    violation in `meta["output_schema_error"]`: the registry's validation flags the server, agents
    still see the content. The SDK's own check still runs; only its RuntimeError is caught.
    """
    session = client.session
    strict = session.validate_tool_result

    async def lenient(name: str, result: types.CallToolResult) -> None:
        try:
            await strict(name, result)
        except RuntimeError as exc:
            bucket = SCHEMA_ERRORS.get()
            if bucket is not None:
                bucket.append(str(exc).splitlines()[0])

    session.validate_tool_result = lenient  # type: ignore[method-assign]
