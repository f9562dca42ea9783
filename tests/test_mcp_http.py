"""Streamable HTTP: the toy server served by uvicorn in a subprocess on a free loopback port."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cworld.mcp import Connection, ServerStartError, http_target

FIXTURES = Path(__file__).parent / "fixtures" / "mcp_servers"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the HTTP test server exited at start"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise AssertionError(f"the HTTP test server did not listen on {port} within {timeout_s}s")


@pytest.fixture
async def http_server() -> AsyncIterator[tuple[str, subprocess.Popen[bytes]]]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(FIXTURES / "toy_server.py"), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(timeout=10)


async def test_http_calls_with_bearer_token_timeout_and_server_death(
    http_server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, process = http_server
    async with Connection(http_target(url, bearer_token="tok-123"), "web") as conn:
        tools = await conn.list_tools()
        echo = await conn.call("echo", {"text": "over http"})
        header = await conn.call("auth_header")
        unknown = await conn.call("nope")
        slow = await conn.call("slow", {"seconds": 10}, timeout_s=0.2)
        after = await conn.call("echo", {"text": "still here"})
        process.kill()
        process.wait(timeout=10)
        dead = await conn.call("echo", {"text": "x"})
        gone = await conn.call("echo", {"text": "x"})
    assert {t.id for t in tools} >= {"web/echo", "web/add"}
    assert echo.text == "over http" and header.text == "Bearer tok-123"
    assert unknown.error_class == "not_found" and slow.error_class == "timeout" and after.text == "still here"
    assert dead.error_class == "server_crash"
    assert gone.error_class == "unavailable" and "web" in gone.text


async def test_http_nothing_listening_is_a_fast_start_error() -> None:
    started = time.perf_counter()
    with pytest.raises(ServerStartError, match="ConnectError"):
        await Connection(http_target(f"http://127.0.0.1:{_free_port()}/mcp"), "web").start()
    assert time.perf_counter() - started < 5
