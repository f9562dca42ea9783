"""Helpers for tests and benchmarks of `cworld serve`: the task file, the CLI as a subprocess, MCP clients
(the official SDK's `Client`) over stdio and HTTP, and one episode driven through them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cworld.data_model import Task, read_jsonl, write_jsonl_atomic

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASK = "sbx-mail-forward-audit"
SCHEMA_ONLY = "helio-crm/search_contacts"
"""A catalog tool: no server runs it; in hybrid and synthesized mode the World Engine answers it."""
TOKEN = "s3cret-token"
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
       "TOKENIZERS_PARALLELISM": "false", "CWORLD_EMBED_MODEL": "hash", "CWORLD_SERVE_TOKEN": TOKEN}


def write_tasks(path: Path) -> Path:
    """The sandbox fixtures, with the forward task also offered a schema-only CRM tool."""
    tasks = read_jsonl(FIXTURE, Task)
    for task in tasks:
        if task.id == TASK:
            task.tools = [*task.tools, SCHEMA_ONLY]
    write_jsonl_atomic(path, tasks)
    return path


def subprocess_env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[1])
    return {**os.environ, **ENV, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}


def serve_args(workspace: Path, tasks: Path, run: Path, *extra: str) -> list[str]:
    return ["-m", "cworld", "--workspace", str(workspace), "serve", "--tasks", str(tasks), "--out", str(run),
            "--offline", *extra]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http(workspace: Path, tasks: Path, run: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    args = serve_args(workspace, tasks, run, "--transport", "http", "--port", str(port),
                      "--token-env", "CWORLD_SERVE_TOKEN", *extra)
    proc = subprocess.Popen([sys.executable, *args], env=subprocess_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"cworld serve exited with {proc.returncode}: {proc.stderr.read().decode()[-800:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"cworld serve did not listen on {port}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@asynccontextmanager
async def http_client(port: int, on_message: Callable[[Any], Any] | None = None, token: str = TOKEN,
                      on_response: Callable[[Any], Any] | None = None) -> Any:
    """An MCP client of the server on `port`; `on_response` sees every HTTP response (its headers)."""
    hooks = {"response": [on_response]} if on_response is not None else None
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120, event_hooks=hooks)
    async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                            message_handler=on_message) as client:
        yield client


def stdio_client(workspace: Path, tasks: Path, run: Path, on_message: Callable[[Any], Any] | None = None) -> Client:
    params = StdioServerParameters(command=sys.executable, args=serve_args(workspace, tasks, run), env=subprocess_env())
    return Client(params, message_handler=on_message, read_timeout_seconds=120)


class Notes:
    """Collects the server's notifications (tools/list_changed) a client receives."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method:
            self.methods.append(str(method))


async def names(client: Client) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


async def call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    return await client.call_tool(name, arguments)
