"""ServerPool: servers started once and shared, failures recorded and returned as results."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cworld.data_model import ServerSpec
from cworld.errors import UsageError
from cworld.mcp import Connection, ServerPool, ServerStartError, memory_target

FIXTURES = Path(__file__).parent / "fixtures" / "mcp_servers"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"cworld_test_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


toy = _load("toy_server")


def _script_spec(server_id: str, script: str) -> ServerSpec:
    return ServerSpec(id=server_id, kind="real", command=sys.executable, args=[str(FIXTURES / script)])


async def test_concurrent_callers_share_one_server_per_id() -> None:
    pool = ServerPool(
        [
            Connection(memory_target(toy.build_server("a")), "a"),
            Connection(memory_target(toy.build_server("b")), "b"),
        ]
    )
    async with pool:
        counts_a = await asyncio.gather(*(asyncio.create_task(pool.call("a", "counter")) for _ in range(20)))
        count_b = await pool.call("b", "counter")
    # One server per id: its counter saw all 20 calls; server b kept its own state.
    assert sorted(r.structured_content["result"] for r in counts_a) == list(range(1, 21))  # type: ignore[index]
    assert count_b.structured_content == {"result": 1}


async def test_stdio_server_started_once_for_many_tasks() -> None:
    async with ServerPool.from_specs([_script_spec("toy", "toy_server.py")]) as pool:
        pids = await asyncio.gather(*(asyncio.create_task(pool.call("toy", "pid")) for _ in range(8)))
    assert len({r.structured_content["result"] for r in pids}) == 1  # type: ignore[index]


async def test_failed_server_is_recorded_and_its_calls_are_unavailable() -> None:
    specs = [
        _script_spec("broken", "exit_early.py"),
        ServerSpec(id="cat", kind="catalog", transport="catalog", catalog="x.json"),
    ]
    async with ServerPool.from_specs(specs) as pool:
        first = await pool.call("broken", "echo", {"text": "x"})
        second = await pool.call("broken", "echo", {"text": "x"})
        catalog = await pool.call("cat", "anything")
        with pytest.raises(ServerStartError, match="BRAVE_API_KEY"):
            await pool.list_tools("broken")
    assert first.error_class == second.error_class == "unavailable"
    assert "BRAVE_API_KEY" in first.text and first.text == second.text
    assert catalog.error_class == "unavailable" and "schema-only catalog" in catalog.text
    assert set(pool.failures) == {"broken", "cat"}


async def test_start_all_reports_failures_and_list_tools_works_for_the_rest() -> None:
    pool = ServerPool([Connection(memory_target(toy.build_server()), "toy")])
    pool.add(Connection.from_spec(_script_spec("broken", "exit_early.py")))
    async with pool:
        failures = await pool.start_all()
        tools = await pool.list_tools("toy")
    assert list(failures) == ["broken"] and "exited with code 1" in failures["broken"]
    assert all(t.server == "toy" for t in tools) and tools


async def test_unknown_server_is_not_found_and_duplicate_ids_are_rejected() -> None:
    pool = ServerPool([Connection(memory_target(toy.build_server()), "toy")])
    result = await pool.call("nope", "echo")
    assert result.error_class == "not_found" and "toy" in result.text
    with pytest.raises(UsageError, match="registered twice"):
        pool.add(Connection(memory_target(toy.build_server()), "toy"))
    await pool.close_all()


async def test_calls_after_close_all_are_errors_not_hangs() -> None:
    async with ServerPool([Connection(memory_target(toy.build_server()), "toy")]) as pool:
        assert (await pool.call("toy", "echo", {"text": "x"})).text == "x"
    after = await pool.call("toy", "echo", {"text": "x"})
    assert after.is_error and after.error_class == "infra"
