"""`make_agent(name, ...)`: `scripted:*` names a scripted agent (privileged: it follows the gold plan),
`heuristic:*` a rule-based agent that plans from the request alone, anything else an LLM model string.

The agent's label (its name on trajectories, in episode ids and in the fault-timing stream) is the name,
plus the access mode and style when they differ from the defaults: `openai/gpt-4o` and
`openai/gpt-4o[react,full]` are different agents, so their runs never resume into each other.
"""

from __future__ import annotations

from cworld.agents.base import Agent
from cworld.agents.heuristic import PREFIX as HEURISTIC_PREFIX
from cworld.agents.heuristic import HeuristicAgent, heuristic_abilities
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


def is_heuristic(name: str) -> bool:
    return name.startswith(HEURISTIC_PREFIX)


def is_rule_based(name: str) -> bool:
    """No model behind it (scripted or heuristic): no gateway, and the `full` tool list by default."""
    return is_scripted(name) or is_heuristic(name)


def is_privileged(name: str) -> bool:
    """Whether the agent named reads the task's answer key (gold plan, hints): the scripted ones do."""
    return is_scripted(name)


def check_agent_name(name: str) -> None:
    """A one-line `UsageError` for a scripted or heuristic name that names no agent."""
    if is_scripted(name):
        scripted_skills(name)
    elif is_heuristic(name):
        heuristic_abilities(name)


def default_access(name: str) -> str:
    return DEFAULT_SCRIPTED_ACCESS if is_rule_based(name) else DEFAULT_LLM_ACCESS


def agent_label(name: str, access: str | None = None, style: str | None = None) -> str:
    chosen = AccessMode.parse(access or default_access(name)).name
    extras = []
    if not is_rule_based(name) and (style or DEFAULT_STYLE) != DEFAULT_STYLE:
        extras.append(style or DEFAULT_STYLE)
    if chosen != default_access(name):
        extras.append(chosen)
    return f"{name}[{','.join(extras)}]" if extras else name


def make_agent(name: str, *, access: str | None = None, style: str | None = None, gateway: Gateway | None = None,
               workspace: Workspace | None = None, concurrency: int = 8) -> Agent:
    """A fresh agent for `name`; LLM agents share `gateway` (one per run: cache, usage, rate limits). A model
    the config does not list runs with the agent role's settings (`ModelsConfig.for_model`)."""
    if not name or not name.strip():
        raise UsageError("empty agent name; use scripted:oracle, heuristic:careful or a model string such as "
                         "openai/gpt-4o-mini")
    label = agent_label(name, access, style)
    if is_scripted(name):
        return ScriptedAgent(label, scripted_skills(name))
    if is_heuristic(name):
        return HeuristicAgent(label, heuristic_abilities(name))
    chosen_style = style or DEFAULT_STYLE
    if chosen_style not in STYLES:
        raise UsageError(f"unknown agent style {chosen_style!r}; use one of {', '.join(STYLES)}")
    gateway = gateway or Gateway.from_workspace(workspace or Workspace.resolve())
    config = gateway.models.for_model("agent", name)
    if not any(c.model == name for c in gateway.models.for_role("agent")):
        config = config.model_copy(update={"max_concurrency": max(config.max_concurrency, concurrency)})
    return LLMAgent(config, gateway, style=chosen_style, name=label)  # type: ignore[arg-type]
