"""One trajectory -> one format-neutral conversation, as the agent lived it.

The conversation is what an LLM agent in cworld would have had in its context: the actor's system
prompt, the task (query and constraints), one assistant turn per action with its tool call, each
observation *after* the controller's interventions (a timeout the agent saw is a timeout here), and the
user's mid-episode messages where they arrived. Tool results are rendered the way `LLMAgent` shows them
(`ERROR (class): ...` for errors, found tools by function name for searches, the same length cut).

The system prompt ends with the context block an LLM agent is given (`agents/prompt.py`): the world's date
and time and who the user is, both from the task's seed (`rollout/user_context.py`), so an example that
resolves "next Friday" or "my manager" carries what it was resolved against. Scripted agents have no
prompt of their own; their trajectories get the LLM actor's prompt, context included, so every example in
one export reads alike. (A run with `--engine schema` told its agent the day the task states; the export
gives the seed's clock, which every other run uses.) Planner messages are not part of the actor's turns
and are left out.

An assistant turn whose call was the agent's own syntactic error (a tool it was not given, arguments
that break the schema) is kept, since the recovery that follows is the valuable part, but marked
`learn=False`: the `openai` format gives it `weight: 0`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cworld.agents.prompt import system_prompt, task_text
from cworld.agents.resolve import is_rule_based
from cworld.agents.toolbox import SEARCH_TOOL
from cworld.data_model import Step, ToolResult, ToolSpec, Trajectory
from cworld.data_model.tool_names import ToolNames
from cworld.judges.calls import classify_calls
from cworld.redact import Redactor
from cworld.rollout.user_context import user_context

Role = Literal["system", "user", "assistant", "tool"]
MAX_RESULT_CHARS = 6000
"""What `LLMAgent` keeps of one tool result (its `max_result_chars` default)."""
UNKNOWN_TOOL = "Not a tool of this environment: calls to it fail with not_found."
SEARCH_FUNCTION = {
    "description": "Search the tool registry for tools that can do something; returns tool names, "
    "descriptions and parameters. Found tools become callable.",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what the tool should do, in a few words"},
            "k": {"type": "integer", "description": "how many tools to return (1-20)", "default": 5},
        },
        "required": ["query"],
    },
}


@dataclass(frozen=True)
class Call:
    id: str
    tool: str
    """tool id (`server/name`, or `search_tools`)"""
    name: str
    """function name in the export (see `names.py`)"""
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    role: Role
    content: str = ""
    calls: tuple[Call, ...] = ()
    call_id: str = ""
    """tool turns: the id of the call this result answers"""
    name: str = ""
    """tool turns: the function name of that call"""
    outcome: str = ""
    """assistant turns with a call: its class (`cworld.judges.calls`: valid, syntactic_error, ...)"""
    is_error: bool = False

    @property
    def learn(self) -> bool:
        """False for the agent's own syntactic error: kept for context, not to be imitated."""
        return self.outcome != "syntactic_error"


@dataclass
class Conversation:
    episode_id: str
    task_id: str
    agent: str
    mode: str
    turns: list[Turn]
    tools: list[dict[str, Any]]
    """functions offered: {name, description, parameters}"""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def called(self) -> list[str]:
        return [c.name for t in self.turns for c in t.calls]

    def redacted(self, redactor: Redactor) -> Conversation:
        turns = [
            replace(
                t,
                content=redactor.text(t.content),
                calls=tuple(replace(c, arguments=redactor.value(c.arguments)) for c in t.calls),
            )
            for t in self.turns
        ]
        return Conversation(
            self.episode_id,
            self.task_id,
            self.agent,
            self.mode,
            turns,
            redactor.value(self.tools),
            redactor.value(self.meta),
        )


def offers_search(trajectory: Trajectory) -> bool:
    """Whether `search_tools` was on offer: a search happened, or an LLM agent ran in its default access."""
    if any(s.kind == "search" for s in trajectory.steps):
        return True
    label = trajectory.agent
    extras = label[label.index("[") + 1 : -1].split(",") if label.endswith("]") and "[" in label else []
    return not is_rule_based(label) and not any(e == "full" or e.startswith("rag-") for e in extras)


class ConversationBuilder:
    """Builds conversations that share one function-name table (so one export names tools one way)."""

    def __init__(
        self,
        catalog: Mapping[str, ToolSpec],
        names: ToolNames | None = None,
        max_result_chars: int = MAX_RESULT_CHARS,
    ) -> None:
        self.catalog = catalog
        self.names = names or ToolNames()
        self.max_result_chars = max_result_chars

    def build(self, trajectory: Trajectory) -> Conversation | None:
        """None when the trajectory does not record its task (there is no user message to write)."""
        if trajectory.task is None:
            return None
        search = offers_search(trajectory)
        context = user_context(trajectory.task, trajectory.mode, None)
        turns = [Turn("system", system_prompt(search, context)), Turn("user", task_text(trajectory.task))]
        turns += _Steps(self, trajectory).turns()
        tools = self._functions(trajectory, search)
        return Conversation(
            trajectory.episode_id,
            trajectory.task_id,
            trajectory.agent,
            trajectory.mode,
            turns,
            tools,
            {"status": trajectory.status, "seed": trajectory.seed, "policy": trajectory.policy},
        )

    # --- tools ----------------------------------------------------------------------------------
    def _functions(self, trajectory: Trajectory, search: bool) -> list[dict[str, Any]]:
        ids = dict.fromkeys(trajectory.task.tools if trajectory.task else [])
        for step in trajectory.steps:
            if step.tool_call is not None and step.tool_call.tool != SEARCH_TOOL:
                ids[step.tool_call.tool] = None
            ids.update(dict.fromkeys(_found_tools(step)))
        functions = [self._function(tool_id) for tool_id in sorted(ids)]
        if search:
            functions.append({"name": SEARCH_TOOL, **SEARCH_FUNCTION})
        return functions

    def _function(self, tool_id: str) -> dict[str, Any]:
        spec = self.catalog.get(tool_id)
        name = self.names.name(tool_id)
        if spec is None:
            return {
                "name": name,
                "description": UNKNOWN_TOOL,
                "parameters": {"type": "object", "properties": {}},
            }
        parameters = spec.input_schema or {"type": "object", "properties": {}}
        return {"name": name, "description": (spec.description or spec.name)[:1000], "parameters": parameters}

    # --- results --------------------------------------------------------------------------------
    def result_text(self, step: Step) -> str:
        result = step.observation or step.raw_result
        if result is None:
            return "(no result)"
        text = self._search_text(result) if step.kind == "search" else result.text
        if len(text) > self.max_result_chars:
            text = (
                text[: self.max_result_chars] + f"\n[cut by the agent at {self.max_result_chars} characters]"
            )
        if result.is_error:
            return f"ERROR ({result.error_class or 'error'}): {text}"
        return text or "(empty result)"

    def _search_text(self, result: ToolResult) -> str:
        tools = (result.structured_content or {}).get("tools", []) if not result.is_error else []
        if not tools:
            return result.text
        lines = [
            f"- {self.names.name(str(t['id']))}: {str(t.get('description', ''))[:200]}"
            for t in tools
            if t.get("id")
        ]
        return "Found these tools; they are callable now:\n" + "\n".join(lines)


class _Steps:
    """Walks a trajectory's steps into turns; a wait message is folded into the next assistant turn."""

    def __init__(self, builder: ConversationBuilder, trajectory: Trajectory) -> None:
        self.builder = builder
        self.steps = trajectory.steps
        self.outcomes = {c.step.index: c.outcome for c in classify_calls(trajectory, builder.catalog)}
        self.out: list[Turn] = []
        self.pending: list[str] = []
        self.ids: set[str] = set()

    def turns(self) -> list[Turn]:
        for step in self.steps:
            if step.kind == "message":
                self._hold(step.message)
            elif step.kind == "user":
                self._flush()
                self.out.append(Turn("user", step.message))
            elif step.kind == "final":
                self._hold(step.message)
                self._flush()
            elif step.tool_call is not None:
                self._call(step)
        self._flush()
        return self.out

    def _hold(self, text: str) -> None:
        if text.strip():
            self.pending.append(text.strip())

    def _flush(self) -> None:
        if self.pending:
            self.out.append(Turn("assistant", "\n\n".join(self.pending)))
            self.pending = []

    def _call(self, step: Step) -> None:
        assert step.tool_call is not None
        self._hold(step.message)
        call_id = self._unique(step.tool_call.id or f"call_{step.index}")
        name = self.builder.names.name(step.tool_call.tool)
        call = Call(call_id, step.tool_call.tool, name, dict(step.tool_call.arguments))
        self.out.append(
            Turn(
                "assistant",
                "\n\n".join(self.pending),
                calls=(call,),
                outcome=self.outcomes.get(step.index, "search" if step.kind == "search" else ""),
            )
        )
        self.pending = []
        result = step.observation or step.raw_result
        self.out.append(
            Turn(
                "tool",
                self.builder.result_text(step),
                call_id=call_id,
                name=name,
                is_error=bool(result and result.is_error),
            )
        )

    def _unique(self, call_id: str) -> str:
        chosen, n = call_id, 1
        while chosen in self.ids:
            n += 1
            chosen = f"{call_id}_{n}"
        self.ids.add(chosen)
        return chosen


def _found_tools(step: Step) -> list[str]:
    """Tool ids a search step returned (they became callable)."""
    if step.kind != "search" or step.observation is None or step.observation.is_error:
        return []
    body = step.observation.structured_content or {}
    return [str(t["id"]) for t in body.get("tools", []) or [] if isinstance(t, dict) and t.get("id")]


def arguments_json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=False, default=str)
