"""The LLM agent: an actor that calls tools (ReAct), optionally guided by a planner (paper §4).

Every model call goes through `cworld.llm` with role `agent`. The actor sees the tools its access mode
allows (`search`, `full`, `rag-K`, see `toolbox.py`) as functions; when the model asks for several
tools at once they are sent one per turn, in order. A user message that arrives meanwhile waits until
the batch is answered (chat formats require tool answers right after the call).

The system prompt holds a context block (`prompt.py`: the world's date and time, who the user is), and
each call is shown the conversation within the model's history budget (`history.py`). Arguments the model
did not write as a JSON object are not sent: the call is answered `invalid_args` with the parser's reason.

`style="planner"` adds the planner: a sub-goal graph before the first step, an update after every
step (complete, reopened, pending, plus feedback), a revision when the user changes the requirements.
When every sub-goal looks complete the actor is told so and decides: a reply without a tool call ends the
episode, a tool call goes on (a tool output that claims the task is done cannot end it). The episode also
ends after `max_inaction` turns in a row without a tool call. `style="react"` is the plain loop: a reply
without a tool call is the final answer. A model that fails the agent (prose where the planner needs
JSON, a request its provider refuses) ends the episode as `agent_error` (`failure.py`). A planner reply
that runs past its output budget on every attempt (`ReplyCut`) does not: a cut update leaves the statuses as
they were, a cut plan leaves the episode to the actor alone, and the planner event says so.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from cworld.agents.base import Action, Observation
from cworld.agents.failure import is_agent_failure
from cworld.agents.history import History, history_budget, token_counter
from cworld.agents.meter import Meter
from cworld.agents.planner import Planner
from cworld.agents.prompt import ACTOR_SYSTEM as ACTOR_SYSTEM  # re-exported: the SFT export's system prompt
from cworld.agents.prompt import SEARCH_HINT as SEARCH_HINT
from cworld.agents.prompt import context_block, system_prompt, task_text
from cworld.agents.toolbox import SEARCH_TOOL, Toolbox
from cworld.config import ModelConfig
from cworld.data_model import Task, ToolResult, ToolSpec
from cworld.data_model.tool_names import ToolNames
from cworld.errors import ModelError, ReplyCut
from cworld.llm import Gateway, RequestedToolCall

Style = Literal["planner", "react"]
STYLES: tuple[str, ...] = ("planner", "react")
MAX_DESCRIPTION = 1000
CUT_NOTE = ("[system] Your last reply was cut at its output budget of {budget} tokens. Keep replies short: one "
            "tool call with its arguments, or a final answer of a few sentences.")
ALL_COMPLETE = ("[planner] Every sub-goal looks complete. If the task is really done, reply with the final "
                "answer and no tool call; if anything is still missing, continue with a tool call.")


class LLMAgent:
    privileged = False
    """It is told the query and the constraints' descriptions, never the gold plan, sub-goals or hints."""

    def __init__(self, model: ModelConfig, gateway: Gateway, *, style: Style = "planner", name: str | None = None,
                 max_inaction: int = 3, max_result_chars: int = 6000) -> None:
        self.model, self.gateway, self.style = model, gateway, style
        self.name = name or model.model
        self.max_inaction, self.max_result_chars = max_inaction, max_result_chars
        self.budget = history_budget(model)

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        self.task, self.toolbox = task, toolbox
        self.meter = Meter(self.gateway, self.model, seed)
        self.planner = Planner(self.meter) if self.style == "planner" else None
        self.history = History(self.budget, token_counter(self.model.model))
        self.history.add({"role": "system", "content": system_prompt(toolbox.offers_search, None)})
        self.history.add({"role": "user", "content": task_text(task)})
        self.queue: list[Action] = []
        self.held: list[str] = []
        self.log: list[str] = []
        self.names = ToolNames(reserved=frozenset({SEARCH_TOOL}))
        self.inaction = 0
        self.started = False
        self._tools: tuple[tuple[str, ...], list[dict[str, Any]]] = ((), [])

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The whole conversation (each call is shown `history.view()`, the part within the budget)."""
        return self.history.messages

    async def act(self, observation: Observation) -> Action:
        events: list[dict[str, Any]] = []
        try:
            return await self._act(observation, events)
        except ModelError as exc:
            if not is_agent_failure(exc):
                raise
            events.append({"event": "stop", "turn": observation.turn, "reason": "agent_error", "error": str(exc)})
            return self._emit(Action.failed(str(exc)), events)

    async def _act(self, observation: Observation, events: list[dict[str, Any]]) -> Action:
        self._observe(observation)
        self.held.extend(observation.user_messages)
        if self.queue:
            return self._emit(self.queue.pop(0), events)
        if not self.started:
            self.started = True
            self._tell_context(observation)
            if self.planner is not None:
                events.append(await self._plan(self.planner))
        if self.held:
            await self._deliver_user_messages(events, observation.turn)
        elif self.planner is not None and observation.result is not None:
            event, feedback = await self.planner.update(self.log, observation.turn)
            events.append(event)
            if self.planner.all_complete:
                self.history.add({"role": "user", "content": ALL_COMPLETE})
            elif feedback:
                self.history.add({"role": "user", "content": f"[planner] {feedback}"})
        return await self._actor_turn(events, observation.turn)

    async def _plan(self, planner: Planner) -> dict[str, Any]:
        """The sub-goal graph; a plan the model could not finish within its budget leaves the actor alone
        (this episode runs as ReAct, and the event says why) instead of ending the episode unplayed."""
        try:
            return await planner.decompose(self.task)
        except ReplyCut as exc:
            self.planner = None
            return {"event": "plan", "cut": True, "error": str(exc), "subgoals": []}

    # --- the actor ------------------------------------------------------------------------------
    async def _actor_turn(self, events: list[dict[str, Any]], turn: int) -> Action:
        completion = await self.meter.complete(self.history.view(), tools=self._tool_schemas() or None)
        self.history.add(completion.as_message())
        cut = completion.finish_reason == "length"
        if cut:
            events.append({"event": "cut", "turn": turn, "budget": self.budget_tokens,
                           "tool_calls": len(completion.tool_calls)})
        if completion.tool_calls:
            self.inaction = 0
            self.queue = [self._to_action(c, completion.text, cut) for c in completion.tool_calls]
            return self._emit(self.queue.pop(0), events)
        if cut:
            return self._cut_text(completion.text, events, turn)
        if self.planner is None:
            return self._emit(Action.final(completion.text, "completed"), events)
        if self.planner.all_complete:
            events.append({"event": "stop", "turn": turn, "reason": "all_complete"})
            return self._emit(Action.final(completion.text, "completed"), events)
        self.inaction += 1
        if self.inaction >= self.max_inaction:
            events.append({"event": "stop", "turn": turn, "reason": "inaction", "pending": self._pending_ids()})
            return self._emit(Action.final(completion.text, "inaction"), events)
        nudge = "Not done yet; pending sub-goals: " + "; ".join(g.description for g in self.planner.pending[:3])
        self.history.add({"role": "user", "content": f"[planner] {nudge}. Continue with a tool call."})
        events.append({"event": "feedback", "turn": turn, "feedback": nudge})
        return self._emit(Action.say(completion.text), events)

    def _cut_text(self, text: str, events: list[dict[str, Any]], turn: int) -> Action:
        """A text reply cut at the budget is the agent's turn, marked truncated, never its final answer: the
        episode goes on, and `max_inaction` such turns in a row end it as inaction. (A cut tool call needs no
        note: its `invalid_args` answer says it was cut, and a note there would split the call from its answer.)"""
        self.history.add({"role": "user", "content": CUT_NOTE.format(budget=self.budget_tokens)})
        self.inaction += 1
        if self.inaction >= self.max_inaction:
            events.append({"event": "stop", "turn": turn, "reason": "inaction", "pending": self._pending_ids()})
            action = Action.final(text, "inaction")
        else:
            action = Action.say(text)
        action.truncated = True
        return self._emit(action, events)

    @property
    def budget_tokens(self) -> int | None:
        """The output budget of the actor's replies (the model entry's, else the agent role's)."""
        return self.gateway.budgeted("agent", self.model).max_tokens

    def _tell_context(self, observation: Observation) -> None:
        """The world's date and time and the user, into the system prompt (and the planner's), once."""
        if observation.context is None:
            return
        self.history.messages[0] = {"role": "system",
                                    "content": system_prompt(self.toolbox.offers_search, observation.context)}
        if self.planner is not None:
            self.planner.context = context_block(observation.context)

    async def _deliver_user_messages(self, events: list[dict[str, Any]], turn: int) -> None:
        for message in self.held:
            self.history.add({"role": "user", "content": message}, user=True)
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
        self.history.add({"role": "tool", "tool_call_id": observation.call.id, "content": content})
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
        """The callable tools as functions, rebuilt only when the callable set changed."""
        visible = self.toolbox.visible()
        key = tuple(spec.id for spec in visible)
        if key != self._tools[0] or not self._tools[1]:
            schemas = [self._function(spec) for spec in visible]
            if self.toolbox.offers_search:
                schemas.append(_search_function())
            self._tools = (key, schemas)
        return self._tools[1]

    def _function(self, spec: ToolSpec) -> dict[str, Any]:
        name = self.names.name(spec.id)
        parameters = spec.input_schema or {"type": "object", "properties": {}}
        description = (spec.description or spec.name)[:MAX_DESCRIPTION]
        return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}

    def _to_action(self, call: RequestedToolCall, text: str, cut: bool = False) -> Action:
        """The model's call as an action; arguments that are not a JSON object go as they are, never as `{}`,
        and the episode answers them `invalid_args` with the parser's reason (a reply cut at its budget says so)."""
        if call.arguments_error is not None:
            tool = SEARCH_TOOL if call.name == SEARCH_TOOL else self.names.tool_id(call.name)
            action = Action.call(tool, {}, call.id, text)
            reason = call.arguments_error
            if cut:
                reason = f"the reply was cut at its output budget ({self.budget_tokens} tokens) before the arguments ended ({reason})"
            action.arguments_error, action.raw_arguments, action.truncated = reason, call.raw_arguments, cut
            return action
        if call.name == SEARCH_TOOL:
            k = call.arguments.get("k", 5)
            action = Action.search(str(call.arguments.get("query", "")), int(k) if isinstance(k, int) else 5,
                                   call.id, text)
        else:
            action = Action.call(self.names.tool_id(call.name), call.arguments, call.id, text)
        action.truncated = cut
        return action

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
