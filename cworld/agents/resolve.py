"""`make_agent(name, ...)`: `scripted:*` names a scripted agent, anything else an LLM model string.

The agent's label (its name on trajectories, in episode ids and in the fault-timing stream) is the name,
plus the access mode and style when they differ from the defaults: `openai/gpt-4o` and
`openai/gpt-4o[react,full]` are different agents, so their runs never resume into each other.
"""

from __future__ import annotations

from cworld.agents.base import Agent
from cworld.agents.llm import STYLES, LLMAgent
from cworld.agents.scripted import PREFIX, ScriptedAgent, scripted_skills
from cworld.agents.toolbox import AccessMode
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.llm import Gateway

DEFAULT_LLM_ACCESS = "search"
"""The paper's open-world setting: the agent finds its tools through the retrieval index."""
DEFAULT_SCRIPTED_ACCESS = "full"
DEFAULT_STYLE = "planner"


def is_scripted(name: str) -> bool:
    return name.startswith(PREFIX)


def default_access(name: str) -> str:
    return DEFAULT_SCRIPTED_ACCESS if is_scripted(name) else DEFAULT_LLM_ACCESS


def agent_label(name: str, access: str | None = None, style: str | None = None) -> str:
    chosen = AccessMode.parse(access or default_access(name)).name
    extras = []
    if not is_scripted(name) and (style or DEFAULT_STYLE) != DEFAULT_STYLE:
        extras.append(style or DEFAULT_STYLE)
    if chosen != default_access(name):
        extras.append(chosen)
    return f"{name}[{','.join(extras)}]" if extras else name


def make_agent(name: str, *, access: str | None = None, style: str | None = None, gateway: Gateway | None = None,
               workspace: Workspace | None = None, concurrency: int = 8) -> Agent:
    """A fresh agent for `name`; LLM agents share `gateway` (one per run: cache, usage, rate limits)."""
    if not name or not name.strip():
        raise UsageError("empty agent name; use scripted:oracle or a model string such as openai/gpt-4o-mini")
    label = agent_label(name, access, style)
    if is_scripted(name):
        return ScriptedAgent(label, scripted_skills(name))
    chosen_style = style or DEFAULT_STYLE
    if chosen_style not in STYLES:
        raise UsageError(f"unknown agent style {chosen_style!r}; use one of {', '.join(STYLES)}")
    gateway = gateway or Gateway.from_workspace(workspace or Workspace.resolve())
    config = gateway.resolve("agent", name)
    if not any(c.model == name for c in gateway.models.for_role("agent")):
        config = config.model_copy(update={"max_concurrency": max(config.max_concurrency, concurrency)})
    return LLMAgent(config, gateway, style=chosen_style, name=label)  # type: ignore[arg-type]
