"""The LLM agent: an actor that calls tools (ReAct), optionally guided by a planner (paper §4).

Every model call goes through `cworld.llm` with role `agent`. The actor sees the tools its access mode
allows (`search`, `full`, `rag-K`, see `toolbox.py`) as functions; when the model asks for several
tools at once they are sent one per turn, in order. A user message that arrives meanwhile waits until
the batch is answered (chat formats require tool answers right after the call).

`style="planner"` adds the planner: a sub-goal graph before the first step, an update after every
step (complete/pending plus feedback), a revision when the user changes the requirements; the episode
ends when every sub-goal is complete, or after `max_inaction` turns in a row without a tool call.
`style="react"` is the plain loop: a reply without a tool call is the final answer.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from cworld.agents.base import Action, Observation
from cworld.agents.meter import Meter
from cworld.agents.planner import Planner
from cworld.agents.toolbox import SEARCH_TOOL, Toolbox
from cworld.config import ModelConfig
from cworld.data_model import Task, ToolResult, ToolSpec
from cworld.data_model.tool_names import ToolNames
from cworld.llm import Gateway, RequestedToolCall

Style = Literal["planner", "react"]
STYLES: tuple[str, ...] = ("planner", "react")
ACTOR_SYSTEM = (
    "You are a capable assistant that completes the user's task by calling tools, one careful step at a "
    "time. Read each tool result before the next step. If a call fails, decide whether to retry, fix the "
    "arguments, or use another tool. When the task is done, reply with the final answer and no tool call."
)
SEARCH_HINT = " Call search_tools to find tools; every tool it returns becomes callable."
MAX_DESCRIPTION = 1000


class LLMAgent:
    privileged = False
    """It is told the query and the constraints' descriptions, never the gold plan, sub-goals or hints."""

    def __init__(self, model: ModelConfig, gateway: Gateway, *, style: Style = "planner", name: str | None = None,
                 max_inaction: int = 3, max_result_chars: int = 6000) -> None:
        self.model, self.gateway, self.style = model, gateway, style
        self.name = name or model.model
        self.max_inaction, self.max_result_chars = max_inaction, max_result_chars

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        self.task, self.toolbox = task, toolbox
        self.meter = Meter(self.gateway, self.model, seed)
        self.planner = Planner(self.meter) if self.style == "planner" else None
        system = ACTOR_SYSTEM + (SEARCH_HINT if toolbox.offers_search else "")
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                               {"role": "user", "content": _task_text(task)}]
        self.queue: list[Action] = []
        self.held: list[str] = []
        self.log: list[str] = []
        self.names = ToolNames(reserved=frozenset({SEARCH_TOOL}))
        self.inaction = 0
        self.started = False

    async def act(self, observation: Observation) -> Action:
        self._observe(observation)
        self.held.extend(observation.user_messages)
        if self.queue:
            return self._emit(self.queue.pop(0), [])
        events: list[dict[str, Any]] = []
        if not self.started:
            self.started = True
            if self.planner is not None:
                events.append(await self.planner.decompose(self.task))
        if self.held:
            await self._deliver_user_messages(events, observation.turn)
        elif self.planner is not None and observation.result is not None:
            event, feedback = await self.planner.update(self.log, observation.turn)
            events.append(event)
            if self.planner.all_complete:
                return await self._final(events, "All sub-goals are complete. Reply now with the final answer.")
            if feedback:
                self.messages.append({"role": "user", "content": f"[planner] {feedback}"})
        return await self._actor_turn(events, observation.turn)

    # --- the actor ------------------------------------------------------------------------------
    async def _actor_turn(self, events: list[dict[str, Any]], turn: int) -> Action:
        completion = await self.meter.complete(self.messages, tools=self._tool_schemas() or None)
        self.messages.append(completion.as_message())
        if completion.tool_calls:
            self.inaction = 0
            self.queue = [self._to_action(c, completion.text) for c in completion.tool_calls]
            return self._emit(self.queue.pop(0), events)
        if self.planner is None or self.planner.all_complete:
            return self._emit(Action.final(completion.text, "completed"), events)
        self.inaction += 1
        if self.inaction >= self.max_inaction:
            events.append({"event": "stop", "turn": turn, "reason": "inaction", "pending": self._pending_ids()})
            return self._emit(Action.final(completion.text, "inaction"), events)
        nudge = "Not done yet; pending sub-goals: " + "; ".join(g.description for g in self.planner.pending[:3])
        self.messages.append({"role": "user", "content": f"[planner] {nudge}. Continue with a tool call."})
        events.append({"event": "feedback", "turn": turn, "feedback": nudge})
        return self._emit(Action.say(completion.text), events)

    async def _final(self, events: list[dict[str, Any]], instruction: str) -> Action:
        self.messages.append({"role": "user", "content": instruction})
        completion = await self.meter.complete(self.messages, tools=self._tool_schemas() or None,
                                               tool_choice="none" if self._tool_schemas() else None)
        self.messages.append(completion.as_message())
        events.append({"event": "stop", "reason": "all_complete"})
        return self._emit(Action.final(completion.text, "completed"), events)

    async def _deliver_user_messages(self, events: list[dict[str, Any]], turn: int) -> None:
        for message in self.held:
            self.messages.append({"role": "user", "content": message})
            if self.planner is not None:
                events.append(await self.planner.revise(message, turn))
        self.held = []

    def _emit(self, action: Action, events: list[dict[str, Any]]) -> Action:
        action.tokens = self.meter.take()
        action.planner_events = events
        return action

    # --- observations and tools -----------------------------------------------------------------
    def _observe(self, observation: Observation) -> None:
        if observation.call is None or observation.result is None:
            return
        result = observation.result
        text = self._search_text(result) if observation.call.tool == SEARCH_TOOL else result.text
        if len(text) > self.max_result_chars:
            text = text[: self.max_result_chars] + f"\n[cut by the agent at {self.max_result_chars} characters]"
        content = f"ERROR ({result.error_class or 'error'}): {text}" if result.is_error else text
        self.messages.append({"role": "tool", "tool_call_id": observation.call.id, "content": content})
        args = json.dumps(observation.call.arguments, ensure_ascii=False, default=str)[:200]
        self.log.append(f"turn {observation.turn - 1}: {observation.call.tool}({args}) -> {content[:300]}")

    def _search_text(self, result: ToolResult) -> str:
        """Found tools by the function names the model will call them with."""
        tools = (result.structured_content or {}).get("tools", []) if not result.is_error else []
        if not tools:
            return result.text
        lines = [f"- {self.names.name(str(t['id']))}: {str(t.get('description', ''))[:200]}" for t in tools if t.get("id")]
        return "Found these tools; they are callable now:\n" + "\n".join(lines)

    def _tool_schemas(self) -> list[dict[str, Any]]:
        schemas = [self._function(spec) for spec in self.toolbox.visible()]
        if self.toolbox.offers_search:
            schemas.append(_search_function())
        return schemas

    def _function(self, spec: ToolSpec) -> dict[str, Any]:
        name = self.names.name(spec.id)
        parameters = spec.input_schema or {"type": "object", "properties": {}}
        description = (spec.description or spec.name)[:MAX_DESCRIPTION]
        return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}

    def _to_action(self, call: RequestedToolCall, text: str) -> Action:
        if call.name == SEARCH_TOOL:
            k = call.arguments.get("k", 5)
            return Action.search(str(call.arguments.get("query", "")), int(k) if isinstance(k, int) else 5,
                                 call.id, text)
        tool_id = self.names.tool_id(call.name)
        return Action.call(tool_id, call.arguments if call.arguments_error is None else {}, call.id, text)

    def _pending_ids(self) -> list[str]:
        return [g.id for g in self.planner.pending] if self.planner is not None else []


def _search_function() -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": SEARCH_TOOL,
        "description": "Search the tool registry for tools that can do something; returns tool names, "
                       "descriptions and parameters. Found tools become callable.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "what the tool should do, in a few words"},
            "k": {"type": "integer", "description": "how many tools to return (1-20)", "default": 5},
        }, "required": ["query"]},
    }}


def _task_text(task: Task) -> str:
    if not task.constraints:
        return task.query
    return task.query + "\n\nConstraints:\n" + "\n".join(f"- {c.description}" for c in task.constraints)
