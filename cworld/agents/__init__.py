"""Agents: the LLM planner–actor / ReAct agent and the scripted baselines, behind one `act` contract.

    agent = make_agent("scripted:oracle")               # or "heuristic:careful", "openai/gpt-4o-mini", "mock/NAME"
    await agent.reset(task, Toolbox(tools, task, "full"), seed=0)
    action = await agent.act(Observation(turn=1))       # a tool call, a search, a message or the final answer
"""

from cworld.agents.base import Action, Agent, Observation
from cworld.agents.heuristic import Abilities, HeuristicAgent, heuristic_abilities
from cworld.agents.llm import LLMAgent
from cworld.agents.references import UnresolvedReference, referenced_steps
from cworld.agents.references import resolve as resolve_references
from cworld.agents.resolve import (
    agent_label,
    check_agent_name,
    default_access,
    is_heuristic,
    is_privileged,
    is_rule_based,
    is_scripted,
    make_agent,
)
from cworld.agents.scripted import ScriptedAgent, Skills, scripted_skills
from cworld.agents.search import BM25Search, ToolSearch, default_search
from cworld.agents.toolbox import SEARCH_TOOL, AccessMode, Toolbox

__all__ = [
    "SEARCH_TOOL",
    "Abilities",
    "AccessMode",
    "Action",
    "Agent",
    "BM25Search",
    "HeuristicAgent",
    "LLMAgent",
    "Observation",
    "ScriptedAgent",
    "Skills",
    "ToolSearch",
    "Toolbox",
    "UnresolvedReference",
    "agent_label",
    "check_agent_name",
    "default_access",
    "default_search",
    "heuristic_abilities",
    "is_heuristic",
    "is_privileged",
    "is_rule_based",
    "is_scripted",
    "make_agent",
    "referenced_steps",
    "resolve_references",
    "scripted_skills",
]
