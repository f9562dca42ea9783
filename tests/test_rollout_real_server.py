"""A real MCP server (a subprocess over stdio) killed mid-episode: the runner records an infrastructure
error, restarts the episode on a fresh server, and the agent is not blamed."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import yaml

from cworld.agents import Action, Observation, Toolbox
from cworld.data_model import Task, ToolSpec
from cworld.environment import Environment, Workspace, init_environment
from cworld.registry.tools import environment_tools
from cworld.rollout import RolloutContext, RunConfig, Runner, TrajectoryStore

TOY = Path(__file__).parent / "fixtures" / "mcp_servers" / "toy_server.py"


def toy(name: str, **properties: str) -> ToolSpec:
    return ToolSpec(server="toy", name=name, server_kind="real",
                    input_schema={"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}})


class KillsTheServerOnce:
    """First attempt: learns the server's pid, then makes a slow call and has the server SIGKILLed during
    it. Every later attempt: echoes and answers."""

    name = "test:killer"
    attempts = 0

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        KillsTheServerOnce.attempts += 1
        self.turn = 0

    async def act(self, observation: Observation) -> Action:
        self.turn += 1
        if KillsTheServerOnce.attempts > 1:
            return Action.call("toy/echo", {"text": "hello"}, "c1") if self.turn == 1 else Action.final("echoed")
        if self.turn == 1:
            return Action.call("toy/pid", {}, "c1")
        pid = int(observation.result.text)  # type: ignore[union-attr]
        asyncio.get_running_loop().call_later(0.5, os.kill, pid, signal.SIGKILL)
        return Action.call("toy/slow", {"seconds": 10}, "c2")


async def test_a_real_server_killed_mid_episode_is_an_infra_error_that_is_retried(tmp_path):
    env_dir = init_environment(tmp_path / "env")
    (env_dir / "registry" / "servers.yaml").write_text(yaml.safe_dump({"servers": [
        {"id": "toy", "kind": "real", "command": sys.executable, "args": [str(TOY)],
         "env": {"TOY_SCRATCH": "{scratch}"}, "timeout_s": 20}]}))
    ws = Workspace.resolve(tmp_path / "ws")
    tools = {**environment_tools(workspace=ws).episode(), **{t.id: t for t in (toy("pid"), toy("slow", seconds="number"),
                                                           toy("echo", text="string"))}}
    task = Task(id="real-kill", query="Echo hello.", tools=["toy/pid", "toy/slow", "toy/echo"])
    ctx = RolloutContext(Environment.resolve(env_dir), ws, tools)
    config = RunConfig(agent="test:killer", policy="none", access="full", infra_retries=2, progress=False)
    report = await Runner([task], config, ctx, tmp_path / "run", agent_factory=KillsTheServerOnce).run()
    (trajectory,) = list(TrajectoryStore(tmp_path / "run"))
    assert report.statuses == {"completed": 1} and trajectory.status == "completed"
    (error,) = trajectory.infra_errors
    assert error.attempt == 1 and error.kind == "server_crash"
    assert [s.tool_call.tool for s in trajectory.tool_steps] == ["toy/echo"]
    assert trajectory.tool_steps[0].observation.text == "hello"
