"""`cworld serve`: an MCP client can search the registry, then call a sandbox tool and a real tool."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import httpx
import pytest
from mcp import Client
from registry_helpers import default_specs, ensure_real_servers, make_environment

from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.mcp import Connection, http_target, stdio_target
from cworld.registry.build import build_registry
from cworld.registry.serve import RegistryService, build_mcp_server

#: Runs the CLI with `serve` registered, whether or not cworld.cli.main lists it yet.
BOOT = (
    "import sys; from cworld.cli import main as m; "
    "m.COMMANDS.setdefault('serve', 'serve'); m.main(sys.argv[1:])"
)
QUERY = "convert a length from kilometers to miles"
SANDBOX_CALL = {
    "server": "units",
    "tool": "convert_length",
    "arguments": {"value": 5, "from_unit": "km", "to_unit": "mi"},
}
REAL_CALL = {"server": "time", "tool": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """A built registry of units (sandbox), time (real) and a catalog; servers from the shared cache."""
    cache, statuses = ensure_real_servers(["time"])
    assert statuses["time"].startswith("installed"), statuses
    root = tmp_path_factory.mktemp("serve")
    servers = [
        {"id": "units", "kind": "sandbox", "transport": "memory", "app": "units"},
        *default_specs("time"),
        {"id": "crm", "kind": "catalog", "transport": "catalog", "catalog": "helio_crm.json"},
    ]
    env = make_environment(root / "env", servers)
    shutil.copy(Environment.resolve().registry / "catalogs" / "helio_crm.json", env.registry)
    ws = Workspace(root / "ws")
    ws.root.mkdir()
    (ws.root / "servers").symlink_to(cache)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CWORLD_EMBED_MODEL", "hash")
        asyncio.run(build_registry(env, ws))
    return env, ws


def _subprocess_env() -> dict[str, str]:
    return {
        **os.environ,
        "CWORLD_EMBED_MODEL": "hash",
        "HF_HUB_OFFLINE": "1",
        "CWORLD_SERVE_TOKEN": "s3cret-token",
    }


async def _search_then_call(call) -> tuple[dict, dict, dict]:
    """search_tools, then a sandbox tool and a real tool through call_tool; the structured/text answers."""
    found = await call("search_tools", {"query": QUERY, "k": 5})
    sandbox = await call("call_tool", SANDBOX_CALL)
    real = await call("call_tool", REAL_CALL)
    return found, sandbox, real


def _check(found: dict, sandbox: dict, real: dict) -> None:
    ids = [t["tool"] for t in found["tools"]]
    assert "units/convert_length" in ids, ids
    assert abs(sandbox["value"] - 3.10685596119) < 1e-9
    assert real["timezone"] == "Asia/Tokyo" and real["datetime"].endswith("+09:00")


async def test_in_memory_client_searches_and_calls(registry, monkeypatch):
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    env, ws = registry
    service = RegistryService(env, ws)
    try:
        async with Client(build_mcp_server(service)) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == ["call_tool", "search_tools"]

            async def call(name: str, args: dict) -> dict:
                result = await client.call_tool(name, args)
                assert not result.is_error, result
                return result.structured_content

            _check(*await _search_then_call(call))
            catalog = await client.call_tool(
                "call_tool", {"server": "crm", "tool": "get_contact", "arguments": {}}
            )
            assert catalog.is_error and "schema-only" in catalog.content[0].text
            assert catalog.meta["cworld"]["error_class"] == "unavailable"
            unknown = await client.call_tool("call_tool", {"server": "units", "tool": "teleport"})
            assert unknown.is_error and "search_tools" in unknown.content[0].text
            bad = await client.call_tool("call_tool", {**SANDBOX_CALL, "arguments": {"value": "far"}})
            assert bad.is_error and bad.meta["cworld"]["error_class"] == "invalid_args"
    finally:
        await service.close()


def _structured(result) -> dict:
    assert not result.is_error, result.text
    return result.structured_content if result.structured_content is not None else json.loads(result.text)


async def test_stdio_client_searches_and_calls(registry):
    env, ws = registry
    args = ["-c", BOOT, "--env", str(env.root), "--workspace", str(ws.root), "serve", "--transport", "stdio"]
    target = stdio_target(sys.executable, args, env=_subprocess_env())
    async with Connection(target, "cworld", handshake_timeout_s=60, default_timeout_s=60) as conn:

        async def call(name: str, arguments: dict) -> dict:
            return _structured(await conn.call(name, arguments))

        _check(*await _search_then_call(call))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"cworld serve exited with {proc.returncode}: {proc.stderr.read().decode()[-800:]}"
            )
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"cworld serve did not listen on {port} within {timeout_s}s")


@pytest.fixture
def http_server(registry):
    env, ws = registry
    port = _free_port()
    args = [
        sys.executable,
        "-c",
        BOOT,
        "--env",
        str(env.root),
        "--workspace",
        str(ws.root),
        "serve",
        "--transport",
        "http",
        "--port",
        str(port),
        "--token-env",
        "CWORLD_SERVE_TOKEN",
    ]
    proc = subprocess.Popen(args, env=_subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def test_http_client_with_token_searches_and_calls(http_server):
    denied = httpx.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)
    assert denied.status_code == 401
    wrong = httpx.post(http_server, json={}, headers={"Authorization": "Bearer nope"}, timeout=10)
    assert wrong.status_code == 401
    target = http_target(http_server, bearer_token="s3cret-token")
    async with Connection(target, "cworld", handshake_timeout_s=30, default_timeout_s=60) as conn:

        async def call(name: str, arguments: dict) -> dict:
            return _structured(await conn.call(name, arguments))

        _check(*await _search_then_call(call))


def test_token_env_must_be_set(registry, monkeypatch):
    from click.testing import CliRunner

    from cworld.cli import main

    env, ws = registry
    monkeypatch.setitem(main.COMMANDS, "serve", "serve")
    monkeypatch.delenv("CWORLD_NO_SUCH_TOKEN", raising=False)
    args = [
        "--env",
        str(env.root),
        "--workspace",
        str(ws.root),
        "serve",
        "--transport",
        "http",
        "--token-env",
        "CWORLD_NO_SUCH_TOKEN",
    ]
    result = CliRunner().invoke(main.cli, args)
    assert result.exit_code != 0 and "CWORLD_NO_SUCH_TOKEN" in str(result.exception or result.output)


def test_serving_an_unbuilt_workspace_says_what_to_do(tmp_path):
    env = make_environment(tmp_path / "env", [])
    with pytest.raises(UsageError, match="cworld registry build"):
        RegistryService(env, Workspace(tmp_path / "ws"))
