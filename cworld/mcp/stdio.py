"""A stdio transport for `mcp.Client` that keeps hold of the server process.

The SDK's `stdio_client` hides the process, but a connection needs it: to see that a server died
between calls (and restart it before the next call instead of failing that call), to kill a wedged
server at once instead of waiting out the polite shutdown, and to quote the tail of its stderr
when it fails to start. The wire handling is the same newline-delimited JSON-RPC as the SDK's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

STDIN_CLOSE_GRACE_S = 1.0
"""How long a server gets to exit on its own after its stdin closes (the spec's polite shutdown)."""

TERM_GRACE_S = 1.0
"""How long after SIGTERM before SIGKILL."""

STDERR_TAIL_BYTES = 2000


class StdioTransport:
    """Spawn `command args` and speak MCP over its stdin/stdout; stderr goes to a temp file.

    One instance serves one connection attempt: a restart builds a new transport.
    """

    def __init__(
        self,
        command: str,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        self.command = command
        self.args = list(args or [])
        self.env = get_default_environment() | (env or {})
        self.cwd = cwd
        self.process: Process | None = None
        self._stderr: IO[bytes] | None = None
        self._cm: contextlib.AbstractAsyncContextManager[Any] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has ended, else None (also None before the start)."""
        return self.process.returncode if self.process is not None else None

    @property
    def exited(self) -> bool:
        return self.returncode is not None

    def stderr_tail(self, limit: int = STDERR_TAIL_BYTES) -> str:
        """The last `limit` bytes of the server's stderr, read without moving the child's file offset."""
        if self._stderr is None or self._stderr.closed:
            return ""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, limit, max(0, size - limit))
        return data.decode("utf-8", errors="replace").strip()

    async def wait_exited(self, timeout_s: float) -> bool:
        """Whether the process has exited, waiting up to `timeout_s` for it."""
        return self.process is not None and await _wait_exit(self.process, timeout_s)

    def kill(self) -> None:
        """SIGKILL the server's whole process group now: for a wedged server, no grace period."""
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    async def __aenter__(self) -> tuple[Any, Any]:
        self._cm = self._run()
        return await self._cm.__aenter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._cm is not None:
            cm, self._cm = self._cm, None
            await cm.__aexit__(exc_type, exc, tb)

    @contextlib.asynccontextmanager
    async def _run(self) -> AsyncIterator[tuple[Any, Any]]:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close_stderr(), after the process
        self.process = await anyio.open_process(
            [self.command, *self.args],
            env=self.env,
            cwd=self.cwd,
            stderr=self._stderr,
            start_new_session=True,
        )
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pump_stdout, self.process, read_writer)
            tg.start_soon(self._pump_stdin, self.process, write_reader, read_writer)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    await _aclose_quietly(read_stream, write_stream)
                    await _stop(self.process)
                tg.cancel_scope.cancel()

    def close_stderr(self) -> None:
        """Drop the stderr file; call once the tail is no longer wanted."""
        if self._stderr is not None:
            self._stderr.close()

    @staticmethod
    async def _pump_stdout(
        process: Process, sink: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        """Forward each stdout line as a message; closing `sink` at EOF tells the session the server died."""
        assert process.stdout is not None
        buffer = ""
        async with sink:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if line.strip():
                            await sink.send(_parse_line(line))

    @staticmethod
    async def _pump_stdin(
        process: Process,
        source: MemoryObjectReceiveStream[SessionMessage],
        sink: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        """Write outgoing messages; a broken pipe closes the read side too, so no request waits forever."""
        assert process.stdin is not None
        try:
            async with source:
                async for message in source:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await sink.aclose()


def _parse_line(line: str) -> SessionMessage | Exception:
    """A line that is not JSON-RPC becomes an exception value the session reports, not a dead reader."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _stop(process: Process) -> None:
    """Close stdin, give the server a moment to exit, then terminate its whole process group."""
    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _wait_exit(process, STDIN_CLOSE_GRACE_S):
        await terminate_posix_process_tree(process, TERM_GRACE_S)
        await _wait_exit(process, TERM_GRACE_S)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()


async def _wait_exit(process: Process, timeout_s: float) -> bool:
    """Poll returncode: `process.wait()` also waits for pipe EOF, which a grandchild can hold open."""
    with anyio.move_on_after(timeout_s):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


async def _aclose_quietly(*streams: Any) -> None:
    for stream in streams:
        with contextlib.suppress(Exception):
            await stream.aclose()
