"""Rule-based agents that never read the answer key: a planner from the request alone (non-privileged).

They see what an LLM agent sees: the query and the constraints as stated (`Task.public()`, the scenario
left unread: it is the environment's), the tools the toolbox lists or a search finds, and observations.
The query is split into intents (`intents.py`); per intent the visible tools are ranked by BM25 over their
names, descriptions and parameters (in search access the intent is searched first); the best tool is
called with arguments filled by schema matching (`fill.py`); the final answer is composed from what came back.

Skill levels differ in capabilities, never in injected noise (everything is deterministic):

| level | reads results | prerequisites | retries | fixes arguments | tools tried | follow-ups | listens |
|---|---|---|---|---|---|---|---|
| `heuristic:basic` | no | no | no | no | 1 | no | no |
| `heuristic:careful` | yes | yes | yes | no | 1 | no | yes |
| `heuristic:thorough` | yes | yes | yes | yes | 3 | yes | yes |

- reads results: ids, tokens and symbols are copied from earlier results (the item whose fields match
  the intent's names); without it only what the request states is sent;
- prerequisites: a required argument it cannot fill sends it to a tool that produces it first (the tool
  the argument's description names, else one whose output schema has that field): log in, find the id;
- retries: waits out timeouts and rate limits, asks a pending job again, re-reads a garbled read, logs
  in again after a 401, replaces a deprecated tool by the most similar one a search finds;
- fixes arguments: an error that names an argument rules out the value sent (the next match is taken,
  an optional argument is dropped); another candidate tool is tried when one cannot be made to work;
- follow-ups: a write whose description names the call that completes it ("use send_draft", "only after
  confirm_transfer") is followed by that call;
- listens: the user's mid-episode messages add facts and shape the final answer (word limit, bullets,
  a required heading).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from cworld.agents.answer import trim_to_words
from cworld.agents.base import Action, Observation
from cworld.agents.fill import (
    SECRETS,
    FillContext,
    Pick,
    Record,
    dictation,
    fill,
    holds_all,
    id_like,
    match_score,
    properties,
    required,
    result_keys,
)
from cworld.agents.intents import Condition, Intent, facts_of, intents_of, words_of
from cworld.agents.observe import payload, retry_after_turns, salvage, verdict
from cworld.agents.rank import Ranker, rank_tools
from cworld.agents.schedule import MOMENTS, finder
from cworld.agents.toolbox import Toolbox
from cworld.controller.alternatives import similar_tools
from cworld.controller.faults import is_login
from cworld.data_model import PublicTask, Task, ToolResult, ToolSpec
from cworld.errors import UsageError

PREFIX = "heuristic:"
_NEXT_STEP = re.compile(r"\b(?:use|call|after|with|then)\s+`?([a-z][a-z0-9_]{3,})`?", re.IGNORECASE)
_READING = re.compile(r"^(?:open|read|look at|view|check)\b[^.;]*$", re.IGNORECASE)
_FIRST = re.compile(r"\b([a-z][a-z0-9_]{3,}) first\b")
_WORD_LIMIT = re.compile(r"(?:at most|no more than|under|within)\s+(\d+)\s+words", re.IGNORECASE)
_REQUIRED_LINE = re.compile(r"'([A-Z][A-Z ]{2,30}:)'")


@dataclass(frozen=True)
class Abilities:
    reads_results: bool = True
    prerequisites: bool = True
    retries: bool = True
    fixes_arguments: bool = True
    candidates: int = 3
    follows_up: bool = True
    listens: bool = True
    max_depth: int = 3
    """How many prerequisites deep it chains (a DM needs a token, which needs a login, which needs a handle)."""
    max_tries: int = 6
    """Tries of one call (transient errors, pending answers, re-logins) before it moves on."""
    ranker: Ranker = "bm25"
    """How the visible tools are ranked per intent (`rank.py`): words, meaning, or both."""
    explores: bool = False
    """Explore first: before an intent's first write on a server, list what that server holds."""
    call_budget: int | None = None
    """Stop and answer after this many calls and searches (None: the turn limit decides)."""
    pick: Pick = "matched"
    """Which earlier record an id comes from: the one matching the intent's names, or the latest one."""
    optional_args: bool = True
    """Send the optional arguments it can fill (ids, dates, counts), or the required ones only."""


LEVELS: dict[str, Abilities] = {
    "basic": Abilities(reads_results=False, prerequisites=False, retries=False, fixes_arguments=False,
                       candidates=1, follows_up=False, listens=False),
    "careful": Abilities(fixes_arguments=False, candidates=1, follows_up=False),
    "thorough": Abilities(),
}
"""The skill levels: nested abilities, so their order is close to designed."""

STRATEGIES: dict[str, Abilities] = {
    "dense": Abilities(ranker="dense"),
    "hybrid": Abilities(ranker="hybrid"),
    "explorer": Abilities(fixes_arguments=False, candidates=1, follows_up=False, explores=True),
    "frugal": Abilities(call_budget=6),
    "hasty": Abilities(fixes_arguments=False, candidates=1, follows_up=False, pick="latest", optional_args=False),
}
"""Strategies: each differs from a level in how it works, not in how much it can do (module docstring)."""

AGENTS: dict[str, Abilities] = {**LEVELS, **STRATEGIES}


def heuristic_abilities(name: str) -> Abilities:
    """The abilities of `heuristic:LEVEL` or `heuristic:STRATEGY`; `UsageError` for a name that is neither."""
    level = name.removeprefix(PREFIX)
    if level not in AGENTS:
        raise UsageError(f"unknown heuristic agent {name!r}; use one of {', '.join(PREFIX + k for k in AGENTS)}")
    return AGENTS[level]


Role = Literal["goal", "prerequisite", "follow-up", "explore"]


@dataclass
class Job:
    tool: str
    intent: Intent
    role: Role
    depth: int = 0
    tries: int = 0
    args: dict[str, Any] = field(default_factory=dict)
    needed_for: str = ""
    """The argument this prerequisite produces."""
    resend: bool = False
    """Send the same arguments again (a retry after a transient failure), without refilling them."""


class HeuristicAgent:
    """Plans from the request alone; see the module docstring for what each level can do."""

    privileged = False

    def __init__(self, name: str, abilities: Abilities | None = None) -> None:
        self.name = name
        self.abilities = abilities or heuristic_abilities(name)

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        self.public: PublicTask = task.public()
        self.toolbox = toolbox
        self.intents = intents_of(self.public.query)
        self.facts = facts_of(" ".join([self.public.query, *self.public.constraints]))
        self.answer_rules: list[str] = list(self.public.constraints)
        self.memory: list[Record] = []
        self.ctx = FillContext(self.memory, self.facts, self.abilities.reads_results, self._compose,
                               pick=self.abilities.pick, optional=self.abilities.optional_args,
                               rules=[i.rule for i in self.intents if i.rule is not None])
        self.position, self.calls, self.wait = -1, 0, 0
        self.agenda: list[Job] = []
        self.candidates: list[str] = []
        self.inflight: Job | None = None
        self.switching: Job | None = None
        self.pending_search: tuple[str, Job | None] | None = None
        self.searched: set[str] = set()
        self.gone: set[str] = set()
        self.substitutes: dict[str, str] = {}
        self.done_lines: list[str] = []
        self.failed: list[str] = []
        self.reads: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self.explored: set[str] = set()
        self.decided: dict[tuple[str, str], bool | None] = {}
        self.asked: set[tuple[str, ...]] = set()

    async def act(self, observation: Observation) -> Action:
        if observation.user_messages and self.abilities.listens:
            self._listen(observation.user_messages)
        if observation.result is not None:
            if self.pending_search is not None:
                self._digest_search(observation.result)
            elif self.inflight is not None:
                self._digest(self.inflight, observation.result)
        action = self._decide()
        action.planner_events, self.events = self.events, []
        return action

    # --- deciding -------------------------------------------------------------------------------
    def _decide(self) -> Action:
        for _ in range(200):
            if self.abilities.call_budget is not None and self.calls >= self.abilities.call_budget:
                return self._finish()
            if self.wait > 0:
                self.wait -= 1
                return Action.say(f"Waiting before I try again ({self.wait} more turn(s)).")
            if self.switching is not None:
                return self._search_alternative(self.switching)
            if not self.agenda:
                if not self._next_intent():
                    return self._finish()
                if self.toolbox.offers_search and self.intent.text not in self.searched:
                    return self._search(self.intent.text, None)
                self._plan_intent()
                continue
            job = self.agenda[0]
            action = self._prepare(job)
            if action is not None:
                return action
        return self._finish()

    def _next_intent(self) -> bool:
        while True:
            self.position += 1
            if self.position >= len(self.intents):
                return False
            self.intent = self.intents[self.position]
            self.candidates = []
            if self._wanted(self.intent):
                return True

    def _wanted(self, intent: Intent) -> bool:
        """A conditional clause is done when its condition holds on the record read before (`otherwise`:
        when it does not); unread or not shown, the first branch is taken."""
        if intent.condition is None:
            return True
        key = (intent.condition.field, intent.condition.value)
        if key not in self.decided:  # decided once: the branch taken may add records of its own
            self.decided[key] = self._holds(intent.condition) if self.abilities.reads_results else None
        holds = self.decided[key]
        return (holds is False) if intent.condition.otherwise else holds is not False

    def _holds(self, condition: Condition) -> bool | None:
        """Whether the record the request named last holds the condition's value in the field it names."""
        wanted = condition.field.lower().split()
        before = next((i for i in reversed(self.intents[:self.position]) if i.condition is None), self.intent)
        best: tuple[float, bool] | None = None
        for record in self.memory:
            for item in _dicts(record.payload):
                key = next((k for k in item if words_of(k.replace("_", " ")) == set(wanted)
                            or k.lower() == "".join(wanted)), None)
                if key is None or not isinstance(item[key], str | int | float):
                    continue
                fit = match_score(item, before)
                if best is None or fit > best[0]:
                    best = (fit, str(item[key]).lower() == condition.value.lower())
        return best[1] if best is not None and best[0] > 0 else None

    def _plan_intent(self) -> None:
        """Rank the visible tools for the intent; the best one becomes the goal."""
        self.searched.add(self.intent.text)
        ranked = self._rank(self.intent)
        # the fallbacks do what the first choice does: a clause that reads never falls back on a write
        top = ranked[0] if ranked else None
        self.candidates = [t.id for t in ranked if top is not None and (t.is_read_only or not top.is_read_only)
                           ][: self.abilities.candidates]
        if self.candidates:
            self.agenda.append(Job(self.candidates.pop(0), self.intent, "goal"))
            if self.abilities.explores:
                self._explore(self.agenda[-1])

    def _explore(self, goal: Job) -> None:
        """Before a write on a server not yet looked at, read what it holds: its listings that need no
        argument (at most two, by name), as a person opens the app before changing anything in it."""
        spec = self.toolbox.spec(goal.tool)
        if spec is None or spec.is_read_only or spec.server in self.explored:
            return
        self.explored.add(spec.server)
        listings = sorted(
            (t for t in self.toolbox.visible()
             if t.server == spec.server and t.is_read_only and not required(t) and t.id != spec.id
             and t.name.startswith(("list", "get_my", "search"))),
            key=lambda t: t.id,
        )
        for tool in listings[:2]:
            self.agenda.insert(0, Job(tool.id, goal.intent, "explore", 1))

    def _prepare(self, job: Job) -> Action | None:
        """The call for `job`, or None when the agenda changed (a prerequisite went first, the job was dropped)."""
        spec = self.toolbox.spec(self._tool(job))
        if spec is None:
            self._fail(job, f"{job.tool} is unknown")
            return None
        if job.role != "goal" and self._already_has(job):
            self.agenda.remove(job)
            return None
        if job.tries >= self.abilities.max_tries:
            self._fail(job, f"{spec.id} did not work after {job.tries} tries")
            return None
        missing: list[str] = []
        if job.resend:
            job.resend = False
        else:
            job.args, missing = fill(spec, job.intent, self.ctx)
        if missing and self.abilities.prerequisites and job.depth < self.abilities.max_depth:
            producer = self._producer(spec, missing[0], job)
            # a question is asked once: the same call for the same clause is not made again
            asked = (producer.id, missing[0], job.intent.text, _key(producer.id, fill(producer, job.intent, self.ctx)[0])) \
                if producer is not None else ()
            if producer is not None and asked not in self.asked:
                self.asked.add(asked)
                self.agenda.insert(0, Job(producer.id, job.intent, "prerequisite", job.depth + 1, needed_for=missing[0]))
                return None
            query = f"{spec.server} {properties(spec).get(missing[0], {}).get('description', missing[0])}"
            if query not in self.searched and id_like(missing[0], properties(spec).get(missing[0], {})):
                return self._search(query, job)
        cached = self._cached(spec, job.args)
        if cached is not None:
            self._succeed(job, cached, spec)
            return None
        return self._send(job, spec)

    def _already_has(self, job: Job) -> bool:
        """A prerequisite whose product is now known (another step produced it meanwhile)."""
        if not job.needed_for or not self.abilities.reads_results:
            return False
        server = job.tool.split("/")[0]
        return holds_all([r.payload for r in self.memory if r.server == server], job.needed_for, job.intent)

    def _cached(self, spec: ToolSpec, args: dict[str, Any]) -> Any:
        """A read or login already made with the same arguments: reuse it (never repeat a lookup)."""
        if not (spec.is_read_only or is_login(spec)) or not self.abilities.reads_results:
            return None
        return self.reads.get(_key(spec.id, args))

    def _producer(self, spec: ToolSpec, argument: str, job: Job) -> ToolSpec | None:
        """A visible tool that yields `argument`: the one its description names, else a read whose output has it."""
        prop = properties(spec).get(argument, {})
        keys = result_keys(argument, prop)
        named = set(re.findall(r"[a-z][a-z0-9_]{3,}", str(prop.get("description", "")).lower()))
        tried = {j.tool for j in self.agenda} | {spec.id}
        pool = [t for t in self.toolbox.visible() if t.id not in tried and t.id not in self.gone]
        scored: list[tuple[int, int, str, ToolSpec]] = []
        for tool in pool:
            output = json.dumps(tool.output_schema or {})
            makes = any(f'"{k}"' in output for k in keys)
            if argument == "token" and is_login(tool) and tool.server == spec.server:
                makes = True
            if not makes or (not tool.is_read_only and not is_login(tool)):
                continue
            if argument in required(tool):
                continue
            scored.append((int(tool.name in named), int(tool.server == spec.server), tool.id, tool))
        if argument in MOMENTS:  # a time the clause leaves open is found among the free slots
            return finder(pool, spec.server)
        if not scored:
            return self._reader(argument, job, pool) or self._lister(spec, argument, pool)
        best = max(scored, key=lambda s: (s[0], s[1], -len(required(s[3])), s[2]))
        return best[3] if best[1] or best[0] else self._lister(spec, argument, pool)

    def _reader(self, argument: str, job: Job, pool: list[ToolSpec]) -> ToolSpec | None:
        """For a secret no tool answers (a password "somewhere in my inbox"): search the messages, then read
        the one found; `fill` takes the secret from the text (`secret_in`)."""
        if argument not in SECRETS:
            return None
        mail = [t for t in pool if t.is_read_only and re.search(r"messages?|mail|inbox", t.name)]
        searches = [t for t in mail if t.name.startswith("search")]
        servers = {t.server for t in searches}
        readers = [t for t in mail if t.name.startswith("get") and t.server in servers and "message_id" in required(t)]
        done = {k[:3] for k in self.asked}
        return next((t for t in [*searches, *readers] if (t.id, argument, job.intent.text) not in done), None)

    @staticmethod
    def _lister(spec: ToolSpec, argument: str, pool: list[ToolSpec]) -> ToolSpec | None:
        """A read of the same server that needs nothing and lists what the id names by its name
        (`thread_id` -> `list_threads`; a bare `id` -> what the tool's own name acts on)."""
        stem = re.sub(r"(_?ids?|Ids?)$", "", argument).lower().replace("_", "")
        words = [stem] if stem else [w for w in re.findall(r"[a-z]+", spec.name.lower().replace("_", " "))[1:]]
        reads = re.compile(r"(^|_)(list|get|search|find)")  # a read by its name: many servers declare no hints
        fits = [t for t in pool if t.server == spec.server and not required(t) and t.id != spec.id
                and (t.is_read_only or reads.search(t.name.lower()))
                and any(w and len(w) > 2 and w in t.name.lower().replace("_", "") for w in words)]
        listing = [t for t in fits if reads.search(t.name.lower())]
        return min(listing or fits, key=lambda t: (len(t.name), t.id)) if (listing or fits) else None

    def _rank(self, intent: Intent) -> list[ToolSpec]:
        """The ranker's order over the visible tools, plus a bonus for each argument the intent's facts fill."""
        tools = sorted((t for t in self.toolbox.visible() if t.id not in self.gone), key=lambda t: t.id)
        if intent.facts.titled or intent.facts.saying:  # the write must carry what the person dictated
            tools = [t for t in tools if not t.is_read_only and dictation(t, intent.facts)] or tools
        elif _READING.match(intent.text):  # "Open it, read it": a read, never a message
            tools = [t for t in tools if t.is_read_only] or tools
        hits = rank_tools(self.abilities.ranker, intent.ask, tools)
        if not hits:
            return []
        bare = FillContext([], intent.facts, False, lambda _: "")
        ranked = [(s + 0.25 * _fed(t, intent, bare), t.id, t) for s, t in hits]
        return [t for _, _, t in sorted(ranked, key=lambda r: (-r[0], r[1]))]

    # --- acting ---------------------------------------------------------------------------------
    def _send(self, job: Job, spec: ToolSpec) -> Action:
        self.inflight = job
        self.calls += 1
        job.tries += 1
        return Action.call(spec.id, dict(job.args), f"call_{self.calls}", text=f"{job.role}: {job.intent.text[:80]}")

    def _search(self, query: str, job: Job | None) -> Action:
        self.searched.add(query)
        self.pending_search = (query, job)
        self.calls += 1
        return Action.search(query, 5, f"call_{self.calls}", text="Looking for a tool.")

    def _tool(self, job: Job) -> str:
        return self.substitutes.get(job.tool, job.tool)

    # --- reading what came back -----------------------------------------------------------------
    def _digest_search(self, result: ToolResult) -> None:
        _, job = self.pending_search or ("", None)
        self.pending_search = None
        if job is None:
            self._plan_intent()
        elif self._tool(job) in self.gone:
            self._switch(job, result)

    def _digest(self, job: Job, result: ToolResult) -> None:
        self.inflight = None
        spec = self.toolbox.spec(self._tool(job))
        seen = verdict(result)
        if seen == "ok" or (seen in ("pending", "truncated", "corrupted") and not self.abilities.retries):
            self._succeed(job, payload(result), spec)
        elif seen in ("pending", "truncated", "corrupted") and (seen == "pending" or (spec and spec.is_read_only)):
            self._try_again(job, 0)
        elif seen in ("truncated", "corrupted"):
            self._succeed(job, salvage(result), spec)
        elif not self.abilities.retries:
            self._fail(job, _first_line(result))
        elif seen in ("transient", "infra"):
            self._try_again(job, min(3, job.tries - 1))
        elif seen == "rate_limit":
            self._try_again(job, retry_after_turns(result))
        elif seen == "auth":
            self._log_in_again(job)
        elif seen == "deprecated":
            self.gone.add(self._tool(job))
            self.switching = job
        else:
            self._rethink(job, result, spec)

    def _succeed(self, job: Job, value: Any, spec: ToolSpec | None) -> None:
        if job in self.agenda:
            self.agenda.remove(job)
        self.memory.append(Record(self._tool(job), value))
        if spec is not None and (spec.is_read_only or is_login(spec)):
            self.reads[_key(spec.id, job.args)] = value
        if job.role not in ("prerequisite", "explore"):
            self.done_lines.append(_line(self._tool(job), value))
        if job.role == "goal" and self.abilities.follows_up and spec is not None and not spec.is_read_only:
            self._follow_up(job, spec)

    def _follow_up(self, job: Job, spec: ToolSpec) -> None:
        server_tools = {t.name: t for t in self.toolbox.visible() if t.server == spec.server}
        for name in _NEXT_STEP.findall(spec.description):
            nxt = server_tools.get(name.lower())
            if nxt is not None and nxt.id != spec.id and not nxt.is_read_only:
                self.agenda.insert(0, Job(nxt.id, job.intent, "follow-up"))
                return

    def _try_again(self, job: Job, wait: int) -> None:
        if job.tries >= self.abilities.max_tries:
            self._fail(job, f"{job.tool} kept failing")
        else:
            self.wait, job.resend = wait, True

    def _log_in_again(self, job: Job) -> None:
        server = self._tool(job).split("/", 1)[0]
        self.memory[:] = [r for r in self.memory if r.server != server or not _has_key(r.payload, ["token"])]
        self.reads = {k: v for k, v in self.reads.items() if not json.loads(k)[0].startswith(server + "/")}
        login = next((t for t in self.toolbox.visible() if t.server == server and is_login(t)), None)
        if login is None or job.tries >= self.abilities.max_tries:
            self._fail(job, f"{server}: the session expired")
            return
        job.args = {}
        self.agenda.insert(0, Job(login.id, job.intent, "prerequisite", job.depth + 1, needed_for="token"))

    def _search_alternative(self, job: Job) -> Action:
        spec = self.toolbox.spec(self._tool(job))
        words = self._tool(job).split("/", 1)[-1].replace("_", " ")
        self.switching = None
        return self._search(f"{words} {spec.description.split('.')[0] if spec else ''}".strip(), job)

    def _switch(self, job: Job, result: ToolResult) -> None:
        original = self.toolbox.spec(self._tool(job))
        found = [self.toolbox.spec(str(t.get("id"))) for t in (result.structured_content or {}).get("tools", [])]
        pool = [s for s in found if s is not None and s.id not in self.gone]
        best = similar_tools(original, pool, k=1) if original is not None else []
        if not best:
            self._fail(job, f"{job.tool} was withdrawn and nothing similar was found")
            return
        self.substitutes[job.tool] = best[0].id
        job.args, job.tries = {}, 0
        self.events.append({"event": "switch_tool", "from": original.id if original else job.tool, "to": best[0].id})

    def _rethink(self, job: Job, result: ToolResult, spec: ToolSpec | None) -> None:
        """An error: rule out the value of the argument it names and try again, or try the next tool."""
        text = result.text.lower()
        first = self._named_first(text, spec, job)
        if first is not None:  # "you are not a member of #x; join_channel first": do that, then this again
            self.agenda.insert(0, Job(first.id, job.intent, "prerequisite", job.depth + 1))
            job.args = {}
            return
        if self.abilities.fixes_arguments and spec is not None and job.tries < self.abilities.max_tries:
            named = [a for a in job.args if re.search(rf"\b{re.escape(a)}\b", text) or str(job.args[a]).lower() in text]
            fresh = [a for a in named if str(job.args[a]) not in self.ctx.excluded.get(a, set())]
            if fresh:
                self.ctx.excluded.setdefault(fresh[0], set()).add(str(job.args[fresh[0]]))
                job.args = {}
                return
        if job.role == "goal" and self.candidates:
            self.agenda.remove(job)
            self.agenda.insert(0, Job(self.candidates.pop(0), job.intent, "goal"))
            return
        self._fail(job, _first_line(result))

    def _named_first(self, text: str, spec: ToolSpec | None, job: Job) -> ToolSpec | None:
        """A write of the same server that an error says to call first, not asked before for this clause."""
        if spec is None or not self.abilities.prerequisites:
            return None
        for name in _FIRST.findall(text):
            tool = self.toolbox.spec(f"{spec.server}/{name}")
            if tool is not None and tool.id != spec.id and (tool.id, job.intent.text) not in self.asked:
                self.asked.add((tool.id, job.intent.text))
                return tool
        return None

    def _fail(self, job: Job, why: str) -> None:
        """Drop the job and everything of its intent: the intent is not reachable this way (a failed look
        around only drops itself)."""
        if job.role == "explore":
            if job in self.agenda:
                self.agenda.remove(job)
            return
        self.agenda[:] = [j for j in self.agenda if j.intent is not job.intent]
        self.failed.append(f"{job.intent.text.rstrip('.')}: {why}")

    # --- the user and the end -------------------------------------------------------------------
    def _listen(self, messages: list[str]) -> None:
        for message in messages:
            self.answer_rules.append(message)
            new = facts_of(message)
            self.facts.dates[:0] = new.dates
            self.facts.amounts[:0] = new.amounts
            for intent in self.intents[self.position + 1:]:
                if new.dates and intent.facts.dates:
                    intent.facts.dates[:] = new.dates

    def _compose(self, intent: Intent) -> str:
        done = "; ".join(self.done_lines[-4:])
        return f"{intent.text.rstrip('.')}. {('Done so far: ' + done) if done else ''}".strip()

    def _finish(self) -> Action:
        lines = self.done_lines or ["I could not complete any part of the request."]
        lines = lines + [f"Not done: {f}" for f in self.failed]
        text = _shape(lines, self.answer_rules if self.abilities.listens else list(self.public.constraints))
        return Action.final(text, "completed" if self.done_lines else "gave_up")


def _shape(lines: list[str], rules: list[str]) -> str:
    rule_text = " ".join(rules)
    if re.search(r"bullet", rule_text, re.IGNORECASE):
        lines = [f"- {line}" for line in lines]
    required_lines = [f"{m} {len(lines)} step(s) done" for m in _REQUIRED_LINE.findall(rule_text)]
    limits = [int(n) for n in _WORD_LIMIT.findall(rule_text)]
    if limits:
        lines = trim_to_words(lines, min(limits) - sum(len(r.split()) for r in required_lines))
    return "\n".join([*lines, *required_lines])


def _line(tool: str, value: Any) -> str:
    facts = _scalars(value)[:6]
    return f"{tool}: " + ", ".join(f"{k}={v}" for k, v in facts) if facts else f"{tool}: done"


def _scalars(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        out = [(k, v) for k, v in value.items() if isinstance(v, str | int | float) and not isinstance(v, bool)
               and k not in ("token", "text") and len(str(v)) < 80]
        if not out:
            for v in value.values():
                if isinstance(v, list) and v:
                    return _scalars(v[0])
        return out
    if isinstance(value, list) and value:
        return _scalars(value[0])
    return []


def _fed(spec: ToolSpec, intent: Intent, bare: FillContext) -> int:
    """How many of the tool's arguments the intent's stated facts fill (free text and search words aside)."""
    from cworld.agents.fill import from_request

    count = 0
    for name, prop in properties(spec).items():
        if name in ("text", "body", "message", "description", "comment", "title", "subject", "name"):
            continue
        if from_request(name, prop, intent, bare) is not None:
            count += 1
    return count


def _dicts(value: Any) -> list[dict[str, Any]]:
    """Every dict inside an answer, depth first."""
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in _dicts(v))]
    if isinstance(value, list):
        return [d for v in value for d in _dicts(v)]
    return []


def _has_key(value: Any, keys: list[str]) -> bool:
    if isinstance(value, dict):
        return any(k in value for k in keys) or any(_has_key(v, keys) for v in value.values())
    if isinstance(value, list):
        return any(_has_key(v, keys) for v in value)
    return False


def _key(tool: str, args: dict[str, Any]) -> str:
    return json.dumps([tool, args], sort_keys=True, default=str)


def _first_line(result: ToolResult) -> str:
    return result.text.splitlines()[0][:160] if result.text else result.error_class or "error"


__all__ = ["AGENTS", "LEVELS", "PREFIX", "STRATEGIES", "Abilities", "HeuristicAgent", "heuristic_abilities", "words_of"]
