"""What a real MCP client sees of `cworld serve` beyond the tools: `serverInfo` carries the package version,
and the `logging` capability delivers the episode's events (start, injected faults, end) as log messages,
each before the result of the call it belongs to, filtered by the level the session set."""

from __future__ import annotations

import asyncio
import warnings
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from serve_helpers import TASK, TOKEN, call, free_port, start_http, stop, write_tasks

START = {"task": TASK, "mode": "hybrid", "policy": "stress", "seed": 5}
"""Under `stress` at seed 5 the third search of the mailbox meets a rate limit (a planned fault)."""


class Logs:
    """The log messages a client session receives, in order."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def __call__(self, params: Any) -> None:
        self.seen.append(params)

    def events(self) -> list[str]:
        return [entry.data["event"] for entry in self.seen]


@asynccontextmanager
async def logging_client(port: int, logs: Logs) -> Any:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                            logging_callback=logs) as client:
        yield client


async def play(client: Client, logs: Logs) -> dict[str, Any]:
    """Start, search the mailbox until the planned fault, submit; the fault's log is checked to have come
    before the call's result."""
    started = (await call(client, "start_episode", START)).structured_content
    faults: list[str] = []
    for _ in range(4):
        result = await call(client, "mail__search_messages", {"query": "Security audit findings"})
        kinds = [i["kind"] for i in result.meta["cworld"]["interventions"]]
        logged = [e.data["kind"] for e in logs.seen if e.data["event"] == "fault"]
        assert logged[len(logged) - len(kinds):] == kinds, "a fault's log arrives before the call's result"
        faults += kinds
        if result.is_error:
            break
    submitted = (await call(client, "submit", {"answer": "Not forwarded yet."})).structured_content
    return {"episode": started["episode_id"], "faults": faults, "reward": submitted["reward"]}


async def session(port: int) -> None:
    logs = Logs()
    async with logging_client(port, logs) as client:
        assert client.server_info is not None and client.server_info.name == "cworld"
        assert client.server_info.version == version("cworld") != ""
        assert client.server_capabilities.logging is not None

        first = await play(client, logs)  # the default level: info and above
        assert first["faults"] and "rate_limit" in first["faults"]
        assert logs.events()[0] == "episode_started" and logs.events()[-1] == "episode_ended"
        start, end = logs.seen[0], logs.seen[-1]
        assert start.level == "info" and start.logger == "cworld.episode"
        assert start.data["episode_id"] == first["episode"] and start.data["policy"] == "stress"
        assert end.data["episode_id"] == first["episode"] and end.data["reward"] == first["reward"]
        assert end.data["status"] == "completed"
        faults = [e for e in logs.seen if e.data["event"] == "fault"]
        assert [e.data["kind"] for e in faults] == first["faults"]
        assert all(e.level == "warning" and e.logger == "cworld.faults" for e in faults)
        assert all(e.data["tool"] == "mail/search_messages" and e.data["message"] for e in faults)
        assert "tool_call" not in logs.events()  # debug entries stay below the default level

        with warnings.catch_warnings():  # logging is deprecated from protocol 2026-07-28; the server is older
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.set_logging_level("warning")
        logs.seen.clear()
        second = await play(client, logs)
        assert second["faults"] and {e.level for e in logs.seen} == {"warning"}
        assert set(logs.events()) == {"fault"}


def test_a_client_sees_the_version_and_watches_faults_and_episodes_as_log_messages(tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    port = free_port()
    server = start_http(tmp_path / "ws", tasks, tmp_path / "run", port)
    try:
        asyncio.run(session(port))
    finally:
        stop(server)
