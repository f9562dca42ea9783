"""Connections against the toy server: in memory (unit) and over stdio (a real subprocess)."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest
from mcp.server import MCPServer
from mcp.server.caching import CacheHint

from cworld.data_model import ServerSpec
from cworld.mcp import Connection, ServerStartError, memory_target, stdio_target

FIXTURES = Path(__file__).parent / "fixtures" / "mcp_servers"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"cworld_test_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


toy = _load("toy_server")


def _stdio(script: str = "toy_server.py", **options: object) -> Connection:
    return Connection(stdio_target(sys.executable, [str(FIXTURES / script)]), "toy", **options)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _wait_dead(pid: int) -> None:
    """Until the process is reaped, and one more loop turn so asyncio has recorded its exit code."""
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.05)


# --- in memory -------------------------------------------------------------------------------------------


async def test_memory_list_tools_gives_toolspecs_with_schemas_and_annotations() -> None:
    async with Connection(memory_target(toy.build_server()), "toy", server_kind="sandbox") as conn:
        tools = {t.name: t for t in await conn.list_tools()}
    assert {"echo", "add", "slow", "crash", "fail", "counter"} <= set(tools)
    echo, add = tools["echo"], tools["add"]
    assert echo.id == "toy/echo" and echo.server_kind == "sandbox"
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert echo.input_schema["required"] == ["text"]
    assert echo.annotations.title == "Echo" and echo.annotations.read_only_hint is True
    assert echo.annotations.idempotent_hint is True and echo.annotations.destructive_hint is None
    assert add.output_schema is not None and add.output_schema["properties"]["total"]["type"] == "integer"
    assert add.annotations.open_world_hint is False
    assert tools["crash"].annotations.destructive_hint is True


async def test_memory_calls_are_normalized() -> None:
    async with Connection(memory_target(toy.build_server()), "toy") as conn:
        echo = await conn.call("echo", {"text": "hi"})
        add = await conn.call("add", {"a": 2, "b": 3})
        unknown = await conn.call("no_such_tool", {})
        bad_args = await conn.call("add", {"a": "x"})
        failed = await conn.call("fail", {"message": "account 7 is frozen"})
        limited = await conn.call("fail", {"message": "Rate limit exceeded"})
    assert not echo.is_error and echo.text == "hi" and echo.meta["latency_ms"] > 0
    assert echo.meta["server"] == "toy" and echo.meta["source"] == "live"
    assert add.structured_content == {"total": 5}
    assert (unknown.is_error, unknown.error_class) == (True, "not_found")
    assert (bad_args.is_error, bad_args.error_class) == (True, "invalid_args")
    assert (failed.error_class, limited.error_class) == ("business", "rate_limit")
    assert "account 7 is frozen" in failed.text


async def test_no_client_side_caching_each_call_reaches_the_server() -> None:
    async with Connection(memory_target(toy.build_server()), "toy") as conn:
        first = await conn.call("counter")
        second = await conn.call("counter")
    assert (first.structured_content, second.structured_content) == ({"result": 1}, {"result": 2})


async def test_tool_listing_is_not_served_from_the_client_cache() -> None:
    """The server says its listing stays fresh for a minute; mcp.Client's default cache would believe it."""
    server = MCPServer("cached", cache_hints={"tools/list": CacheHint(ttl_ms=60_000)})
    server.add_tool(lambda: "1", name="one")
    async with Connection(memory_target(server), "cached") as conn:
        before = await conn.list_tools()
        server.add_tool(lambda: "2", name="two")
        after = await conn.list_tools()
    assert [t.name for t in before] == ["one"]
    assert sorted(t.name for t in after) == ["one", "two"]


async def test_output_schema_violation_keeps_the_content_and_flags_it() -> None:
    async with Connection(memory_target(toy.build_server()), "toy") as conn:
        result = await conn.call("bad_output")
    assert not result.is_error
    assert result.structured_content == {"total": "x"} and result.text == "oops"
    assert "bad_output" in result.meta["output_schema_error"]


async def test_memory_timeout_is_a_result_and_the_connection_goes_on() -> None:
    async with Connection(memory_target(toy.build_server()), "toy") as conn:
        started = time.perf_counter()
        slow = await conn.call("slow", {"seconds": 5}, timeout_s=0.2)
        assert time.perf_counter() - started < 2
        after = await conn.call("echo", {"text": "still here"})
    assert (slow.is_error, slow.error_class) == (True, "timeout")
    assert after.text == "still here" and conn.restarts == 0


async def test_connection_used_and_closed_from_other_tasks_than_the_one_that_started_it() -> None:
    conn = Connection(memory_target(toy.build_server()), "toy")
    await asyncio.create_task(conn.start())
    results = await asyncio.gather(
        *(asyncio.create_task(conn.call("add", {"a": i, "b": 1})) for i in range(10))
    )
    assert [r.structured_content for r in results] == [{"total": i + 1} for i in range(10)]
    await asyncio.create_task(conn.close())
    closed = await conn.call("echo", {"text": "x"})
    assert closed.is_error and closed.error_class == "infra"


# --- stdio -----------------------------------------------------------------------------------------------


async def test_stdio_calls_list_and_classify() -> None:
    spec = ServerSpec(id="toy", kind="real", command=sys.executable, args=[str(FIXTURES / "toy_server.py")])
    async with Connection.from_spec(spec) as conn:
        tools = await conn.list_tools()
        echo = await conn.call("echo", {"text": "over stdio"})
        unknown = await conn.call("nope")
        bad = await conn.call("add", {"b": 1})
        counts = [(await conn.call("counter")).structured_content for _ in range(2)]
        pid = conn.pid
    assert {t.id for t in tools} >= {"toy/echo", "toy/add"} and tools[0].server_kind == "real"
    assert echo.text == "over stdio" and conn.default_timeout_s == spec.timeout_s
    assert (unknown.error_class, bad.error_class) == ("not_found", "invalid_args")
    assert counts == [{"result": 1}, {"result": 2}]
    assert pid is not None and not _alive(pid)  # closing stops the process


async def test_stdio_crash_mid_call_is_server_crash_then_restarted() -> None:
    async with _stdio() as conn:
        first_pid = conn.pid
        crashed = await conn.call("crash")
        relisted = await conn.list_tools()  # listing also restarts a crashed server
        after = await conn.call("echo", {"text": "back"})
        assert conn.pid != first_pid and conn.restarts == 1 and relisted
    assert (crashed.is_error, crashed.error_class) == (True, "server_crash")
    assert "exited with code 1" in crashed.text
    assert not after.is_error and after.text == "back"


async def test_stdio_killed_process_and_restart_budget() -> None:
    async with _stdio(max_restarts=1) as conn:
        slow = asyncio.create_task(conn.call("slow", {"seconds": 10}))
        await asyncio.sleep(0.3)
        assert conn.pid is not None
        os.kill(conn.pid, signal.SIGKILL)
        killed = await slow
        after_restart = await conn.call("echo", {"text": "restarted"})
        second_pid = conn.pid
        os.kill(second_pid, signal.SIGKILL)  # dies between calls; the budget (1) is spent
        await _wait_dead(second_pid)
        given_up = await conn.call("echo", {"text": "x"})
        still_given_up = await conn.call("echo", {"text": "x"})
    assert killed.error_class == "server_crash" and "code -9" in killed.text
    assert after_restart.text == "restarted" and conn.restarts == 1
    assert given_up.error_class == "server_crash" and "not restarted" in given_up.text
    assert still_given_up.error_class == "server_crash"


async def test_stdio_timeout_keeps_a_healthy_server_and_restarts_a_wedged_one() -> None:
    async with _stdio(probe_timeout_s=0.5) as conn:
        pid = conn.pid
        assert pid is not None
        slow = await conn.call("slow", {"seconds": 10}, timeout_s=0.2)
        after_slow = await conn.call("echo", {"text": "same server"})
        assert conn.pid == pid and conn.restarts == 0
        wedged = await conn.call("hang", {"seconds": 60}, timeout_s=0.2)
        after_wedge = await conn.call("echo", {"text": "new server"})
        assert conn.pid != pid and conn.restarts == 1 and not _alive(pid)
    assert slow.error_class == "timeout" and after_slow.text == "same server"
    assert wedged.error_class == "timeout" and after_wedge.text == "new server"


async def test_server_exiting_before_the_handshake_raises_fast_with_its_stderr() -> None:
    started = time.perf_counter()
    with pytest.raises(ServerStartError) as info:
        await _stdio("exit_early.py").start()
    message = str(info.value)
    assert time.perf_counter() - started < 5
    assert "exited with code 1" in message and "BRAVE_API_KEY environment variable is required" in message
    assert "\n" not in message


async def test_silent_server_hits_the_handshake_timeout_and_is_killed() -> None:
    conn = _stdio("silent.py", handshake_timeout_s=1.0)
    started = time.perf_counter()
    with pytest.raises(ServerStartError, match=r"did not finish the MCP handshake within 1s.*listening"):
        await conn.start()
    assert time.perf_counter() - started < 4


async def test_missing_command_is_a_start_error_and_calls_become_unavailable() -> None:
    conn = Connection(stdio_target("/nonexistent/mcp-server-binary"), "ghost")
    with pytest.raises(ServerStartError, match="ghost"):
        await conn.start()
    result = await conn.call("anything")
    assert (result.is_error, result.error_class) == (True, "unavailable")
    assert "ghost" in result.text


async def test_call_without_start_starts_and_a_failed_start_is_a_result() -> None:
    result = await _stdio("exit_early.py").call("echo", {"text": "x"})
    assert result.error_class == "unavailable" and "BRAVE_API_KEY" in result.text
