"""The offline drafter of `--pool harvested`: one goal a person has, over three harvested services.

The candidates come as three parts in goal order (`cworld.synth.harvest_pool`): a read on a *source*
server, a write on an *act* server, a write on a *sink* server, each write after the reads of its own
server that find the records it names. Every step runs at once on a probe session of the World Engine
(the world engine a synthesized run uses, on the world of the task's seed), so the goal is chosen from
what the world holds:

1. **find** - the source read runs (a search asks for a record's name drawn from the world); one record
   of its answer with a name or title becomes what the goal is about;
2. **act** - the act write takes that name or title (a reference to the read's answer, picked by
   content: `{{s1.items[title=Login timeout].title}}`) and a text quoting it; the records its id
   arguments name are found by its finders (`{{s2.lists[name=To do].id}}`) or, with no finder, are the
   world's own records, named in the request by their names;
3. **tell** - the sink write records the outcome: the found name and the id of what the act made.

So data flows from each service to the next through the world, every step serves the goal, and every
value is the world's or Faker's. The request is written from `task_synth/templates/harvested.yaml` (a
persona, a goal sentence, clauses per operation and card filled with the world's names), never from
the tools' descriptions. A step the probe refuses fails the part (`BlockFailed`). The task is verified
afterwards by executing the finished plan (`cworld.synth.verify.verify_synthesized`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import jsonschema

from cworld.agents.references import UnresolvedReference, resolve
from cworld.data_model import PlanStep, Scenario, ScenarioEntity, SubGoal, ToolSpec
from cworld.synth.draft import Draft
from cworld.synth.leak import LeakChecker
from cworld.synth.offline.composer import BlockFailed
from cworld.synth.offline.goal_roles import Roles, ToolRole, filler, label_field, plain_value
from cworld.synth.offline.goal_words import GoalWords
from cworld.synth.offline.schema_constraints import chain_constraints
from cworld.synth.offline.schema_values import snake, words_of
from cworld.synth.options import SynthOptions
from cworld.synth.outcome import answer_value
from cworld.synth.sampling import Candidates
from cworld.synth.toolset import ToolUniverse

_KEYS = ("id", "key", "uuid", "number", "slug")
PARTS = ("find", "act", "tell")


@dataclass
class Step:
    """A composed step: the plan step, what the probe answered, the literals the request states, and the
    references it takes from earlier steps."""

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


@dataclass(frozen=True)
class Named:
    """A record the request names by `label` (its name or title): found by step `step` at `path` in its
    answer, or (no step) the world's record `key`. `ref(f)` is how the plan reads its field `f`."""

    entity: str
    label: str
    label_field: str
    key: Any
    step: str | None = None
    path: str = ""
    key_field: str = "id"
    server: str = ""

    def ref(self, field_name: str | None = None) -> Any:
        wanted = field_name or self.key_field
        if self.step is None:
            return self.key if wanted == self.key_field else self.label
        where = f".{self.path}" if self.path else ""
        return "{{" + f"{self.step}{where}[{self.label_field}={self.label}].{wanted}" + "}}"


@dataclass
class Part:
    """One part of the goal: its main step, the records it names (argument -> record) and what the
    request says of its plain values."""

    name: str
    role: ToolRole
    step: Step
    named: dict[str, Named] = field(default_factory=dict)
    said: list[tuple[str, Any]] = field(default_factory=list)


@dataclass
class Goal:
    chain: Chain
    seed: int
    found: Named
    parts: list[Part] = field(default_factory=list)
    made: str | None = None  # how the plan reads the id of what the act made or changed


class GoalDrafter:
    """`engine` is the probe's World Engine (`synth.api._engine`), `roles` what its tools can do there."""

    def __init__(self, universe: ToolUniverse, options: SynthOptions, leaks: LeakChecker, engine: Any,
                 roles: Roles, words: GoalWords) -> None:
        self.universe, self.options, self.leaks, self.engine = universe, options, leaks, engine
        self.roles, self.words = roles, words

    def draft(self, candidates: Candidates, world_seed: int, rng: random.Random, avoid: set[str],
              everything: bool) -> Draft:
        theme = candidates.query.removeprefix("theme: ").strip() or "team"
        goal = self.compose(candidates.tools, world_seed, rng, theme, avoid)
        return self.to_draft(goal, rng, everything)

    # --- composing against the probe ------------------------------------------------------------------
    def compose(self, tool_ids: list[str], world_seed: int, rng: random.Random, theme: str,
                avoid: set[str]) -> Goal:
        from cworld.engine import SessionLog

        groups: list[list[ToolSpec]] = []
        for tool_id in tool_ids:
            spec = self.universe.tools.get(tool_id)
            if spec is None or tool_id in avoid:
                continue
            if groups and groups[-1][0].server == spec.server:
                groups[-1].append(spec)
            else:
                groups.append([spec])
        if len(groups) < len(PARTS):
            raise BlockFailed(f"the goal needs a find, an act and a tell part; the bundle has {len(groups)}")
        world = self.engine.world(world_seed)
        chain = Chain(theme, date.fromisoformat(str(world.now)[:10]))
        probe = _Probe(self.engine, SessionLog(seed=world_seed), chain, self.roles.refused)
        source = self._find(groups[0], probe, world_seed, rng)
        goal = Goal(chain, world_seed, source.named["found"], [source])
        for name, group in zip(PARTS[1:], groups[1:3], strict=True):
            goal.parts.append(self._write(name, group, goal, probe, world_seed, rng))
        return goal

    def _role(self, spec: ToolSpec) -> ToolRole:
        role = self.roles.of(spec)
        if role is None:
            raise BlockFailed(f"{spec.id} is no tool the world engine runs with honest arguments")
        return role

    def _find(self, group: list[ToolSpec], probe: _Probe, seed: int, rng: random.Random) -> Part:
        spec = group[-1]
        role = self._role(spec)
        finders = self._finders(group[:-1], probe, rng)
        step = probe.new_step(spec)
        part = Part("find", role, step)
        self._name_records(part, probe, seed, rng, finders)
        wanted = None
        if role.query_args:
            wanted = self._world_record(spec.server, role.entity, seed, rng)
            required = (spec.input_schema or {}).get("required") or []
            if wanted is None and role.query_args[0] in required:
                self.roles.refused.add(spec.id)
                raise BlockFailed(f"{spec.id}: the world holds no {role.entity} with a name to search for")
            if wanted is not None:
                step.plan.arguments[role.query_args[0]] = step.literals[role.query_args[0]] = wanted.label
        self._plain(part, rng, probe.chain.today)
        answer = probe.run(step)
        found = _pick(answer, role.entity, step.plan.id, rng, wanted.label if wanted else None, spec.server)
        # what the goal is about needs a real name: a generated world's filler word ('technology') is none
        if found is None or wanted is not None and found.label.lower() != wanted.label.lower() \
                or filler(found.label):
            self.roles.refused.add(spec.id)
            raise BlockFailed(f"{spec.id} found no record with a name or title to act on")
        part.named["found"] = found
        return part

    def _finders(self, group: list[ToolSpec], probe: _Probe, rng: random.Random) -> dict[str, Named]:
        """Run the reads that find the records a part's main step names; kind -> the record picked."""
        finders: dict[str, Named] = {}
        for spec in group:
            role = self._role(spec)
            step = probe.new_step(spec)
            found = _pick(probe.run(step), role.entity, step.plan.id, rng, None, spec.server)
            if found is not None:
                finders[role.entity] = found
            else:  # it found nothing to name: the step would serve nothing
                probe.forget(step)
        return finders

    def _write(self, name: str, group: list[ToolSpec], goal: Goal, probe: _Probe, seed: int,
               rng: random.Random) -> Part:
        finders = self._finders(group[:-1], probe, rng)
        role = self._role(group[-1])
        step = probe.new_step(group[-1])
        part = Part(name, role, step)
        self._name_records(part, probe, seed, rng, finders)
        self._carry(part, goal, rng)
        self._plain(part, rng, goal.chain.today)
        answer = probe.run(step)
        if name == "act":
            goal.made = _made_ref(answer, step.plan.id)
        return part

    def _name_records(self, part: Part, probe: _Probe, seed: int, rng: random.Random,
                      finders: dict[str, Named]) -> None:
        """Every record argument takes a record the finders found, else one of the world's."""
        for arg, kind in part.role.kind_args.items():
            named = finders.get(kind) or self._world_record(part.step.spec.server, kind, seed, rng)
            if named is None:
                raise BlockFailed(f"{part.step.spec.id}: the world holds no {kind} with a name to give '{arg}'")
            part.named[arg] = named
            part.step.plan.arguments[arg] = named.ref()
            if named.step is not None:
                part.step.links[arg] = named.ref()
            else:
                part.step.literals[arg] = named.key

    def _carry(self, part: Part, goal: Goal, rng: random.Random) -> None:
        """What the goal carries into a write: the found name as its title, a text quoting it."""
        found, source = goal.found, self.words.service(goal.parts[0].role.card)
        args = part.step.plan.arguments
        if not (part.role.op == "update" and part.role.text_args):  # an update with text notes, not renames
            required = set((part.step.spec.input_schema or {}).get("required") or [])
            for arg in [a for a in part.role.label_args if a in required] or part.role.label_args[:1]:
                args[arg] = part.step.links[arg] = found.ref(found.label_field)
        required = set((part.step.spec.input_schema or {}).get("required") or [])
        for arg in [a for a in part.role.text_args if a in required] or part.role.text_args[:1]:
            if part.name == "act":
                text = self.words.text("act_body", rng, found=found.ref(found.label_field), source=source)
            else:
                act = goal.parts[1]
                made = goal.made or found.ref(found.label_field)
                text = self.words.text("tell", rng, found=found.ref(found.label_field), made=made,
                                       service=self.words.service(act.role.card))
            args[arg] = part.step.links[arg] = text

    def _plain(self, part: Part, rng: random.Random, today: date) -> None:
        """Required plain values: drawn by the parameter's name and schema (`plain_value`); a write's are
        stated in the request, since what it makes holds them."""
        props = (part.step.spec.input_schema or {}).get("properties") or {}
        for arg in part.role.plain_args:
            value = plain_value(arg, props.get(arg) or {}, rng, today)
            part.step.plan.arguments[arg] = part.step.literals[arg] = value
            if not part.role.reads:
                part.said.append((words_of(arg), value))

    def _world_record(self, server: str, kind: str, seed: int, rng: random.Random) -> Named | None:
        """A record of `kind` in the server's world of `seed` with a name a person would use."""
        found = self.engine.world(seed).server(server)
        records = found.collection(kind) if found is not None else None
        if not records:
            return None
        named = [(key, f, rec[f]) for key, rec in list(records.items())[:200] if isinstance(rec, dict)
                 for f in [label_field(rec)] if f is not None]
        if not named:
            return None
        named = [n for n in named if not filler(str(n[2]))] or named
        key, by, label = rng.choice(named)
        return Named(kind, str(label), by, key, server=server)

    # --- the draft ------------------------------------------------------------------------------------
    def to_draft(self, goal: Goal, rng: random.Random, everything: bool) -> Draft:
        chain = goal.chain
        clauses = {p.name: self.words.clause(p, goal, rng) for p in goal.parts}
        source = goal.parts[0].role.card if goal.parts else ""
        query = self.leaks.rewrite(self.words.request(chain.theme, clauses, rng, source))
        hints = [f"{words_of(goal.found.entity).capitalize()}: {goal.found.ref(goal.found.label_field)}"]
        if goal.made:
            hints.append(f"Made: {goal.made}")
        reports = [(f"{words_of(goal.found.entity)} {words_of(goal.found.label_field)}", goal.found.label)]
        constraints = chain_constraints(chain, self.universe, rng, hints, reports,
                                        min_types=self.options.min_constraint_types, everything=everything)
        return Draft(
            query=query,
            tools=list(dict.fromkeys(s.spec.id for s in chain.steps)),
            rationales=self._rationales(goal, clauses),
            constraints=constraints,
            subgoals=self._goals(goal, clauses),
            gold_plan=[s.plan for s in chain.steps],
            final_answer_hints=hints,
            scenario=Scenario(today=f"{chain.today.isoformat()}T09:00:00", entities=self._entities(goal),
                              notes=[f"The user is working on {chain.theme} matters today."]),
        )

    def _entities(self, goal: Goal) -> list[ScenarioEntity]:
        """The records the request names, as the world holds them before the task: the finding and the
        records the writes go to (a task's facts; the plan and its answer are never in it)."""
        entities: dict[str, ScenarioEntity] = {}
        for named in (n for p in goal.parts for n in p.named.values()):
            server = self.engine.world(goal.seed).server(named.server)
            records = server.collection(named.entity) if server is not None else None
            record = (records or {}).get(str(named.key)) if named.key is not None else None
            if isinstance(record, dict):
                entity = ScenarioEntity(app=named.server, kind=named.entity, id=str(named.key),
                                        attributes={k: v for k, v in record.items() if k != "id"})
                entities.setdefault(entity.handle, entity)
        return list(entities.values())

    def _rationales(self, goal: Goal, clauses: dict[str, str]) -> dict[str, str]:
        main = {p.step.spec.id: p.name for p in goal.parts}
        named = {n.step: n for p in goal.parts for n in p.named.values() if n.step}
        out: dict[str, str] = {}
        for step in goal.chain.steps:
            if step.spec.id in main:
                out[step.spec.id] = f"The request asks to {clauses[main[step.spec.id]]}."
            elif step.plan.id in named:
                n = named[step.plan.id]
                out[step.spec.id] = f"It finds the {words_of(n.entity)} '{n.label}' the request names."
        return out

    def _goals(self, goal: Goal, clauses: dict[str, str]) -> list[SubGoal]:
        """A sub-goal per part, each depending on the one before (its data comes from there)."""
        owner = {p.step.spec.server: p for p in goal.parts}
        goals: list[SubGoal] = []
        for n, part in enumerate(goal.parts):
            tools = [s.spec.id for s in goal.chain.steps if s.spec.server == part.step.spec.server]
            goals.append(SubGoal(id=f"g{n + 1}", description=clauses[part.name].capitalize(), tools=tools,
                                 depends_on=[f"g{n}"] if n else []))
            for step in goal.chain.steps:
                if owner.get(step.spec.server) is part:
                    step.plan.subgoal = f"g{n + 1}"
        return goals


class _Probe:
    """The probe session: runs a step, keeps its answer for later references, refuses what fails."""

    def __init__(self, engine: Any, session: Any, chain: Chain, refused: set[str]) -> None:
        self.engine, self.session, self.chain, self.refused = engine, session, chain, refused
        self.results: dict[str, Any] = {}

    def forget(self, step: Step) -> None:
        """Take back the last step (a read: the session's state is unchanged by it)."""
        if self.chain.steps and self.chain.steps[-1] is step:
            self.chain.steps.pop()
            self.results.pop(step.plan.id, None)

    def new_step(self, spec: ToolSpec) -> Step:
        return Step(PlanStep(id=f"s{len(self.chain.steps) + 1}", tool=spec.id, arguments={}), spec, None)

    def run(self, step: Step) -> Any:
        try:
            arguments = resolve(step.plan.arguments, self.results)
        except UnresolvedReference as exc:
            raise BlockFailed(f"{step.spec.id}: {exc}") from None
        try:
            jsonschema.validate(arguments, step.spec.input_schema or {})
        except jsonschema.ValidationError as exc:
            self.refused.add(step.spec.id)
            raise BlockFailed(f"{step.spec.id}: arguments do not fit its schema ({exc.message[:80]})") from None
        except jsonschema.SchemaError:
            pass
        answer = self.engine.respond_sync(step.spec, arguments, self.session)
        self.session.record(step.spec.id, arguments, answer)
        if answer.is_error:
            self.refused.add(step.spec.id)
            raise BlockFailed(f"{step.spec.id} refused in the probe: {answer.text[:120]}")
        value = answer_value(answer)
        step.result = self.results[step.plan.id] = value
        self.chain.steps.append(step)
        return value


# --- reading answers --------------------------------------------------------------------------------------
def _lists(value: Any, path: str = "", depth: int = 0) -> list[tuple[str, list[Any]]]:
    """(path, list) of every list of records in an answer, shallowest first."""
    if isinstance(value, list):
        return [(path, value)] if any(isinstance(v, dict) for v in value) else []
    if not isinstance(value, dict) or depth > 2:
        return []
    found: list[tuple[str, list[Any]]] = []
    for key, sub in value.items():
        if "." not in str(key) and "[" not in str(key):
            found += _lists(sub, f"{path}.{key}" if path else str(key), depth + 1)
    return sorted(found, key=lambda pl: pl[0].count("."))


def _pick(answer: Any, entity: str, step_id: str, rng: random.Random, wanted: str | None,
          server: str) -> Named | None:
    """A record of a read's answer that has a name (the one named `wanted` when it is there)."""
    for path, items in _lists(answer):
        named = [(rec, f) for rec in items[:50] if isinstance(rec, dict) for f in [label_field(rec)] if f]
        if not named:
            continue
        named = [(r, f) for r, f in named if not filler(r[f])] or named
        chosen = next(((r, f) for r, f in named if wanted and r[f].lower() == wanted.lower()), None)
        rec, by = chosen or rng.choice(named)
        key_field = next((k for k in (*_KEYS, f"{entity}_id") if k in rec), by)
        return Named(entity, rec[by], by, rec.get(key_field), step_id, path, key_field, server)
    return None


def _made_ref(answer: Any, step_id: str) -> str | None:
    """Where a write's answer holds the id of what it made or changed (`{{s4.card.id}}`)."""
    if not isinstance(answer, dict):
        return None
    for key in _KEYS:
        if isinstance(answer.get(key), str | int):
            return "{{" + f"{step_id}.{key}" + "}}"
    for name, sub in answer.items():
        if isinstance(sub, dict):
            for key in _KEYS:
                if isinstance(sub.get(key), str | int):
                    return "{{" + f"{step_id}.{name}.{key}" + "}}"
    ids = [k for k, v in answer.items() if snake(k).endswith("_id") and isinstance(v, str | int)]
    return "{{" + f"{step_id}.{ids[0]}" + "}}" if ids else None
