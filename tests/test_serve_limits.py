"""`cworld serve` under abuse (issue 27): past its session cap a new session is answered 503 with Retry-After,
a body past the size limit 413, and the sessions it has keep being served to the end of their episodes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from serve_helpers import TASK, TOKEN, call, free_port, http_client, start_http, stop, write_tasks

from cworld.rollout import read_trajectories

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "one-too-many", "version": "0"}}}
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}


def open_one_more(port: int) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=HEADERS, timeout=30)


async def test_past_the_session_cap_new_sessions_get_503_and_open_ones_finish(tmp_path: Path) -> None:
    tasks, run, port = write_tasks(tmp_path / "tasks.jsonl"), tmp_path / "ws" / "runs" / "served", free_port()
    proc = start_http(tmp_path / "ws", tasks, run, port, "--max-sessions", "2", "--max-body-bytes", "65536")
    try:
        async with http_client(port) as first, http_client(port) as second:
            started = [await call(c, "start_episode", {"task": TASK, "mode": "synthesized", "policy": "none",
                                                        "seed": n}) for n, c in enumerate((first, second))]
            refused = await asyncio.to_thread(open_one_more, port)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "10"
            assert "cap of 2 open sessions" in refused.json()["error"]["message"]
            big = await asyncio.to_thread(httpx.post, f"http://127.0.0.1:{port}/mcp", headers=HEADERS, timeout=30,
                                          content=b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "x": "' +
                                          b"a" * 100_000 + b'"}')
            assert big.status_code == 413
            for client in (first, second):  # the sessions it has are served to the end
                searched = await call(client, "mail__search_messages", {"query": "Security audit findings"})
                assert not searched.is_error
                submitted = await call(client, "submit", {"answer": "Not forwarded yet."})
                assert not submitted.is_error and submitted.structured_content["status"] == "completed"
        stored = {t.episode_id: t for t in read_trajectories(run)}
        assert {s.structured_content["episode_id"] for s in started} <= set(stored)
        assert all(stored[s.structured_content["episode_id"]].status == "completed" for s in started)
        again = await asyncio.to_thread(open_one_more, port)  # both sessions ended (DELETE): room again
        assert again.status_code == 200
    finally:
        stop(proc)
