"""Scripted agents (no LLM): an oracle that follows a task's gold plan, and graded variants.

The oracle has four skills, each of which one variant lacks:

- **retry**: transient errors (timeout, 503, network) are retried with back-off counted in turns, a rate
  limit is waited out for the `retry after` it names, a deprecated tool is replaced by an alternative
  (a tool with a similar name and a compatible schema, from the task's tools or a registry search), and
  an expired session is renewed by running the plan's login step again. `scripted:no-retry` gives up
  on the first error.
- **look**: an observation is checked before it is used (a pending status is asked again, a truncated
  or garbled payload is read again, a referenced field that is missing or garbled sends it back to the
  step that produced it, and an unexpected error makes it re-read its inputs). `scripted:no-look`
  takes every observation at face value.
- **replan**: a requirement the user adds mid-episode is folded in (a changed value is substituted in
  the steps still to run; answer constraints shape the final answer). `scripted:no-replan` ignores it.
- **precision**: `scripted:noisy-P` calls a plausible wrong tool of the same server with probability P
  at each step (a wrong write that succeeds damages the end state).

Their designed order under the `default` policy is oracle > noisy-0.1 > no-replan > no-look > no-retry
(docs/agents-and-runs.md explains why).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from cworld.agents.answer import compose_final
from cworld.agents.base import Action, Observation
from cworld.agents.observe import has_garble, payload, retry_after_turns, salvage, verdict
from cworld.agents.references import UnresolvedReference, lookup, referenced_steps, references, resolve
from cworld.agents.toolbox import Toolbox
from cworld.controller.alternatives import similar_tools
from cworld.controller.faults import is_login
from cworld.data_model import Constraint, PlanStep, Task, ToolResult, ToolSpec
from cworld.errors import UsageError
from cworld.seeding import derive_rng
from cworld.values import text_replaced

PREFIX = "scripted:"


@dataclass(frozen=True)
class Skills:
    retry: bool = True
    look: bool = True
    replan: bool = True
    noise: float = 0.0
    max_attempts: int = 10
    """Tries of one step before giving up (transient errors, pending results, re-logins): several faults
    may land on the same step, so this is generous."""
    max_looks: int = 3
    """Re-reads of a step's inputs before giving up."""
    max_backoff_turns: int = 4


VARIANTS: dict[str, Skills] = {
    "oracle": Skills(),
    "no-retry": Skills(retry=False),
    "no-look": Skills(look=False),
    "no-replan": Skills(replan=False),
}
_NOISY = re.compile(r"^noisy-(\d*\.?\d+)$")


def scripted_skills(name: str) -> Skills:
    """The skills of `scripted:VARIANT`; `UsageError` for a name that is not one."""
    variant = name.removeprefix(PREFIX)
    if variant in VARIANTS:
        return VARIANTS[variant]
    match = _NOISY.match(variant)
    if match and 0.0 <= float(match.group(1)) <= 1.0:
        return Skills(noise=float(match.group(1)))
    known = ", ".join([*(PREFIX + v for v in VARIANTS), PREFIX + "noisy-P (0 <= P <= 1)"])
    raise UsageError(f"unknown scripted agent {name!r}; use one of {known}")


Purpose = Literal["plan", "detour", "search", "unlock"]


@dataclass
class _Call:
    step: PlanStep
    tool: str
    arguments: dict[str, object] = field(default_factory=dict)
    purpose: Purpose = "plan"
    wrong: bool = False


class ScriptedAgent:
    """Follows `task.gold_plan` step by step; see the module docstring for what each skill does."""

    privileged = True
    """It reads the answer key (the gold plan and the final-answer hints): labelled so wherever it is ranked."""

    def __init__(self, name: str, skills: Skills | None = None) -> None:
        self.name = name
        self.skills = skills or scripted_skills(name)

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        if not task.gold_plan:
            raise UsageError(f"task {task.id!r} has no gold plan; scripted agents need one (use an LLM agent)")
        self.task, self.toolbox = task, toolbox
        self.plan = [s.model_copy(deep=True) for s in task.gold_plan]
        self.by_id = {s.id: s for s in self.plan}
        self.pos, self.calls, self.attempts, self.looks, self.wait = 0, 0, 0, 0, 0
        self.results: dict[str, object] = {}
        self.detours: list[str] = []
        self.substitutes: dict[str, str] = {}
        self.gone: set[str] = set()
        self.searched: set[str] = set()
        self.reads: dict[str, tuple[object, int]] = {}
        self.writes = 0
        self.repeat_of: str | None = None
        self.constraints: list[Constraint] = [c.model_copy(deep=True) for c in task.constraints]
        self.inflight: _Call | None = None
        self.repeat: _Call | None = None
        self.search_for: _Call | None = None
        self.outcome: Action | None = None
        self.events: list[dict[str, object]] = []
        self.rng = derive_rng(seed, f"agent-noise:{self.name}:{task.id}")

    async def act(self, observation: Observation) -> Action:
        if observation.constraints and self.skills.replan:
            self._replan(observation.constraints, observation.turn)
        if self.inflight is not None and observation.result is not None:
            self._digest(self.inflight, observation.result)
        action = self._decide()
        action.planner_events, self.events = self.events, []
        return action

    def _decide(self) -> Action:
        if self.outcome is not None:
            return self.outcome
        if self.wait > 0:
            self.wait -= 1
            return Action.say(f"Waiting before I try again ({self.wait} more turn(s)).")
        if self.search_for is not None:
            return self._search_alternative(self.search_for)
        if self.repeat is not None:
            call, self.repeat = self.repeat, None
            return self._send(call, "Asking again: the last answer was not usable yet.")
        if self.pos >= len(self.plan) and not self.detours:
            return self._finish()
        return self._next_step()

    # --- reading what came back -----------------------------------------------------------------
    def _digest(self, call: _Call, result: ToolResult) -> None:
        self.inflight = None
        if call.purpose == "search":
            self._choose_alternative(call, result)
            return
        if call.purpose == "unlock":
            return
        seen = verdict(result)
        if seen == "ok" and self.skills.look and self._looks_stale(call, result):
            self._ask_again(call)
        elif seen == "ok" or (seen in ("pending", "truncated", "corrupted") and not self.skills.look):
            self._accept(call, payload(result))
        elif seen == "pending" or (seen in ("truncated", "corrupted") and self._reads(call.step)):
            self._ask_again(call)
        elif seen in ("truncated", "corrupted"):
            self._accept(call, salvage(result))  # a write took effect: sending it again would repeat it
        elif not self.skills.retry:
            self._give_up(f"{call.tool} failed: {result.text.splitlines()[0] if result.text else seen}")
        else:
            self._recover(call, result, seen)

    def _looks_stale(self, call: _Call, result: ToolResult) -> bool:
        """A read that repeats an earlier one word for word although the agent changed things since then:
        probably a lagging replica, so it is worth one more look (a second identical answer is believed)."""
        key = json.dumps([call.tool, call.arguments], sort_keys=True, default=str)
        seen_before = self.reads.get(key)
        self.reads[key] = (result.structured_content, self.writes)
        if not self._reads(call.step) or seen_before is None or self.repeat_of == key:
            self.repeat_of = None
            return False
        earlier, writes_then = seen_before
        self.repeat_of = key if earlier == result.structured_content and writes_then < self.writes else None
        return self.repeat_of is not None

    def _accept(self, call: _Call, value: object) -> None:
        self.results[call.step.id] = value
        self.attempts = 0
        if not self._reads(call.step):
            self.writes += 1
        if call.purpose == "detour":
            self.detours.pop(0)
        else:
            self.pos += 1
            self.looks = 0

    def _ask_again(self, call: _Call) -> None:
        if self._spend_attempt(f"{call.tool} never gave a usable answer"):
            self.repeat = call

    def _recover(self, call: _Call, result: ToolResult, seen: str) -> None:
        if call.wrong or seen in ("transient", "infra"):
            if self._spend_attempt(f"{call.tool} kept failing"):
                self.wait = min(self.skills.max_backoff_turns, self.attempts - 1)
        elif seen == "rate_limit":
            if self._spend_attempt(f"{call.tool} stayed rate-limited"):
                self.wait = retry_after_turns(result)
        elif seen == "deprecated":
            self.gone.add(call.tool)
            self.search_for = call
        elif seen == "auth":
            self._login_again(call)
        else:
            self._rethink(call, result)

    def _spend_attempt(self, why: str) -> bool:
        self.attempts += 1
        if self.attempts >= self.skills.max_attempts:
            self._give_up(f"{why} after {self.attempts} tries")
            return False
        return True

    def _login_again(self, call: _Call) -> None:
        server = call.tool.split("/", 1)[0]
        login = next((s for s in self.plan if s.tool.split("/", 1)[0] == server and self._is_login(s.tool)), None)
        if login is None or login.id == call.step.id or login.id in self.detours:
            self._give_up(f"{server}: the session expired and the plan has no way to log in again")
        elif self._spend_attempt(f"{server} kept refusing the session"):
            self.detours.insert(0, login.id)

    def _rethink(self, call: _Call, result: ToolResult) -> None:
        """An error the plan did not expect: the inputs were probably wrong, so read them again."""
        reads = [s for s in referenced_steps(call.step.arguments) if s in self.by_id and self._reads(self.by_id[s])]
        if not self.skills.look or not reads or self.looks >= self.skills.max_looks:
            self._give_up(f"{call.tool} failed: {result.text.splitlines()[0] if result.text else 'error'}")
            return
        self.looks += 1
        self.detours[:0] = [s for s in reads if s not in self.detours]

    # --- choosing the next call -----------------------------------------------------------------
    def _next_step(self) -> Action:
        purpose: Purpose = "detour" if self.detours else "plan"
        step = self.by_id[self.detours[0]] if self.detours else self.plan[self.pos]
        arguments = self._arguments(step)
        if arguments is None:
            return self._decide()
        tool = self.substitutes.get(step.tool, step.tool)
        if tool != step.tool:
            arguments = _fit(arguments, self.toolbox.spec(tool))
        call = _Call(step, tool, arguments, purpose)
        if self.skills.noise and self.rng.random() < self.skills.noise:
            call = self._confuse(call)
        if not self.toolbox.is_callable(call.tool) and call.tool not in self.searched:
            self.searched.add(call.tool)
            self.repeat = call
            return self._search(call.step, call.tool, "unlock", f"Looking up {call.tool} before I use it.")
        return self._send(call, f"Step {step.id}: {step.note or step.tool}")

    def _arguments(self, step: PlanStep) -> dict[str, object] | None:
        """The step's arguments from earlier results; None when a look sent the agent back for its inputs."""
        if not self.skills.look:
            return resolve(step.arguments, self.results, strict=False)  # type: ignore[no-any-return]
        producer = self._bad_input(step)
        if producer is None:
            return resolve(step.arguments, self.results)  # type: ignore[no-any-return]
        if self.looks >= self.skills.max_looks or producer not in self.by_id or not self._repeatable(producer):
            self._give_up(f"step {step.id}: its input from step {producer} is unusable")
        else:
            self.looks += 1
            self.detours.insert(0, producer)
        return None

    def _bad_input(self, step: PlanStep) -> str | None:
        """The first step whose referenced field is missing, empty or garbled."""
        for step_id, path in references(step.arguments):
            try:
                value = lookup(self.results, step_id, path)
            except UnresolvedReference:
                return step_id
            if value is None or has_garble(value):
                return step_id
        return None

    def _send(self, call: _Call, text: str) -> Action:
        self.inflight = call
        self.calls += 1
        return Action.call(call.tool, dict(call.arguments), f"call_{self.calls}", text=text)

    def _search(self, step: PlanStep, tool: str, purpose: Purpose, text: str) -> Action:
        spec = self.toolbox.spec(tool)
        words = tool.split("/", 1)[-1].replace("_", " ")
        query = f"{words} {spec.description.split('.')[0] if spec else ''}".strip()
        self.inflight = _Call(step, tool, {}, purpose)
        self.calls += 1
        return Action.search(query, 10, f"call_{self.calls}", text=text)

    def _search_alternative(self, call: _Call) -> Action:
        return self._search(call.step, call.tool, "search", f"{call.tool} is gone; searching for an alternative.")

    def _choose_alternative(self, call: _Call, result: ToolResult) -> None:
        self.search_for = None
        original = self.toolbox.spec(call.tool)
        found = [self.toolbox.spec(t) for t in _found_ids(result)] + [self.toolbox.spec(t) for t in self.task.tools]
        pool = [s for s in found if s is not None and s.id not in self.gone]
        best = similar_tools(original, pool, k=1) if original is not None else []
        if not best:
            self._give_up(f"{call.tool} was deprecated and no alternative was found")
            return
        self.substitutes[call.step.tool] = best[0].id
        self.events.append({"event": "switch_tool", "from": call.tool, "to": best[0].id})

    def _confuse(self, call: _Call) -> _Call:
        """A plausible wrong tool: same server, same kind (read or write), ideally taking these arguments."""
        right = self.toolbox.spec(call.tool)
        if right is None:
            return call
        mates = sorted((t for t in self.toolbox.all.values() if t.server == right.server and t.id != right.id
                        and t.is_read_only == right.is_read_only and t.id not in self.gone), key=lambda t: t.id)
        fitting = [t for t in mates if set(t.input_schema.get("required", [])) <= set(call.arguments)]
        pool = fitting or mates
        if not pool:
            return call
        wrong = self.rng.choice(pool)
        return _Call(call.step, wrong.id, _fit(call.arguments, wrong), call.purpose, wrong=True)

    # --- constraints and the end ----------------------------------------------------------------
    def _replan(self, new: list[Constraint], turn: int) -> None:
        for constraint in new:
            old = next((c for c in self.constraints if c.id == constraint.replaces), None)
            if old is not None:
                self._substitute((old.verification or {}).get("value"), (constraint.verification or {}).get("value"))
            self.constraints = [c for c in self.constraints if c.id not in (constraint.id, constraint.replaces)]
            self.constraints.append(constraint)
            self.events.append({"event": "replan", "turn": turn, "constraint": constraint.id})

    def _substitute(self, old: object, new: object) -> None:
        """A changed value (a moved deadline) replaces the old one in the steps still to run."""
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            return
        for step in self.plan[self.pos:]:
            step.arguments = text_replaced(step.arguments, old, new)

    def _finish(self) -> Action:
        hints = [str(resolve(h, self.results, strict=False)) for h in self.task.final_answer_hints]
        lines = hints or [f"Done: I completed all {len(self.plan)} steps of the task."]
        summary = "completed " + ", ".join(dict.fromkeys(self.substitutes.get(s.tool, s.tool) for s in self.plan))
        self.outcome = Action.final(compose_final(lines, self.constraints, summary), "completed")
        return self.outcome

    def _give_up(self, why: str) -> None:
        self.outcome = Action.final(f"I could not finish the task: {why}.", "gave_up")

    def _is_login(self, tool_id: str) -> bool:
        spec = self.toolbox.spec(tool_id)
        return spec is not None and is_login(spec)

    def _repeatable(self, step_id: str) -> bool:
        """Steps safe to run again for a fresh result: reads, and logins (a new login only renews the session)."""
        step = self.by_id[step_id]
        return self._reads(step) or self._is_login(self.substitutes.get(step.tool, step.tool))

    def _reads(self, step: PlanStep) -> bool:
        spec = self.toolbox.spec(self.substitutes.get(step.tool, step.tool))
        return spec is not None and spec.is_read_only


def _fit(arguments: dict[str, object], spec: ToolSpec | None) -> dict[str, object]:
    """Only the arguments the tool takes (an alternative's schema may be narrower)."""
    if spec is None:
        return dict(arguments)
    params = set((spec.input_schema or {}).get("properties", {}) or {})
    return {k: v for k, v in arguments.items() if k in params}


def _found_ids(result: ToolResult) -> list[str]:
    tools = (result.structured_content or {}).get("tools", [])
    return [str(t.get("id")) for t in tools if isinstance(t, dict) and t.get("id")]
