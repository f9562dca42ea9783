"""Five doors, one episode: the same scripted actions through the gym API, `cworld serve` (MCP), Inspect AI,
verifiers (its `vf-eval` entry point, the model a scripted OpenAI-compatible stand-in) and OpenEnv (openenv-core's
client against `cworld openenv serve`'s app) record equal trajectories, wall-clock fields and episode ids
aside, in live and synthesized mode, under the `stress` policy (faults fire)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rollout_helpers import without_timings
from serve_helpers import TASK, free_port, write_tasks
from test_serve_parity import ACTIONS, _diff, through_gym, through_serve

pytest.importorskip("inspect_ai")
pytest.importorskip("verifiers.v1")
pytest.importorskip("openenv.core")

import test_serve_parity  # noqa: E402
import uvicorn  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from openenv.core import GenericEnvClient  # noqa: E402

from cworld.data_model import Task, Trajectory, read_jsonl  # noqa: E402
from cworld.environment import Workspace  # noqa: E402
from cworld.harness.doors import ChatTools, DoorConfig, episode_service  # noqa: E402
from cworld.harness.inspect_bridge import ToolNames as InspectNames  # noqa: E402
from cworld.harness.inspect_bridge import cworld_task  # noqa: E402
from cworld.harness.openenv_env import build_app  # noqa: E402
from cworld.llm.strict_server import StrictProvider  # noqa: E402
from cworld.rollout import read_trajectories  # noqa: E402

MODEL = "mockllm/model"
AGENT = f"inspect:{MODEL}"  # Inspect names its agent after the model; the other doors take this label
SEED = 5


def comparable(trajectory: Trajectory) -> dict:
    return {k: v for k, v in without_timings(trajectory).items() if k != "episode_id"}


def one_trajectory(run: Path) -> Trajectory:
    [trajectory] = list(read_trajectories(run))
    return trajectory


# --- Inspect: mockllm plays the actions as tool calls -------------------------------------------------
def inspect_outputs() -> list[ModelOutput]:
    names = InspectNames()
    outputs = []
    for action in ACTIONS:
        if "tool" in action:
            name, arguments = names.name(action["tool"]), action["arguments"]
        elif "search" in action:
            name, arguments = "search_tools", {"query": action["search"], "k": action["k"]}
        else:
            name, arguments = "submit", {"answer": action["final"]}
        output = ModelOutput.for_tool_call(MODEL, name, arguments)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken download
        outputs.append(output)
    return outputs


def through_inspect(tasks: Path, mode: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Trajectory:
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp / "ws-inspect"))
    model = get_model(MODEL, custom_outputs=inspect_outputs())
    [log] = inspect_eval(cworld_task(str(tasks), mode=mode, policy="stress", seed=SEED), model=model,
                         log_dir=str(tmp / "logs"), display="none")
    monkeypatch.delenv("CWORLD_WORKSPACE")
    assert log.status == "success", log.error
    return one_trajectory(Workspace.resolve(tmp / "ws-inspect").latest("run"))


# --- verifiers: vf-eval against a scripted OpenAI-compatible stand-in --------------------------------------
def chat_replies() -> list[dict[str, Any]]:
    names = ChatTools()
    replies = []
    for action in ACTIONS:
        if "tool" in action:
            call = {"name": names.name(action["tool"]), "arguments": action["arguments"]}
        elif "search" in action:
            call = {"name": "search_tools", "arguments": {"query": action["search"], "k": action["k"]}}
        else:
            call = {"name": "submit", "arguments": {"answer": action["final"]}}
        replies.append({"tool_calls": [call]})
    return replies


def through_verifiers(tasks: Path, mode: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Trajectory, list]:
    from verifiers.v1.cli.eval.main import main as vf_eval

    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp / "ws-verifiers"))
    monkeypatch.setenv("STAND_IN_KEY", "not-a-secret")
    with StrictProvider() as provider:
        provider.script(chat_replies())
        vf_eval(["cworld-env", "--env.taskset.tasks", str(tasks), "--env.taskset.mode", mode,
                 "--env.taskset.policy", "stress", "--env.taskset.seed", str(SEED), "--env.taskset.agent", AGENT,
                 "--env.taskset.out", str(tmp / "run-verifiers"), "--model", "stand-in",
                 "--client.base-url", provider.url, "--client.api-key-var", "STAND_IN_KEY",
                 "--output-dir", str(tmp / "vf-out"), "--num-rollouts", "1", "--no-rich", "--no-push"])
        requests = list(provider.requests)
    monkeypatch.delenv("CWORLD_WORKSPACE")
    assert not provider.refusals, provider.refusals
    return one_trajectory(tmp / "run-verifiers"), requests


# --- OpenEnv: openenv-core's client against the app `cworld openenv serve` runs -----------------------------
class AppThread:
    """The OpenEnv app on uvicorn in a thread (its own event loop), on a free loopback port."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> AppThread:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the OpenEnv app did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def through_openenv(tasks: Path, mode: str, tmp: Path) -> Trajectory:
    door = DoorConfig(tasks=str(tasks), mode=mode, policy="stress", out=str(tmp / "run-openenv"))
    service = episode_service(door, workspace=Workspace.resolve(tmp / "ws-openenv"))

    async def play(port: int) -> None:
        async with GenericEnvClient(base_url=f"http://127.0.0.1:{port}", message_timeout_s=120) as env:
            await env.reset(task=TASK, seed=SEED, agent=AGENT)
            for action in ACTIONS:
                result = await env.step(action)
            assert result.done

    with AppThread(build_app(service)) as app:
        asyncio.run(play(app.port))
    return one_trajectory(tmp / "run-openenv")


@pytest.mark.parametrize("mode", ["live", "synthesized"])
def test_five_doors_record_the_same_trajectory(mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    all_tasks = write_tasks(tmp_path / "all.jsonl")
    task = next(t for t in read_jsonl(all_tasks, Task) if t.id == TASK)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(task.model_dump_json() + "\n")
    monkeypatch.setattr(test_serve_parity, "AGENT", AGENT)

    gym = asyncio.run(through_gym(task, mode, Workspace.resolve(tmp_path / "ws-gym")))
    served = asyncio.run(through_serve(task, mode, Workspace.resolve(tmp_path / "ws-serve"), tmp_path / "run-serve"))
    inspected = through_inspect(tasks, mode, tmp_path, monkeypatch)
    verified, requests = through_verifiers(tasks, mode, tmp_path, monkeypatch)
    opened = through_openenv(tasks, mode, tmp_path)

    assert gym.interventions and gym.agent == AGENT  # the stress policy injected faults
    assert gym.status == "completed" and len(gym.steps) >= len(ACTIONS)
    expected = comparable(gym)
    for door, trajectory in (("serve", served), ("inspect", inspected), ("verifiers", verified),
                             ("openenv", opened)):
        assert comparable(trajectory) == expected, (door, list(_diff(comparable(trajectory), expected))[:8])
    heard = [s.message for s in gym.steps if s.kind == "user"]
    user_turns = [m["content"] for m in requests[-1]["messages"] if m["role"] == "user"][1:]
    assert heard and user_turns == heard  # the user's mid-episode messages reached the model as user turns
    os.environ.pop("STAND_IN_KEY", None)
