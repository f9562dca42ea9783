"""The LLM engine: a model predicts each response from the card, the tool, the session and examples.

Every call goes through `cworld.llm` with role `engine`, temperature 0 and a seed derived from the
session's seed and digest, so the gateway's cache key covers (model, tool, canonical arguments, session):
a rerun is identical and free. The model answers in a JSON envelope; the result must validate against
the tool's output schema (or the card's pattern). An invalid answer is repaired (the problem is shown to
the model), then retried afresh, then the schema engine answers instead. An answer cut at the output cap
(`finish_reason` "length") is never repaired: it is asked again with twice the cap (up to a limit), then for
a shorter page, before the fallback (`settings.py` holds these budgets). Every fallback is counted in
`stats` and visible in the result's meta (`fallback: true`, `fallback_reason`). A pure tool (a stateless
sandbox server's) is computed by its implementation instead (`engine/pure.py`); every other answer is marked
`meta.simulated`.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import CategoryCard
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.engine.llm.history import condense
from cworld.engine.llm.prompts import (
    PromptTemplate,
    bounded,
    card_text,
    data_json,
    demonstrations_text,
    envelope_schema,
    envelope_text,
    escape_data,
    tool_text,
)
from cworld.engine.llm.settings import LLMEngineSettings
from cworld.engine.protocol import SessionLog
from cworld.engine.pure import mark_simulated, pure_result
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.patterns import ResponsePattern, response_pattern
from cworld.engine.world.changes import EntityChanges
from cworld.engine.world.task import task_summary
from cworld.errors import ModelError
from cworld.llm import Completion, Gateway, extract_json
from cworld.schemas.validation import validation_error
from cworld.seeding import derive_seed

log = logging.getLogger("cworld.engine")
ResponseFormat = Literal["auto", "schema", "json", "none"]


@dataclass
class EngineStats:
    """What the engine did over its lifetime: how often the model was right, repaired, or replaced."""

    calls: int = 0
    computed: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    valid_first_try: int = 0
    repaired: int = 0
    retried: int = 0
    #: answers cut at the output cap, each asked again longer (or for a shorter page)
    cut: int = 0
    fallbacks: int = 0
    fallback_reasons: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in vars(self).items() if k != "fallback_reasons"},
                "fallback_reasons": dict(self.fallback_reasons)}


@dataclass
class _Attempt:
    result: ToolResult | None = None
    problem: str = "no answer"
    model: str = ""
    cached: bool = False
    #: the last answer was cut at the output cap even after asking longer and shorter
    cut: bool = False


class LLMEngine:
    name = "llm"

    def __init__(
        self,
        cards: dict[str, CategoryCard],
        gateway: Gateway,
        *,
        cards_dir: Path,
        tools: Iterable[ToolSpec] = (),
        max_repairs: int = 1,
        retries: int = 1,
        budget_tokens: int | None = None,
        response_format: ResponseFormat = "auto",
        max_tokens: int | None = None,
        world: Any = None,
        settings: LLMEngineSettings | None = None,
    ) -> None:
        """Raises ConfigError (set CWORLD_ENGINE_MODEL ...) when no model serves the `engine` role. `settings`
        holds the budgets (the workspace's, `load_engine_settings`); `budget_tokens` (history) and
        `max_tokens` (the first cap) override theirs."""
        self.gateway = gateway
        self.model = gateway.resolve("engine")
        self.index = CardIndex(cards)
        self.template = PromptTemplate.load(cards_dir)
        #: The world the model writes answers for (a `RulesEngine`): it decides existence, errors and effects.
        self.world = world
        self.fallback = world if world is not None else SchemaEngine(cards, tools)
        self.max_repairs, self.retries = max_repairs, retries
        overrides = {"history_tokens": budget_tokens, "max_tokens": max_tokens}
        base = settings or LLMEngineSettings()
        merged = {**base.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
        merged["max_tokens_limit"] = max(merged["max_tokens_limit"], merged["max_tokens"])
        self.settings = LLMEngineSettings.model_validate(merged)
        self.response_format = response_format
        self.stats = EngineStats()

    def register(self, tools: Iterable[ToolSpec]) -> None:
        self.fallback.register(tools)

    def end_state(self, session: SessionLog) -> dict[str, Any] | None:
        """The world's end state (the state the grader diffs) when a world decides this engine's effects."""
        return self.world.end_state(session) if self.world is not None else None

    def world_state(self, session: SessionLog) -> dict[str, Any]:
        """The world as the log tells it, rebuilt by the schema engine (which adopts the model's answers)."""
        return self.fallback.world_state(session)

    def world_changes(self, session: SessionLog) -> list[EntityChanges]:
        """What the log's writes changed, replayed through the schema engine (it adopts the model's answers)."""
        return self.fallback.world_changes(session)

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        """A pure tool's answer is computed, the model never asked; any other answer is a simulation."""
        self.stats.calls += 1
        computed = pure_result(tool, arguments)
        if computed is not None:
            self.stats.computed += 1
            return computed
        result = await self._simulate(tool, arguments, session)
        return result if result.meta.get("rule") or result.meta.get("world") else mark_simulated(result)

    async def _simulate(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        self.fallback.register([tool])
        problem = validation_error(tool.input_schema, arguments) if tool.input_schema else None
        if problem:  # the schema decides this one; no need to ask a model
            message = f"invalid_args: {tool.name}: {problem}. Check the tool's input schema and call again."
            return ToolResult.error("invalid_args", message, source="engine", engine=self.name)
        decided = self._world_answer(tool, arguments, session)
        if decided is not None and decided.is_error:
            return decided  # the world decides errors; the model never turns a refusal into a success
        card = self.index.card_for(tool)
        op, entity = operation_kind(tool), entity_for(tool, card)
        pattern = response_pattern(tool, card, op, entity)
        messages = self._messages(tool, arguments, session, card, op, pattern)
        if decided is not None:
            return await self._worded(tool, arguments, session, messages, pattern, decided, card.page_size)
        last = _Attempt()
        for attempt in range(self.retries + 1):
            try:
                last = await self._converse(messages, pattern, self._seed(tool, session, attempt), card.page_size)
            except ModelError as exc:
                return await self._fall_back(tool, arguments, session, f"model error: {exc}")
            if last.result is not None:
                self.stats.retried += attempt > 0
                last.result.meta.update(attempts=attempt + 1, model=last.model, cached=last.cached)
                return last.result
            if last.cut:
                break  # longer and shorter were tried: another seed would be cut the same way
        why = f"cut: {last.problem}" if last.cut else f"invalid response: {last.problem}"
        return await self._fall_back(tool, arguments, session, why)

    def _world_answer(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult | None:
        """The world's answer when a rule covers the tool (it has run its effects already); else None."""
        if self.world is None:
            return None
        answer: ToolResult = self.world.respond_sync(tool, arguments, session)
        return None if answer.meta.get("simulated") else answer

    async def _worded(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog,
                      messages: list[dict[str, Any]], pattern: ResponsePattern, decided: ToolResult,
                      page_size: int) -> ToolResult:
        """The model writes the answer around the world's facts: every value the world states is kept (the
        world's keys win), the model adds what the world does not hold. A model that fails, or whose answer
        does not validate with the facts in, leaves the world's own answer."""
        facts = decided.structured_content or {}
        note = ("The service's records determine this call's outcome: it succeeded with these facts. Answer with "
                'status "ok", keep every value below exactly, and add only what it lacks:\n' + data_json(facts))
        try:
            attempt = await self._converse([*messages, {"role": "user", "content": note}], pattern,
                                           self._seed(tool, session, 0), page_size)
        except ModelError as exc:
            return await self._fall_back_to(decided, f"model error: {exc}")
        model = attempt.result.structured_content if attempt.result is not None else None
        if not isinstance(model, dict) or attempt.result is None or attempt.result.is_error:
            return await self._fall_back_to(decided, f"invalid response: {attempt.problem or 'not an ok answer'}")
        merged = {**model, **facts}
        if pattern.kind != "text" and validation_error(pattern.schema, merged) is not None:
            return await self._fall_back_to(decided, "invalid response: the worded answer broke the schema")
        attempt.result.structured_content = merged
        attempt.result.content = [{"type": "text", "text": json.dumps(merged, ensure_ascii=False)}]
        attempt.result.meta.update(attempts=1, model=attempt.model, cached=attempt.cached, world=decided.meta.get("rule"))
        return attempt.result

    async def _fall_back_to(self, decided: ToolResult, reason: str) -> ToolResult:
        self.stats.fallbacks += 1
        self.stats.fallback_reasons[reason.split(":", 1)[0]] += 1
        decided.meta.update(fallback=True, fallback_reason=reason[:300], requested_engine=self.name)
        return decided

    # --- one conversation: ask, then repair; a cut answer is asked again longer or shorter ----------
    async def _converse(self, messages: list[dict[str, Any]], pattern: ResponsePattern, seed: int,
                        page_size: int) -> _Attempt:
        convo, attempt = list(messages), _Attempt()
        budget = _CutBudget(self.settings, page_size)
        repair = 0
        while True:
            completion = await self._ask(convo, pattern, seed, budget.cap)
            attempt = _Attempt(model=completion.model, cached=completion.cached)
            if completion.finish_reason == "length":  # never repaired at the length that cut it
                self.stats.cut += 1
                attempt.cut, attempt.problem = True, f"the answer was cut at {budget.cap} output tokens"
                if not budget.next():
                    return attempt
                convo = [*messages, *budget.note()]
                continue
            attempt.result, attempt.problem = parse_envelope(completion.text, pattern)
            if attempt.result is not None:
                self.stats.valid_first_try += repair == 0 and budget.asks == 0
                self.stats.repaired += repair > 0
                attempt.result.meta.update(source="engine", engine=self.name, repairs=repair, max_tokens=budget.cap)
                return attempt
            if repair >= self.max_repairs:
                return attempt
            repair += 1
            convo = [*convo, completion.as_message(), {"role": "user", "content": _repair_prompt(attempt.problem)}]

    async def _ask(self, convo: list[dict[str, Any]], pattern: ResponsePattern, seed: int, cap: int) -> Completion:
        completion = await self.gateway.complete(
            "engine", convo, temperature=0.0, seed=seed, max_tokens=cap,
            response_format=self._format(pattern), metadata={"purpose": "world-engine"},
        )  # fmt: skip
        self.stats.model_calls += 1
        self.stats.cache_hits += completion.cached
        return completion

    async def _fall_back(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog, reason: str) -> ToolResult:
        self.stats.fallbacks += 1
        self.stats.fallback_reasons[reason.split(":", 1)[0]] += 1
        log.info("engine fallback for %s: %s", tool.id, reason)
        result = await self.fallback.respond(tool, arguments, session)
        result.meta.update(fallback=True, fallback_reason=reason[:300], requested_engine=self.name)
        return result

    # --- the request --------------------------------------------------------------------------------
    def _messages(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog, card: CategoryCard,
                  op: str, pattern: ResponsePattern) -> list[dict[str, Any]]:
        condensed = condense(session, arguments, self.settings.history_tokens, self.settings.result_chars)
        entity = entity_for(tool, card)
        values = {
            "card": card_text(card, op, entity), "tool": tool_text(tool), "operation": op,
            "response_schema": _schema_text(pattern), "envelope": envelope_text(),
            "demonstrations": demonstrations_text(card, self.settings.demonstrations), "session": escape_data(_with_task(session, tool, condensed.text)),
            "session_note": condensed.note, "arguments": data_json(arguments),
        }
        return self.template.render(values)

    def _seed(self, tool: ToolSpec, session: SessionLog, attempt: int) -> int:
        """Part of the request, so of the cache key: the session digest makes each history its own entry."""
        return derive_seed(session.seed, f"engine:{tool.id}:{session.digest()}:{attempt}") % (2**31)

    def _format(self, pattern: ResponsePattern) -> dict[str, Any] | None:
        mode = self.response_format
        if mode == "auto":
            mode = "schema" if self.model.api_base else ("json" if self.gateway.supports_json_mode(self.model.model) else "none")
        if mode == "schema":
            return {"type": "json_object", "schema": bounded(envelope_schema(pattern.schema))}
        return {"type": "json_object"} if mode == "json" else None


class _CutBudget:
    """What to ask after a cut answer: twice the cap up to the limit, then half the page at the limit."""

    def __init__(self, settings: LLMEngineSettings, page_size: int) -> None:
        self.settings, self.cap, self.asks = settings, settings.max_tokens, 0
        self.page: int | None = None
        self.page_size = page_size

    def next(self) -> bool:
        """Move to the next ask; False when the asks are spent."""
        if self.asks >= self.settings.cut_retries:
            return False
        self.asks += 1
        longer = self.settings.longer_cap(self.cap)
        if longer > self.cap:
            self.cap = longer
        else:
            self.page = max(1, (self.page or self.page_size) // 2)
        return True

    def note(self) -> list[dict[str, str]]:
        """The user turn asking for a shorter page, once the cap is at its limit; none before."""
        if self.page is None:
            return []
        text = (f"A full answer does not fit the output limit ({self.cap} tokens). Answer this call as a "
                f"service that pages its results: at most {self.page} items in any list, with totals and any "
                "has_more/next-page field telling honestly that more exist, and short strings.")
        return [{"role": "user", "content": text}]


def _with_task(session: SessionLog, tool: ToolSpec, calls: str) -> str:
    """The session block opens with the public task the episode serves (what the agent was told and the
    scenario's entities and relations, those of this tool's server first), so the model answers in the
    world the task describes; like the calls, it is data, never instructions. Never a plan or a hint."""
    if session.context is None:
        return calls
    summary = task_summary(session.context, app=tool.server)
    return f"The task the agent is working on and the world it presumes:\n{summary}\n\nCalls so far:\n{calls}"


def _schema_text(pattern: ResponsePattern) -> str:
    if pattern.kind == "text":
        return "a JSON string holding the service's plain-text answer, formatted like: " + json.dumps(pattern.template)
    return json.dumps(pattern.schema, ensure_ascii=False)


def _repair_prompt(problem: str) -> str:
    return f"Your reply could not be used: {problem}. Reply again with only the corrected JSON envelope."


def parse_envelope(text: str, pattern: ResponsePattern) -> tuple[ToolResult | None, str]:
    """(result, "") for a usable reply, else (None, the problem in one line, for the repair turn)."""
    try:
        reply = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    status = reply.get("status") if isinstance(reply, dict) else None
    if status not in ("ok", "error"):
        return None, 'the reply must be a JSON object with "status": "ok" or "error"'
    branch = envelope_schema(pattern.schema)["anyOf"][0 if status == "ok" else 1]
    problem = validation_error(branch, reply)
    if problem:
        return None, f"{problem[:300]}"
    if status == "error":
        return ToolResult.error(reply["error_class"], reply["message"]), ""
    result = reply["result"]
    if pattern.kind == "text":
        return ToolResult.ok(None, text=result), ""
    return ToolResult.ok(result if isinstance(result, dict) else {"result": result}), ""
