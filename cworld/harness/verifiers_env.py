"""cworld episodes as a `verifiers` environment (the `cworld[verifiers]` extra; verifiers 0.4, its `v1` API).

    vf-eval cworld-env --env.taskset.tasks tasks.jsonl --env.taskset.mode synthesized \\
        --model NAME --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var OPENAI_API_KEY

    env = load_environment(tasks="tasks.jsonl", mode="synthesized", policy="stress", seed=0)   # a vf.Env

In verifiers 0.4 an environment is a taskset (data), an agent seat with a harness (the program that talks
to the model) and an `Env` (how one task becomes one episode). This module exports all three, and the
top-level module `cworld_env` re-exports them: the taskset id `cworld-env` is the whole environment:

- `CworldTaskset`: one task per cworld task; its prompt is the request as the user states it (query and
  constraint descriptions), never the answer key.
- `CworldHarness`: the multi-turn tool loop, in process. Every model call goes through verifiers'
  interception endpoint (so the trace records it and a trainer gets its tokens); the episode's visible
  tools are offered with their JSON schemas (`server/name` as `server__name`), plus `search_tools` and
  `submit`. Each tool call is one episode action (schema errors included: the episode answers
  `invalid_args` as in `cworld run`); the user's mid-episode messages join the chat as user turns;
  `submit`, or a reply without a tool call, is the final answer; the turn limit also ends the episode.
- `CworldTask`: the rubric is cworld's reward: `reward` is the outcome (1.0 when the end state matches the
  task's ground truth); the verifiable metrics (`state_success`, `constraints`, `overall`, `success`, the
  metrics of `cworld judge`) are recorded as metrics.

The episodes run through `cworld serve`'s `EpisodeService` (the gym's `EpisodeDriver` underneath), so the
trajectories go to one run folder of the workspace (`runs/verifiers-<time>/` or `out`), as for every door.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

from cworld.errors import UsageError

try:
    import verifiers.v1 as vf
    from verifiers.v1.runtimes import ProgramResult, SubprocessConfig
except ImportError:  # pragma: no cover - exercised only without the extra
    raise UsageError("verifiers is not installed; install the extra: see docs/harnesses.md (cworld[verifiers])") from None

from cworld.harness.doors import (
    SYSTEM_PROMPT,
    ChatTools,
    DoorConfig,
    episode_service,
    task_text,
    with_run_folder,
)
from cworld.serve.episodes import EpisodeService, SessionState

__all__ = ["CworldEnv", "CworldHarness", "CworldTaskset", "load_environment"]

TASKSET_ID = "cworld-env"
METRIC_KEYS = ("state_success", "constraints", "overall", "success")


class CworldTaskData(vf.TaskData):
    task_id: str
    seed: int = 0
    agent: str | None = None
    door: dict[str, Any]
    """The door's settings (tasks file, mode, policy, access, max_turns and the run folder)."""


class CworldTasksetConfig(vf.TasksetConfig):
    tasks: str | None = None
    """A cworld tasks JSONL (default: the workspace's latest tasks file)."""
    mode: str = "synthesized"
    """live, synthesized or hybrid."""
    policy: str = "default"
    """The fault policy (controller/policies/)."""
    access: str = "full"
    """Tool access: full, search or rag-K."""
    seed: int = 0
    """The episode seed of every rollout (the world and the faults of (task, policy, seed))."""
    max_turns: int | None = None
    """Turn limit per episode (default: the task's own budget)."""
    out: str | None = None
    """The run folder for the trajectories (default: a new runs/verifiers-<time> in the workspace)."""
    agent: str | None = None
    """The trajectories' agent label (default `verifiers:<model>`); it keys the fault timing stream, as in
    the gym."""


class CworldTask(vf.Task[CworldTaskData]):
    @vf.reward
    async def reward(self, trace: vf.Trace) -> float:
        """The gym's outcome reward: 1.0 when the end state matches the task's ground truth."""
        return float(_outcome(trace).get("reward", 0.0))

    @vf.metric
    async def cworld(self, trace: vf.Trace) -> dict[str, float]:
        """cworld's verifiable metrics (`score_offline`); a value the episode cannot tell (no ground truth, no
        checkable constraint) is left out, as verifiers' metrics are numbers."""
        outcome = _outcome(trace)
        values = {**(outcome.get("metrics") or {}), "overall": outcome.get("overall"),
                  "success": outcome.get("success"), "reward_known": bool(outcome.get("reward_known"))}
        known = {k: _number(v) for k, v in values.items()}
        return {k: v for k, v in known.items() if v is not None}


class CworldTaskset(vf.Taskset[CworldTask, CworldTasksetConfig]):
    def load(self) -> Iterator[CworldTask]:
        door = with_run_folder(door_config(self.config))
        service = episode_service(door)
        settings = {"tasks": door.tasks, "mode": door.mode, "policy": door.policy, "access": door.access,
                    "max_turns": door.max_turns, "out": door.out}
        for task in service.tasks.values():
            yield CworldTask(CworldTaskData(id=task.id, name=task.id, prompt=task_text(task, door.mode),
                                            system_prompt=SYSTEM_PROMPT, task_id=task.id, seed=self.config.seed,
                                            agent=self.config.agent, door=settings), self.config.task)


def door_config(config: CworldTasksetConfig) -> DoorConfig:
    return DoorConfig(tasks=config.tasks, mode=config.mode, policy=config.policy, access=config.access,
                      max_turns=config.max_turns, out=config.out, agent="verifiers", run_prefix="verifiers")


class CworldHarnessConfig(vf.HarnessConfig):
    id: str = TASKSET_ID


class CworldHarness(vf.Harness[CworldHarnessConfig]):
    """The tool loop over one cworld episode, run in process (no program to install, no container)."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData, tool_interception_url: str | None = None,
                     ) -> ProgramResult:
        if not isinstance(data, CworldTaskData):
            data = CworldTaskData.model_validate(data.model_dump())
        service = episode_service(DoorConfig(**data.door, agent="verifiers", run_prefix="verifiers"))
        model = ModelChat(ctx, endpoint, secret)
        try:
            trace.info["cworld"] = await play_episode(service, data, model)
        finally:
            await model.client.close()
        return ProgramResult(exit_code=0, stdout="", stderr="")


class ModelChat:
    """The model behind verifiers' interception endpoint, as an OpenAI chat-completions client."""

    def __init__(self, ctx: vf.ModelContext, endpoint: str, secret: str) -> None:
        from openai import AsyncOpenAI

        self.model = ctx.model
        self.client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)

    async def reply(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        response = await self.client.chat.completions.create(model=self.model, messages=messages,  # type: ignore[arg-type]
                                                             tools=tools)  # type: ignore[arg-type]
        return response.choices[0].message.model_dump(exclude_none=True)


async def play_episode(service: EpisodeService, data: CworldTaskData, model: ModelChat) -> dict[str, Any]:
    """One episode, the model's tool calls as its actions; what the episode ended with (reward, metrics)."""
    state = SessionState()
    first = await service.start(state, data.task_id, seed=data.seed, agent=data.agent or f"verifiers:{model.model}")
    names = ChatTools()
    messages: list[dict[str, Any]] = [{"role": "system", "content": data.system_prompt or SYSTEM_PROMPT},
                                      {"role": "user", "content": data.prompt_text}]
    tools = first["tools"]
    env_ms: list[float] = []
    try:
        while True:
            message = await model.reply(messages, names.offer(tools))
            messages.append(message)
            started = time.perf_counter()
            ended, tools = await _answer(service, state, message, names, messages, tools)
            env_ms.append((time.perf_counter() - started) * 1000)
            if ended is not None:
                return {**ended, "env_ms": env_ms}
    finally:
        await service.abandon(state)  # a no-op once the episode has ended


async def _answer(service: EpisodeService, state: SessionState, message: dict[str, Any], names: ChatTools,
                  messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                  ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The assistant message as episode actions: each tool call is a step, no call is the final answer.
    Tool results (and the user's messages after them) join `messages`."""
    calls = message.get("tool_calls") or []
    if not calls:
        _, ended = await service.act(state, {"final": message.get("content") or ""})
        return _summary(service, ended), tools
    heard: list[str] = []
    for call in calls:
        function = call.get("function") or {}
        if not state.open:
            messages.append(_tool_message(call, "The episode has ended; this call was not run."))
            continue
        action = names.action(str(function.get("name", "")), function.get("arguments"))
        step, ended = await service.act(state, action)
        if ended is not None:
            messages.append(_tool_message(call, "Submitted." if "final" in action else "The episode has ended."))
            return _summary(service, ended), tools
        observation = step.observation or {}
        result = observation.get("result") or {}
        messages.append(_tool_message(call, str(result.get("text", ""))))
        heard += observation.get("user_messages") or []
        tools = observation.get("tools", tools)
    messages.extend({"role": "user", "content": text} for text in heard)
    return None, tools


def _tool_message(call: dict[str, Any], text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call.get("id", ""), "content": text}


def _summary(service: EpisodeService, ended: Any) -> dict[str, Any]:
    summary = ended.summary(service.run)
    keep = ("episode_id", "task_id", "status", "reward", "reward_known", "turns", "run", "success", "overall",
            "metrics")
    return {k: summary.get(k) for k in keep}


def _outcome(trace: vf.Trace) -> dict[str, Any]:
    return dict(trace.info.get("cworld") or {})


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


class CworldEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=SubprocessConfig())
    """The one seat; its harness is the taskset's own (`CworldHarness`, the in-process tool loop), which
    needs no container, so the runtime is a local one."""


class CworldEnv(vf.Env[CworldEnvConfig]):
    """One agent seat playing the cworld taskset: each task one cworld episode."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


def load_environment(tasks: str | None = None, mode: str = "synthesized", policy: str = "default",
                     access: str = "full", seed: int = 0, max_turns: int | None = None,
                     out: str | None = None, agent: str | None = None) -> vf.Env:
    """The cworld environment over a tasks file (see the module docstring)."""
    taskset = CworldTasksetConfig(id=TASKSET_ID, tasks=tasks, mode=mode, policy=policy, access=access, seed=seed,
                                  max_turns=max_turns, out=out, agent=agent)
    door_config(taskset).check()
    return vf.load_environment(CworldEnvConfig(taskset=taskset))
