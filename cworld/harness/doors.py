"""What the trainer doors (verifiers, OpenEnv) share: one `EpisodeService` over a tasks file, and the
episode's tools as OpenAI-style function tools.

Both doors hold one service per process, as `cworld serve` does: the episodes run through
`cworld.rollout.driver.EpisodeDriver` (the gym's machinery), every ended episode goes to the run folder's
`trajectories.jsonl` by the `TrajectoryStore` of `cworld run`, and the reward is the gym's with cworld's
verifiable judges beside it (`score_offline`). One service per (tasks, mode, policy, access, max_turns,
run) is kept, so a trainer that builds the environment many times writes to one run folder.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cworld.agents.prompt import context_block
from cworld.agents.prompt import task_text as prompt_task_text
from cworld.agents.toolbox import AccessMode
from cworld.data_model import Task, read_jsonl
from cworld.data_model.tool_names import ToolNames
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.rollout.user_context import user_context
from cworld.serve.episodes import EpisodeDefaults, EpisodeService

MODES = ("live", "synthesized", "hybrid")
SEARCH_TOOL, SUBMIT_TOOL = "search_tools", "submit"
SYSTEM_PROMPT = ("You act for the user with the tools provided. Call tools to do what the user asks; when done, "
                 "call submit with your final answer to the user (or reply without a tool call).")


@dataclass(frozen=True)
class DoorConfig:
    """Which episodes a door serves and where their trajectories go."""

    tasks: str | None = None
    mode: str = "synthesized"
    policy: str = "default"
    access: str = "full"
    max_turns: int | None = None
    out: str | None = None
    agent: str = "door"
    run_prefix: str = "door"

    def check(self) -> None:
        if self.mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}; got {self.mode!r}")
        AccessMode.parse(self.access)
        if self.max_turns is not None and self.max_turns < 1:
            raise UsageError(f"max_turns must be at least 1, got {self.max_turns}")


_SERVICES: dict[tuple[Any, ...], EpisodeService] = {}


def episode_service(config: DoorConfig, *, env: Environment | None = None,
                    workspace: Workspace | None = None) -> EpisodeService:
    """The process's service for `config` (built once): tasks loaded, policy checked, run folder made."""
    config.check()
    ws, chosen = workspace or Workspace.resolve(), env or Environment.resolve()
    key = (config, str(ws.root), str(chosen.root))
    if key not in _SERVICES:
        _SERVICES[key] = _build(config, chosen, ws)
    return _SERVICES[key]


def _build(config: DoorConfig, env: Environment, ws: Workspace) -> EpisodeService:
    from cworld.config import serving_failure_policy
    from cworld.judges import JudgeContent, JudgeSetup
    from cworld.registry.tools import environment_tools
    from cworld.rollout import RolloutContext

    path = Path(config.tasks).expanduser() if config.tasks else ws.latest("tasks")
    tasks = read_jsonl(path, Task)
    if not tasks:
        raise UsageError(f"{path} holds no tasks; create some with `cworld synth` or pass a tasks file")
    rollout = RolloutContext(env, ws, environment_tools(env, ws).tasks_tools(tasks), max_turns=config.max_turns,
                             on_model_failure=serving_failure_policy(ws.root))
    rollout.policy(config.policy)
    judges = JudgeSetup(JudgeContent.from_environment(env), tools=rollout.tools)
    judges.offline_reason = "the trainer doors score with the verifiable judges (cworld judge RUN for the LLM judges)"
    defaults = EpisodeDefaults(mode=config.mode, policy=config.policy, access=config.access, agent=config.agent)
    return EpisodeService(rollout, tasks, _run_folder(ws, config), judges=judges, defaults=defaults)


def with_run_folder(config: DoorConfig, workspace: Workspace | None = None) -> DoorConfig:
    """`config` naming its run folder: a new one of the workspace when it names none, so every process that
    serves these episodes (a trainer's workers) appends to one folder."""
    if config.out:
        return config
    return replace(config, out=str(_run_folder(workspace or Workspace.resolve(), config)))


def _run_folder(ws: Workspace, config: DoorConfig) -> Path:
    if config.out:
        folder = Path(config.out).expanduser().resolve()
        ws.mark_latest("run", folder)
        return folder
    return new_run_dir(ws, config.run_prefix)


def new_run_dir(ws: Workspace, prefix: str) -> Path:
    """`runs/<prefix>-<time>`, with a suffix when a run of the same door started in the same second."""
    stamp = time.strftime(f"{prefix}-%Y%m%d-%H%M%S")
    name, n = stamp, 1
    while (ws.root / "runs" / name).exists():
        n += 1
        name = f"{stamp}-{n}"
    return ws.new_run_dir(name)


def task_text(task: Task, mode: str = "live") -> str:
    """The request as the user states it (the query, the constraints stated up front), then the context an LLM
    agent's system prompt carries: the world's date and time and who the user is, from the task's seed (a
    harness's model gets only this text, so it must not resolve "next Friday" against its training cut-off)."""
    return prompt_task_text(task) + "\n\n" + context_block(user_context(task, mode, None))


# --- the episode's tools as OpenAI function tools ------------------------------------------------------
SEARCH_FUNCTION = {"type": "function", "function": {
    "name": SEARCH_TOOL,
    "description": ("Search the tool registry for tools that can do something; returns tool names, descriptions "
                    "and parameters. Found tools become callable."),
    "parameters": {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "what the tool should do, in a few words"},
        "k": {"type": "integer", "description": "how many tools to return (1-20)"}}}}}
SUBMIT_FUNCTION = {"type": "function", "function": {
    "name": SUBMIT_TOOL, "description": "Give your final answer to the user; this ends the task.",
    "parameters": {"type": "object", "required": ["answer"],
                   "properties": {"answer": {"type": "string", "description": "the final answer"}}}}}


@dataclass
class ChatTools(ToolNames):
    """The shared name table (`data_model.tool_names`) for a chat model: tools offered, calls read back."""

    reserved: frozenset[str] = frozenset({SEARCH_TOOL, SUBMIT_TOOL})

    def offer(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The episode's visible tools (an observation's `tools`) with their schemas, then search and submit."""
        offered = [{"type": "function", "function": {
            "name": self.name(t["id"]), "description": t["description"] or t["id"],
            "parameters": {"type": "object", **(t["input_schema"] or {})}}} for t in tools]
        return [*offered, SEARCH_FUNCTION, SUBMIT_FUNCTION]

    def action(self, name: str, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """One tool call as a gym action. Arguments that are not a JSON object reach the episode as `{}`
        (it answers the schema error, as in `cworld run`)."""
        args = _arguments(arguments)
        if name == SUBMIT_TOOL:
            return {"final": str(args.get("answer", ""))}
        if name == SEARCH_TOOL:
            k = args.get("k", 5)
            return {"search": str(args.get("query", "")), "k": k if isinstance(k, int) else 5}
        return {"tool": self.tool_id(name), "arguments": args}


def _arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
