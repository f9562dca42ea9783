"""The Inspect AI side of cworld: one sample per task, each a cworld episode the model plays.

The `@task` lives in `cworld.harness.inspect_task` (Inspect loads task files outside `sys.modules`, so the
machinery is here, in a module imported normally).

- the dataset: one `Sample` per task; its input is the request as the user states it (query and constraint
  descriptions, as cworld's LLM agents are told), its id and `metadata["task_id"]` the task id;
- the solver: a `cworld.gym` episode per sample (seed = `seed` + epoch - 1). The episode's visible tools are
  offered as Inspect tools (`server/name` -> `server__name`, mapped back on the call) with their JSON
  schemas, plus `search_tools` and `submit`. Each model tool call is one gym action; every call reaches the
  episode (the controller validates arguments, injects faults, answers in the chosen mode), so schema
  errors count as they do in `cworld run`. User messages (mid-episode constraints) join the chat as user
  turns. `submit(answer)`, or a reply with no tool call, is the final answer;
- the trajectory of each episode is appended to a run folder in the cworld workspace, as `cworld run`
  writes it, so `cworld judge`, `cworld report` and `cworld export-sft` read Inspect runs too;
- the scorer: cworld's verifiable judges (`score_offline`): state success, constraint satisfaction, the
  overall 0-10 score and the pass verdict, with every metric in the score's metadata. NaN marks a value
  that cannot be told for the episode (Inspect leaves it out of the mean). LLM judges: `cworld judge RUN`.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.errors import UsageError

try:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        get_model,
    )
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import ToolCall, ToolCallError, ToolInfo, ToolParams
except ImportError:  # pragma: no cover - exercised only without the extra
    raise UsageError("Inspect AI is not installed; install the extra: pip install 'cworld[inspect]'") from None

from pydantic import ValidationError

from cworld.data_model import Task as CworldTask
from cworld.data_model import ToolSpec, Trajectory, read_jsonl
from cworld.data_model.tool_names import ToolNames as SharedNames
from cworld.environment import Environment, Workspace
from cworld.gym import make
from cworld.harness.doors import new_run_dir, task_text
from cworld.judges import JudgeContent, JudgeSetup
from cworld.judges.scoring import score_offline
from cworld.llm.encodings import use_bundled_encodings
from cworld.rollout.store import TrajectoryStore
from cworld.sandbox.statediff import StateDiffResult

MODES = ("live", "synthesized", "hybrid")
SEARCH_TOOL, SUBMIT_TOOL = "search_tools", "submit"
SYSTEM_PROMPT = ("You act for the user with the tools provided. Call tools to do what the user asks; when done, "
                 "call submit with your final answer to the user (or reply without a tool call).")
ENDED = "The episode has ended; this call was not run."
VALUE_KEYS = ("state_success", "constraints", "overall", "success")


@dataclass
class Bridge:
    """What the solver and the scorer of one eval share: the tasks, the environment and the run folder."""

    tasks: dict[str, CworldTask]
    env: Environment
    workspace: Workspace
    tools: dict[str, ToolSpec]
    store: TrajectoryStore
    mode: str
    policy: str
    access: str
    seed: int
    max_turns: int | None
    finished: dict[str, tuple[Trajectory, StateDiffResult | None]] = field(default_factory=dict)
    """episode id -> its trajectory and the state diff its reward came from (the scorer reuses it)."""

    def judge_setup(self) -> JudgeSetup:
        return JudgeSetup(JudgeContent.from_environment(self.env), self.tools)


def cworld_task(tasks: str | None = None, mode: str = "synthesized", policy: str = "default", access: str = "full",
                seed: int = 0, max_turns: int | None = None, out: str | None = None,
                system_prompt: str = SYSTEM_PROMPT) -> Task:
    """cworld tasks as an Inspect task (see `cworld.harness.inspect_task.cworld` for the arguments).

    Inspect counts tokens with tiktoken's o200k_base where a model gives no usage (its `mockllm` does);
    tiktoken reads it from litellm's package here instead of downloading it, so the task runs offline."""
    use_bundled_encodings()
    bridge = _bridge(tasks, mode, policy, access, seed, max_turns, out)
    samples = [Sample(input=task_text(t, mode), id=t.id, metadata={"task_id": t.id}) for t in bridge.tasks.values()]
    return Task(dataset=MemoryDataset(samples, name=Path(tasks).stem if tasks else "cworld"),
                solver=cworld_episode(bridge, system_prompt), scorer=cworld_judges(bridge),
                metadata={"cworld_run": str(bridge.store.folder), "mode": mode, "policy": policy, "access": access})


def _bridge(tasks_file: str | None, mode: str, policy: str, access: str, seed: int, max_turns: int | None,
            out: str | None) -> Bridge:
    from cworld.registry.tools import environment_tools

    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    env, ws = Environment.resolve(), Workspace.resolve()
    path = Path(tasks_file).expanduser() if tasks_file else ws.latest("tasks")
    loaded = read_jsonl(path, CworldTask)
    if not loaded:
        raise UsageError(f"{path} holds no tasks; create some with `cworld synth` or pass -T tasks=FILE")
    folder = Path(out).expanduser().resolve() if out else new_run_dir(ws, "inspect")
    ws.mark_latest("run", folder)
    store = TrajectoryStore(folder)
    store.open(resume=False)
    bridge = Bridge({t.id: t for t in loaded}, env, ws, environment_tools(env, ws).tasks_tools(loaded), store, mode, policy,
                    access, seed, max_turns)
    make(loaded[0], mode, policy, access=access, env=env, workspace=ws, tools=bridge.tools)  # checks the policy now
    return bridge


# --- the solver -------------------------------------------------------------------------------------
@solver
def cworld_episode(bridge: Bridge, system_prompt: str = SYSTEM_PROMPT) -> Any:
    """Play the sample's task as one cworld episode; the model's tool calls are the episode's actions."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        env = make(bridge.tasks[str(state.sample_id)], bridge.mode, bridge.policy, access=bridge.access,
                   max_turns=bridge.max_turns, env=bridge.env, workspace=bridge.workspace, tools=bridge.tools,
                   agent=f"inspect:{model}")
        obs, info = await env.areset(seed=bridge.seed + state.epoch - 1)
        state.store.set("cworld_episode_id", info["episode_id"])
        if system_prompt:
            state.messages.insert(0, ChatMessageSystem(content=system_prompt))
        names = ToolNames(reserved=frozenset({SEARCH_TOOL, SUBMIT_TOOL}))
        try:
            ended = None
            while ended is None:
                state.output = await model.generate(state.messages, names.offer(obs["tools"]))
                state.messages.append(state.output.message)
                obs, ended = await play(env, state.output.message, names, state.messages)
        except BaseException:
            if env.episode is not None and not env.episode.done:  # an Inspect limit or an error cut the episode
                await env.episode.controller.close()
            raise
        trajectory = ended["trajectory"]
        await bridge.store.append(trajectory)
        bridge.finished[trajectory.episode_id] = (trajectory, ended.get("state"))
        state.store.set("cworld_status", trajectory.status)
        return state

    return solve


async def play(env: Any, message: ChatMessageAssistant, names: ToolNames,
               messages: list[ChatMessage]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One assistant message as gym actions: each tool call is a step, no call at all is the final answer.
    Returns the last observation and, once the episode has ended, the gym's final info (its trajectory and
    the state diff behind the reward)."""
    if not message.tool_calls:
        _, _, _, _, info = await env.astep({"final": message.text})
        return {}, info
    obs: dict[str, Any] = {}
    ended: dict[str, Any] | None = None
    heard: list[str] = []
    for call in message.tool_calls:
        if ended is not None:
            messages.append(ChatMessageTool(content=ENDED, tool_call_id=call.id, function=call.function))
            continue
        obs, _, _, _, info = await env.astep(names.action(call))
        ended = info if "trajectory" in info else None
        messages.append(_tool_message(call, obs, ended is not None))
        heard += obs.get("user_messages") or []
    messages.extend(ChatMessageUser(content=text) for text in heard)
    return obs, ended


def _tool_message(call: ToolCall, obs: dict[str, Any], ended: bool) -> ChatMessageTool:
    result = obs.get("result")
    if result is None:
        text = "Submitted." if call.function == SUBMIT_TOOL else ENDED if ended else ""
        return ChatMessageTool(content=text, tool_call_id=call.id, function=call.function)
    error = ToolCallError("unknown", result["text"]) if result["is_error"] else None
    return ChatMessageTool(content=result["text"], tool_call_id=call.id, function=call.function, error=error)


class ToolNames(SharedNames):
    """The shared name table (`data_model.tool_names`), plus what Inspect needs: tools offered, calls read."""

    def offer(self, tools: list[dict[str, Any]]) -> list[ToolInfo]:
        """The episode's visible tools, then search and submit."""
        offered = [ToolInfo(name=self.name(t["id"]), description=t["description"] or t["id"],
                            parameters=_params(t["input_schema"])) for t in tools]
        return [*offered, SEARCH_INFO, SUBMIT_INFO]

    def action(self, call: ToolCall) -> dict[str, Any]:
        arguments = dict(call.arguments) if call.parse_error is None else {}
        if call.function == SUBMIT_TOOL:
            return {"final": str(arguments.get("answer", ""))}
        if call.function == SEARCH_TOOL:
            k = arguments.get("k", 5)
            return {"search": str(arguments.get("query", "")), "k": k if isinstance(k, int) else 5}
        return {"tool": self.tool_id(call.function), "arguments": arguments}


def _params(schema: dict[str, Any] | None) -> ToolParams:
    """Inspect's parameter model for the schema; a schema it cannot hold is offered open (the episode still
    validates every call against the real schema)."""
    try:
        return ToolParams.model_validate({"type": "object", **(schema or {})})
    except ValidationError:
        return ToolParams(additionalProperties=True)


SEARCH_INFO = ToolInfo(name=SEARCH_TOOL, description=(
    "Search the tool registry for tools that can do something; returns tool names, descriptions and "
    "parameters. Found tools become callable."), parameters=ToolParams.model_validate({
        "type": "object", "required": ["query"], "properties": {
            "query": {"type": "string", "description": "what the tool should do, in a few words"},
            "k": {"type": "integer", "description": "how many tools to return (1-20)"}}}))
SUBMIT_INFO = ToolInfo(name=SUBMIT_TOOL, description="Give your final answer to the user; this ends the task.",
                       parameters=ToolParams.model_validate({
                           "type": "object", "required": ["answer"],
                           "properties": {"answer": {"type": "string", "description": "the final answer"}}}))


# --- the scorer -------------------------------------------------------------------------------------
@scorer(metrics={key: [mean(), stderr()] for key in VALUE_KEYS})
def cworld_judges(bridge: Bridge) -> Any:
    """cworld's verifiable judges on the sample's trajectory (from memory, else from the run folder)."""
    setup = bridge.judge_setup()

    async def score(state: TaskState, target: Target) -> Score:
        episode_id = state.store.get("cworld_episode_id")
        trajectory, diff = bridge.finished.pop(episode_id, None) or (_stored(bridge.store, episode_id), None)
        if trajectory is None:
            raise UsageError(f"no trajectory for episode {episode_id} in {bridge.store.folder}")
        # the reward's state diff, not computed again; CPU work off the event loop, as `cworld serve` does
        judged = await asyncio.to_thread(score_offline, trajectory, setup, diff)
        value = {"state_success": judged.metrics.get("state_success"),
                 "constraints": judged.metrics.get("constraints"), "overall": judged.overall,
                 "success": None if judged.success is None else float(judged.success)}
        return Score(value={k: _known(v) for k, v in value.items()}, answer=trajectory.final_answer,
                     explanation=_explain(trajectory, judged.constraints),
                     metadata={"episode_id": trajectory.episode_id, "status": trajectory.status,
                               "run": str(bridge.store.folder), "metrics": judged.metrics,
                               "constraints": judged.constraints, "overall_basis": judged.overall_basis})

    return score


def _stored(store: TrajectoryStore, episode_id: str | None) -> Trajectory | None:
    return next((t for t in store if t.episode_id == episode_id), None)


def _known(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _explain(trajectory: Trajectory, constraints: dict[str, bool | None]) -> str:
    calls = sum(1 for s in trajectory.steps if s.kind == "tool")
    kept = [v for v in constraints.values() if v is not None]
    return (f"{trajectory.status} after {calls} tool call(s); constraints kept {sum(kept)}/{len(kept)}; "
            f"trajectory {trajectory.episode_id}")
