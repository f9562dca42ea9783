"""The offline drafter of `--pool harvested`: long-horizon tasks composed from the tools' schemas alone.

The candidates come as a chain per server (`cworld.synth.harvest_pool`). Each tool becomes a plan step
whose arguments are filled in order, and each step runs at once on a probe session of the World Engine
(the world engine a synthesized run uses, on the world of the task's seed), so later steps read real
answers - the records and ids of that world, which a run of the task finds again:

1. **links** — an argument an earlier answer holds becomes a `{{step.path}}` reference: along a
   dependency-graph edge (its `via` key: `bases[].id` feeds `baseId`), or a field of the same name
   (`city`, `email`, `symbol`), within or across servers; a free-text argument of a later server
   (`message`, `body`, `notes`) quotes what earlier steps found;
2. **literals** — the rest are realistic values (`schema_values.literal`), stated in the request.

A step the probe refuses is dropped (with its server, if it was that server's only one); fewer than the
task's minimum of servers left is a `BlockFailed`. The request is written from the tools' descriptions
and the literal values, the constraints from the plan (`schema_constraints.py`), the scenario from the
values the request names. The probe is only a guide: the task is verified afterwards by executing the
finished plan with the task's public part (`cworld.synth.verify.verify_synthesized`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import jsonschema

from cworld.agents.references import UnresolvedReference, referenced_steps, resolve
from cworld.data_model import PlanStep, Scenario, ScenarioEntity, SubGoal, ToolSpec
from cworld.synth.draft import Draft
from cworld.synth.harvest_pool import card_of
from cworld.synth.leak import LeakChecker
from cworld.synth.offline.composer import BlockFailed
from cworld.synth.offline.schema_constraints import chain_constraints
from cworld.synth.offline.schema_links import (
    id_entity,
    id_leaf_entity,
    input_type,
    leaf_type,
    same_entity,
    takes,
)
from cworld.synth.offline.schema_request import request, service_words, step_clause, values_phrase
from cworld.synth.offline.schema_values import (
    THEME_TOPICS,
    is_text_param,
    literal,
    printable,
    snake,
    words_of,
)
from cworld.synth.options import SynthOptions
from cworld.synth.sampling import Candidates
from cworld.synth.toolset import ToolUniverse

MAX_PATHS = 200
_OPENERS = ("I'm working on {topic}.", "I need help with {topic}.", "Can you help me with {topic}?",
            "This is for {topic}.")
_THEN = ("Then", "After that,", "Next,", "Once that's done,")
_GENERIC = frozenset({"id", "name", "type", "status", "limit", "page", "format", "offset", "cursor", "sort",
                      "order", "fields", "verbose", "include", "mode", "version", "lang", "language",
                      "page_size", "per_page", "total", "has_more", "count", "page_token", "success"})


@dataclass
class Step:
    """A composed step: the plan step, what the probe answered, the literals the request states, and the
    earlier steps it reads."""

    plan: PlanStep
    spec: ToolSpec
    result: Any
    literals: dict[str, Any] = field(default_factory=dict)
    links: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chain:
    """What composing found: the steps in order, the theme and the day the task lives on."""

    theme: str
    today: date
    steps: list[Step] = field(default_factory=list)

    def servers(self) -> list[str]:
        return list(dict.fromkeys(s.spec.server for s in self.steps))


class ChainDrafter:
    """`engine` is the probe's World Engine (the world engine, `synth.api._engine`), `cards` its category
    cards by name."""

    def __init__(
        self, universe: ToolUniverse, options: SynthOptions, leaks: LeakChecker, engine: Any, cards: dict[str, Any]
    ) -> None:
        self.universe, self.options, self.leaks, self.engine = universe, options, leaks, engine
        self.cards = cards

    def draft(
        self, candidates: Candidates, world_seed: int, rng: random.Random, avoid: set[str], everything: bool
    ) -> Draft:
        theme = candidates.query.removeprefix("theme: ").strip() or "team"
        chain = self.compose(candidates.tools, world_seed, rng, theme, avoid)
        return self.to_draft(chain, rng, everything)

    # --- composing against the probe ------------------------------------------------------------------
    def compose(
        self, tool_ids: list[str], world_seed: int, rng: random.Random, theme: str, avoid: set[str]
    ) -> Chain:
        from cworld.engine import SessionLog

        chain = Chain(theme, date(2026, 3, 2) + timedelta(days=world_seed % 60))
        session = SessionLog(seed=world_seed)
        results: dict[str, Any] = {}
        for tool_id in tool_ids:
            spec = self.universe.tools.get(tool_id)
            if spec is None or tool_id in avoid:
                continue
            step = self._step(spec, len(chain.steps) + 1, chain, results, rng)
            answer = self._probe(step, session, results)
            required = set((spec.input_schema or {}).get("required", []) or [])
            for keep in (required, set()):  # refused: without the optional links, then without any
                if answer is not None or not step.links or set(step.links) <= keep:
                    continue
                self._unlink(step, keep, chain, rng)
                answer = self._probe(step, session, results)
            if answer is None:
                continue
            step.result = results[step.plan.id] = answer
            chain.steps.append(step)
        if len(chain.servers()) < self.options.min_servers:
            raise BlockFailed(
                f"only {len(chain.servers())} servers' steps ran in the probe; {self.options.min_servers} needed"
            )
        return chain

    def _probe(self, step: Step, session: Any, results: dict[str, Any]) -> Any:
        try:
            arguments = resolve(step.plan.arguments, results)
        except UnresolvedReference:
            return None
        if _schema_problem(step.spec, arguments):
            return None
        answer = self.engine.respond_sync(step.spec, arguments, session)
        session.record(step.spec.id, arguments, answer)
        if answer.is_error:
            return None
        return answer.structured_content if answer.structured_content is not None else answer.text

    def _step(self, spec: ToolSpec, n: int, chain: Chain, results: dict[str, Any], rng: random.Random) -> Step:
        schema = spec.input_schema or {}
        props: dict[str, Any] = schema.get("properties", {}) or {}
        required = list(schema.get("required", []) or [])
        optional = [k for k in props if k not in required]
        step = Step(PlanStep(id=f"s{n}", tool=spec.id, arguments={}), spec, None)
        arguments = step.plan.arguments  # the model's own dict (pydantic copied the one it was given)
        for name in [*required, *optional]:
            prop: dict[str, Any] = props[name] if isinstance(props.get(name), dict) else {}
            link = self._link(name, prop, spec, chain)
            if link is not None:
                arguments[name] = step.links[name] = link
            elif name in required:
                arguments[name] = step.literals[name] = literal(name, prop, schema, rng, chain.theme, chain.today)
        self._quote(step, props, chain)
        return step

    def _link(self, name: str, prop: dict[str, Any], spec: ToolSpec, chain: Chain) -> str | list[str] | None:
        """A reference to an earlier answer's field this argument takes: a graph edge's key first, then a
        field of the same (specific) name, then an id of the entity it names from the same service, then
        a field of its semantic type (`schema_links`). Later steps are preferred (the chain reads forward)."""
        key = snake(name)
        vias = {
            str(d.get("via")) for a, b, d in self.universe.graph.in_edges(spec.id, data=True)
            if d.get("via") and any(s.spec.id == a for s in chain.steps)
        }
        entity, kind = id_entity(name), input_type(name, prop)
        ranked: list[tuple[int, int, str, Any]] = []
        for age, earlier in enumerate(reversed(chain.steps)):
            same_server = earlier.spec.server == spec.server
            for path, value in _leaves(earlier.result):
                leaf = snake(path.rsplit(".", 1)[-1])
                if any(_names_key(via, key) and _is_key(leaf, _container(path), via) for via in vias):
                    rank = 0
                elif leaf == key and key not in _GENERIC and len(key) > 3:
                    rank = 1
                elif entity and same_server and (found := id_leaf_entity(path)) and same_entity(entity, found):
                    rank = 2
                elif not entity and takes(kind, leaf_type(path, value)):
                    rank = 3 if kind != "search" else 4
                else:
                    continue
                ranked.append((rank, age, path, (earlier, value)))
        for _, _, path, (earlier, value) in sorted(ranked, key=lambda r: (r[0], r[1])):
            ref = "{{" + f"{earlier.plan.id}.{path}" + "}}"
            if _fits(value, prop):
                return ref
            if prop.get("type") == "array" and _fits_list(value, prop):
                return [ref]
        return None

    def _unlink(self, step: Step, keep: set[str], chain: Chain, rng: random.Random) -> None:
        """Drop the links but those of `keep`; a required argument that loses its link gets a literal."""
        schema = step.spec.input_schema or {}
        props, required = schema.get("properties", {}) or {}, set(schema.get("required", []) or [])
        for name in [k for k in step.links if k not in keep]:
            del step.links[name]
            step.plan.arguments.pop(name, None)
            if name in required:
                prop: dict[str, Any] = props[name] if isinstance(props.get(name), dict) else {}
                value = literal(name, prop, schema, rng, chain.theme, chain.today)
                step.plan.arguments[name] = step.literals[name] = value

    def _quote(self, step: Step, props: dict[str, Any], chain: Chain) -> None:
        """A free-text argument of a later server quotes what the earlier servers' steps found."""
        if not chain.steps or any(s.spec.server == step.spec.server for s in chain.steps[-1:]):
            return
        for name in props:
            if name in step.links or not is_text_param(name) or props[name].get("type") not in (None, "string"):
                continue
            facts = [f"{words_of(p.rsplit('.', 1)[-1])}: {{{{{s.plan.id}.{p}}}}}"
                     for s in chain.steps for p in _quotable(s.result)[:1]]
            if facts:
                text = "Notes so far: " + "; ".join(facts[-3:])
                step.plan.arguments[name] = step.links[name] = text
                step.literals.pop(name, None)
            return

    # --- the draft ------------------------------------------------------------------------------------------
    def to_draft(self, chain: Chain, rng: random.Random, everything: bool) -> Draft:
        goals, clauses, rationales = self._goals(chain, rng)
        hints, reports = self._hints(chain)
        query = self._query(chain, clauses, rng)
        constraints = chain_constraints(
            chain, self.universe, rng, hints, reports, min_types=self.options.min_constraint_types,
            everything=everything,
        )
        tools = list(dict.fromkeys(s.spec.id for s in chain.steps))
        return Draft(
            query=query,
            tools=tools,
            rationales=rationales,
            constraints=constraints,
            subgoals=goals,
            gold_plan=[s.plan for s in chain.steps],
            final_answer_hints=hints,
            scenario=self._scenario(chain),
        )

    def _goals(self, chain: Chain, rng: random.Random) -> tuple[list[SubGoal], list[str], dict[str, str]]:
        """A sub-goal per server, depending on the servers whose answers it reads; a clause per step."""
        goals: dict[str, SubGoal] = {}
        owner: dict[str, str] = {}
        clauses: list[str] = []
        rationales: dict[str, str] = {}
        for step in chain.steps:
            server = step.spec.server
            text = self.leaks.rewrite(step_clause(step.spec.description, step.spec.name, server, self.leaks))
            said = text + values_phrase(step.literals, step.links, rng)
            clauses.append(said)
            rationales.setdefault(step.spec.id, f"The request asks to {text}.")
            if server not in goals:
                goals[server] = SubGoal(id=f"g{len(goals) + 1}", description=f"{_card_words(step.spec)}: {text}")
            goal = goals[server]
            owner[step.plan.id] = goal.id
            step.plan.subgoal = goal.id
            goal.tools = list(dict.fromkeys([*goal.tools, step.spec.id]))
            for ref in step.links.values():
                for sid in referenced_steps(ref):
                    dep = owner.get(sid)
                    if dep and dep != goal.id and dep not in goal.depends_on:
                        goal.depends_on.append(dep)
        return list(goals.values()), clauses, rationales

    def _hints(self, chain: Chain) -> tuple[list[str], list[tuple[str, str]]]:
        """Answer lines quoting each server's last answer (resolved at run time) and the literal facts
        the request states, which a constraint may ask to report."""
        hints: list[str] = []
        for server in chain.servers():
            last = [s for s in chain.steps if s.spec.server == server][-1]
            for path in _quotable(last.result)[:1]:
                hints.append(f"{words_of(path.rsplit('.', 1)[-1]).capitalize()}: {{{{{last.plan.id}.{path}}}}}")
        reports = [(words_of(k), str(v)) for s in chain.steps for k, v in s.literals.items()
                   if isinstance(v, str) and printable(v) and not is_text_param(k)]
        return hints, list(dict.fromkeys(reports))

    def _query(self, chain: Chain, clauses: list[str], rng: random.Random) -> str:
        topic = rng.choice(THEME_TOPICS.get(chain.theme, ("a small project",)))
        groups: list[tuple[str, list[str]]] = []
        for step, text in zip(chain.steps, clauses, strict=True):
            if groups and groups[-1][0] == step.spec.server:
                groups[-1][1].append(text)
            else:
                groups.append((step.spec.server, [text]))
        named = [(service_words(card_of(self.universe.tools[next(s.spec.id for s in chain.steps
                                                                   if s.spec.server == server)])), texts)
                 for server, texts in groups]
        return self.leaks.rewrite(request(rng.choice(_OPENERS).format(topic=topic), named, rng))

    def _scenario(self, chain: Chain) -> Scenario:
        """The day, and the people, places and organisations the request names, as entities of the card
        entity the tool is about when the card has one that the tool's name names."""
        entities: list[ScenarioEntity] = []
        for step in chain.steps:
            card = self.cards.get(card_of(step.spec))
            if card is None:
                continue
            kinds = [e.name for e in card.entities]
            named = [k for k in kinds if k in snake(step.spec.name).split("_")]
            values = {k: v for k, v in step.literals.items() if isinstance(v, str) and printable(v) and not is_text_param(k)}
            if named and values:
                entities.append(ScenarioEntity(app=step.spec.server, kind=named[0], id=None, attributes=values))
        notes = [f"The user is working on {chain.theme} matters today."]
        return Scenario(today=f"{chain.today.isoformat()}T09:00:00", entities=_unique(entities), notes=notes)


# --- helpers ----------------------------------------------------------------------------------------------
def _unique(entities: list[ScenarioEntity]) -> list[ScenarioEntity]:
    seen: set[str] = set()
    kept = []
    for e in entities:
        if e.handle not in seen:
            seen.add(e.handle)
            kept.append(e)
    return kept


def _card_words(spec: ToolSpec) -> str:
    return (card_of(spec) or "service").replace("_", " ").capitalize()


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(path, value) of every scalar leaf, the first item of every list, breadth first, paths joined by
    dots (`places.0.name`), at most `MAX_PATHS`."""
    found: list[tuple[str, Any]] = []
    queue: list[tuple[str, Any]] = [(prefix, value)]
    while queue and len(found) < MAX_PATHS:
        path, node = queue.pop(0)
        if isinstance(node, dict):
            queue += [(f"{path}.{k}" if path else str(k), v) for k, v in node.items() if "." not in str(k)]
        elif isinstance(node, list):
            if node:
                queue.append((f"{path}.0" if path else "0", node[0]))
        elif path:
            found.append((path, node))
    return found


def _quotable(result: Any) -> list[str]:
    """Paths of short text fields a person would quote (a name, a title), best first."""
    order = ("name", "title", "summary", "subject", "city", "symbol", "status", "description")
    paths = [(p, v) for p, v in _leaves(result) if isinstance(v, str) and printable(v)]
    ranked = sorted(paths, key=lambda pv: (snake(pv[0].rsplit(".", 1)[-1]) not in order, pv[0].count(".")))
    return [p for p, _ in ranked if not re.search(r"(^|_)(id|ids|url|uri|path|token)$", snake(p.rsplit(".", 1)[-1]))]


def _container(path: str) -> str:
    parts = [p for p in path.split(".")[:-1] if not p.isdigit()]
    return snake(parts[-1]) if parts else ""


def _names_key(via: str, key: str) -> bool:
    """The edge's key is this argument (`base_id` for `baseId`), or its singular (`ids` lists)."""
    return snake(via) == key or snake(via).rstrip("s") == key.rstrip("s")


def _is_key(leaf: str, container: str, via: str) -> bool:
    """The leaf is the edge's key: named so, or a bare `id`/`name` in a list of that entity."""
    if leaf == snake(via):
        return True
    entity = snake(via).rsplit("_", 1)[0]
    return leaf in ("id", "name") and container.rstrip("s") == entity.rstrip("s")


def _fits_list(value: Any, prop: dict[str, Any]) -> bool:
    return value is not None and not isinstance(value, dict | list) and _fits([value], prop)


def _fits(value: Any, prop: dict[str, Any]) -> bool:
    if value is None or isinstance(value, dict) or isinstance(value, list) and prop.get("type") != "array":
        return False
    try:
        jsonschema.validate(value, {k: v for k, v in prop.items() if k != "$ref"})
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True


def _schema_problem(spec: ToolSpec, arguments: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(arguments, spec.input_schema or {})
    except jsonschema.ValidationError:
        return True
    except jsonschema.SchemaError:
        return False
    return False
