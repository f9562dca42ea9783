"""`cworld serve`: a whole episode over stdio and over HTTP with the official MCP client — start, tool calls
with a fault injected, a schema-only tool the World Engine answers, submit and the reward — then
`cworld judge` and `cworld report` over the workspace include the served episodes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from serve_helpers import (
    SCHEMA_ONLY,
    TASK,
    Notes,
    call,
    free_port,
    http_client,
    names,
    start_http,
    stdio_client,
    stop,
    subprocess_env,
    write_tasks,
)

from cworld.cli.main import cli
from cworld.data_model import Trajectory, iter_jsonl
from cworld.serve.names import ToolNames

START = {"task": TASK, "mode": "hybrid", "policy": "stress", "seed": 5}
"""Under `stress` at seed 5 the third search of the mailbox meets a rate limit (a planned fault)."""


async def drive(client, notes: Notes) -> dict:
    """The episode a client plays: what it saw, for the assertions."""
    assert await names(client) == ["list_tasks", "start_episode"]
    tasks = (await call(client, "list_tasks", {})).structured_content["tasks"]
    assert TASK in {t["id"] for t in tasks} and all("gold_plan" not in t for t in tasks)
    started = await call(client, "start_episode", START)
    assert not started.is_error and "Security audit findings" in started.content[0].text
    assert "notifications/tools/list_changed" in notes.methods
    listed = await names(client)
    assert {"submit", "mail__search_messages", "helio-crm__search_contacts"} <= set(listed)
    again = await call(client, "start_episode", START)
    assert again.is_error and "submit it" in again.content[0].text
    faults = []
    for _ in range(4):
        result = await call(client, "mail__search_messages", {"query": "Security audit findings"})
        faults += [i["kind"] for i in result.meta["cworld"]["interventions"]]
        if result.is_error:
            assert result.meta["cworld"]["error_class"] == "rate_limit"
            break
    assert faults, "the stress policy at seed 5 injects a fault within four calls"
    crm = await call(client, "helio-crm__search_contacts", {"query": "Deborah Kapoor"})
    unknown = await call(client, "mail__teleport", {})
    assert unknown.is_error and "no tool 'mail/teleport'" in unknown.content[0].text
    submitted = await call(client, "submit", {"answer": "I could not forward it yet."})
    assert not submitted.is_error
    reward = submitted.structured_content
    assert await names(client) == ["list_tasks", "start_episode"]
    return {"episode": started.structured_content["episode_id"], "crm": crm, "reward": reward, "faults": faults}


def check(seen: dict, run: Path) -> Trajectory:
    crm, reward = seen["crm"], seen["reward"]
    assert not crm.is_error and crm.structured_content is not None
    assert reward["episode_id"] == seen["episode"] and reward["status"] == "completed"
    assert reward["reward"] == 0.0 and reward["reward_known"] is True  # the email was never forwarded
    assert reward["success"] is False and reward["state"]["missed"]
    assert {"schema_compliance", "recovery", "efficiency"} <= set(reward["metrics"])
    assert reward["judges"] == []  # offline: verifiable rewards only
    stored = [t for t in iter_jsonl(run / "trajectories.jsonl", Trajectory) if t.episode_id == seen["episode"]]
    assert len(stored) == 1
    trajectory = stored[0]
    assert trajectory.agent == "mcp" and trajectory.mode == "hybrid" and trajectory.policy == "stress"
    engine = [s for s in trajectory.steps if s.tool_call and s.tool_call.tool == SCHEMA_ONLY]
    assert engine and engine[0].raw_result is not None and engine[0].raw_result.meta.get("source") == "engine"
    assert any(i.kind == "rate_limit" for i in trajectory.interventions)
    return trajectory


async def test_an_episode_over_stdio(tmp_path: Path) -> None:
    tasks, run = write_tasks(tmp_path / "tasks.jsonl"), tmp_path / "ws" / "runs" / "served"
    notes = Notes()
    async with stdio_client(tmp_path / "ws", tasks, run, notes) as client:
        seen = await drive(client, notes)
        assert client.session.initialize_result is not None  # auto mode fell back to the handshake
    check(seen, run)
    await asyncio.to_thread(judge_and_report, tmp_path / "ws", run, episodes=1)


@pytest.fixture
def http_server(tmp_path: Path):
    tasks, run, port = write_tasks(tmp_path / "tasks.jsonl"), tmp_path / "ws" / "runs" / "served", free_port()
    proc = start_http(tmp_path / "ws", tasks, run, port)
    yield port, run
    stop(proc)


async def test_an_episode_over_http_and_a_session_that_leaves_is_stored_abandoned(http_server, tmp_path) -> None:
    port, run = http_server
    assert httpx.post(f"http://127.0.0.1:{port}/mcp", json={}).status_code == 401
    notes = Notes()
    async with http_client(port, notes) as client:
        seen = await drive(client, notes)
    async with http_client(port) as other:  # leaves without submitting: the DELETE ends its session
        opened = await call(other, "start_episode", {"task": TASK, "mode": "synthesized", "policy": "none"})
        await call(other, "mail__search_messages", {"query": "audit"})
    check(seen, run)
    stored = {t.episode_id: t for t in iter_jsonl(run / "trajectories.jsonl", Trajectory)}
    left = stored[opened.structured_content["episode_id"]]
    assert left.status == "abandoned" and [s.kind for s in left.steps] == ["tool"]
    await asyncio.to_thread(judge_and_report, tmp_path / "ws", run, episodes=2)


def judge_and_report(workspace: Path, run: Path, *, episodes: int) -> None:
    runner = CliRunner(env={"CWORLD_EMBED_MODEL": "hash"})
    judged = runner.invoke(cli, ["--workspace", str(workspace), "judge", str(run), "--offline"])
    assert judged.exit_code == 0, judged.output
    scores = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    assert len(scores) == episodes and {s["agent"] for s in scores} == {"mcp"}
    reported = runner.invoke(cli, ["--workspace", str(workspace), "report", str(run), "--quiet"])
    assert reported.exit_code == 0, reported.output
    board = Path(reported.output.split("leaderboard:")[1].split()[0]).read_text()
    assert "mcp" in board and "hybrid" in board


def test_tool_names_go_both_ways() -> None:
    table = ToolNames({"submit"})
    assert table.name("mail/search_messages") == "mail__search_messages"
    assert table.tool_id("mail__search_messages") == "mail/search_messages"
    assert table.name("a b/c") == "a_b__c" and table.tool_id("a_b__c") == "a b/c"
    assert table.name("a_b/c") == "a_b__c_2" and table.tool_id("a_b__c_2") == "a_b/c"
    assert table.tool_id("never__given") == "never/given"


def test_bad_flags_are_one_line(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    args = [sys.executable, "-m", "cworld", "--workspace", str(tmp_path / "ws"), "serve", "--tasks", str(tasks)]
    for extra, message in ((["--token-env", "NOPE_NOT_SET", "--transport", "http"], "NOPE_NOT_SET"),
                           (["--access", "sideways"], "unknown tool access mode"),
                           (["--policy", "nonexistent"], "unknown fault policy")):
        done = subprocess.run(args + extra, env=subprocess_env(), capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
