"""A connection to one MCP server that survives what real servers do: hang, crash, refuse to start.

Every call returns a `ToolResult`. A call that times out returns error_class `timeout`; the server
is then probed before the next call and restarted if it no longer answers. A server that dies
during a call makes that call `server_crash`; the next call restarts it first (at most
`max_restarts` times over the connection's life). A stdio server found dead between calls is
restarted before the call, so that call is not charged with a crash it did not cause.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol, runtime_checkable

from cworld.data_model import ErrorClass, ServerSpec, ToolResult, ToolSpec
from cworld.data_model.tools import ServerKind
from cworld.errors import InfraError
from cworld.mcp.errors import ServerStartError
from cworld.mcp.normalize import error_class_for_exception, from_call_result, from_exception
from cworld.mcp.session import SCHEMA_ERRORS, LiveSession, StartFailure, open_session
from cworld.mcp.targets import Target, target_from_spec
from cworld.mcp.toolspec import to_tool_spec

BACKSTOP_S = 2.0
"""Extra time past a call's own timeout before we stop waiting regardless of the SDK."""

LIST_PAGE_CAP = 100

EXIT_WAIT_S = 0.5
"""How long to wait for a server that closed its pipe to be seen exiting, for its exit code."""


@runtime_checkable
class ToolConnection(Protocol):
    """What a backend needs from a connection; `Connection` is the MCP implementation."""

    async def start(self) -> None: ...

    async def list_tools(self) -> list[ToolSpec]: ...

    async def call(
        self, name: str, arguments: dict[str, Any] | None = None, timeout_s: float | None = None
    ) -> ToolResult: ...

    async def close(self) -> None: ...


@dataclass(eq=False)
class Connection:
    """One MCP server (stdio, streamable HTTP or in memory), started once, restarted when it breaks."""

    target: Target
    server_id: str
    _: KW_ONLY
    server_kind: ServerKind | None = None
    default_timeout_s: float = 30.0
    handshake_timeout_s: float = 20.0
    max_restarts: int = 2
    probe_timeout_s: float = 2.0
    mode: str = "auto"
    restarts: int = field(default=0, init=False)
    start_error: str | None = field(default=None, init=False)
    """Why the last start failed; calls then return `unavailable` with it instead of retrying."""
    gave_up: str | None = field(default=None, init=False)
    """Set when the restart budget is spent; calls then return `server_crash` with it."""
    _live: LiveSession | None = field(default=None, init=False, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)

    @classmethod
    def from_spec(cls, spec: ServerSpec, *, server: Any = None, **options: Any) -> Connection:
        """A connection as the spec describes it (`server`: the in-memory server of a sandbox spec);
        `Connection` options win over the spec's. Other target overrides: `target_from_spec`."""
        options.setdefault("default_timeout_s", spec.timeout_s)
        return cls(target_from_spec(spec, server=server), spec.id, server_kind=spec.kind, **options)

    @property
    def pid(self) -> int | None:
        """The server process id (stdio only), for diagnostics and tests."""
        live = self._live
        return live.process.pid if live is not None and live.process is not None else None

    async def __aenter__(self) -> Connection:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the server and finish the handshake; raise `ServerStartError` if it cannot."""
        async with self._lock:
            if self._closed:
                raise InfraError(f"MCP connection to {self.server_id!r} is closed; open a new one")
            if self._live is None:
                try:
                    self._live = await self._launch()
                except ServerStartError as err:
                    self.start_error = str(err)
                    raise
                self.start_error = None

    async def close(self) -> None:
        async with self._lock:
            self._closed = True
            live, self._live = self._live, None
        if live is not None:
            await live.close(kill=live.crashed or live.suspect)

    async def list_tools(self) -> list[ToolSpec]:
        """All tools, every page, as ToolSpecs under this connection's server id (never from a cache).

        Raises `ServerStartError` when the server cannot start, `InfraError` when listing fails.
        """
        await self.start()
        ready = await self._ready()
        if isinstance(ready, ToolResult):
            raise InfraError(f"cannot list the tools of MCP server {self.server_id!r}: {ready.text}")
        specs: list[ToolSpec] = []
        cursor: str | None = None
        try:
            for _ in range(LIST_PAGE_CAP):
                page = await asyncio.wait_for(ready.client.list_tools(cursor=cursor), self.default_timeout_s)
                specs.extend(to_tool_spec(t, self.server_id, self.server_kind) for t in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        except Exception as exc:
            failure = await self._failed(ready, exc, 0.0)  # records a crash or a wedge for the next request
            raise InfraError(
                f"listing the tools of MCP server {self.server_id!r} failed: {failure.text}"
            ) from exc
        return specs

    async def call(
        self, name: str, arguments: dict[str, Any] | None = None, timeout_s: float | None = None
    ) -> ToolResult:
        """Call a tool; every outcome, including a dead server, comes back as a `ToolResult`."""
        timeout = timeout_s if timeout_s is not None else self.default_timeout_s
        started = time.perf_counter()
        ready = await self._ready()
        if isinstance(ready, ToolResult):
            return ready
        schema_errors: list[str] = []
        token = SCHEMA_ERRORS.set(schema_errors)
        try:
            async with asyncio.timeout(timeout + BACKSTOP_S):
                raw = await ready.client.call_tool(name, arguments or {}, read_timeout_seconds=timeout)
        except Exception as exc:
            return await self._failed(ready, exc, _ms_since(started))
        finally:
            SCHEMA_ERRORS.reset(token)
        extra = {"output_schema_error": schema_errors[0]} if schema_errors else {}
        return from_call_result(raw, _ms_since(started), server=self.server_id, **extra)

    async def _launch(self) -> LiveSession:
        try:
            return await open_session(self.target, self.handshake_timeout_s, self.mode)
        except StartFailure as failure:
            raise ServerStartError(self._start_message(failure)) from failure.cause

    def _start_message(self, failure: StartFailure) -> str:
        """One line: which server, what went wrong, the end of its stderr."""
        if failure.timed_out:
            what = f"did not finish the MCP handshake within {self.handshake_timeout_s:g}s"
        elif failure.returncode is not None:
            what = f"exited with code {failure.returncode} before finishing the MCP handshake"
        else:
            what = f"failed during the MCP handshake ({type(failure.cause).__name__}: {failure})"
        stderr = " | ".join(line.strip() for line in failure.stderr.splitlines() if line.strip())[-500:]
        tail = f"; stderr: {stderr}" if stderr else ""
        where = f"MCP server {self.server_id!r} ({self.target.describe()})"
        return f"{where} {what}{tail}; check its command, env and credentials"

    async def _ready(self) -> LiveSession | ToolResult:
        """The live session for the next call: started, restarted or probed as needed."""
        async with self._lock:
            if refusal := self._refusal():
                return refusal
            live = self._live
            if live is None:
                return await self._replace(None)
            if live.crashed or live.process_exited:
                return await self._replace(live)
            if live.suspect and not await self._answers(live):
                return await self._replace(live)
            live.suspect = False
            return live

    def _refusal(self) -> ToolResult | None:
        """A result for calls that cannot be served at all: closed, never started, given up."""
        if self.gave_up:
            return ToolResult.error(self._broken_class(), self.gave_up, server=self.server_id)
        if self.start_error:
            return ToolResult.error("unavailable", self.start_error, server=self.server_id)
        if self._closed:
            return ToolResult.error(
                "infra", f"MCP connection to {self.server_id!r} is closed", server=self.server_id
            )
        return None

    async def _answers(self, live: LiveSession) -> bool:
        """A cheap request with a short deadline: does a server that timed out still respond?"""
        try:
            await asyncio.wait_for(live.client.list_tools(), self.probe_timeout_s)
        except Exception:
            return False
        return True

    async def _replace(self, old: LiveSession | None) -> LiveSession | ToolResult:
        """Start the server (again). A failure is a result for this call, not an exception."""
        self._live = None
        if old is not None:
            await old.close(kill=True)
            if self.restarts >= self.max_restarts:
                restarts = f"{self.restarts} restart(s)"
                self.gave_up = f"MCP server {self.server_id!r} broke again after {restarts}; not restarted"
                self._closed = True
                return ToolResult.error(self._broken_class(), self.gave_up, server=self.server_id)
            self.restarts += 1
        try:
            self._live = await self._launch()
        except ServerStartError as err:
            if old is None:
                self.start_error = str(err)
                return ToolResult.error("unavailable", str(err), server=self.server_id)
            self.gave_up = str(err)
            self._closed = True
            return ToolResult.error(self._broken_class(), str(err), server=self.server_id)
        return self._live

    def _broken_class(self) -> ErrorClass:
        """A dead process of ours is a crash; a remote endpoint that is gone is unavailable."""
        return "unavailable" if self.target.kind == "http" else "server_crash"

    async def _failed(self, live: LiveSession, exc: BaseException, latency_ms: float) -> ToolResult:
        """Classify a failed call and remember what it says about the server's health."""
        error_class = error_class_for_exception(exc)
        if error_class == "server_crash" and live.process is not None:
            await live.process.wait_exited(EXIT_WAIT_S)  # stdout EOF comes a moment before the exit is seen
        if live.process_exited:
            error_class = "server_crash"
        if error_class == "server_crash":
            live.crashed = True
            message = self._crash_message(live)
            return ToolResult.error(
                "server_crash", message, latency_ms=round(latency_ms, 3), source="live", server=self.server_id
            )
        if error_class == "timeout":
            live.suspect = True
        return from_exception(exc, latency_ms, server=self.server_id)

    def _crash_message(self, live: LiveSession) -> str:
        process = live.process
        if process is None or process.returncode is None:
            return f"MCP server {self.server_id!r} closed the connection during the call"
        stderr = " | ".join(process.stderr_tail(300).splitlines())
        tail = f"; stderr: {stderr}" if stderr else ""
        return f"MCP server {self.server_id!r} exited with code {process.returncode} during the call{tail}"


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
