"""The offline drafter of goal shapes (`cworld.synth.goal_shapes`): one request a person makes, composed on
the world engine's world of the task's seed.

Each shape has a compose function that runs its steps at once on a probe session (`goal_chain._Probe`),
so every choice is made from what the world holds: the record a finder lists, the one a stated rule
picks (the highest priority, the cheapest within a budget, the stale ones), the value a condition reads.
Values flow between services by reference (`{{s2.name}}`), so the request needs nothing the world does
not hold, and every value the agent needs is in the request, the world or a tool's answer.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from itertools import islice
from typing import Any

from cworld.data_model import Scenario, ScenarioEntity, SubGoal
from cworld.synth.argument_checks import ends_range
from cworld.synth.draft import Draft
from cworld.synth.goal_shapes import Drawn
from cworld.synth.leak import LeakChecker
from cworld.synth.offline.action_space import RECIPIENT, Unit, date_args, key_value
from cworld.synth.offline.composer import BlockFailed
from cworld.synth.offline.goal_chain import Chain, Named, Step, _lists, _Probe
from cworld.synth.offline.goal_roles import filler, label_field, plain_value
from cworld.synth.offline.schema_constraints import chain_constraints
from cworld.synth.offline.schema_values import printable, snake, words_of
from cworld.synth.offline.templates import Phrasebook
from cworld.synth.options import SynthOptions
from cworld.synth.toolset import ToolUniverse

BOOK = "shapes"
STALE = ("closed", "cancelled", "canceled", "archived", "done", "completed", "inactive", "expired", "resolved",
         "deprecated", "failed", "rejected", "obsolete")
_MONEY = re.compile(r"(^|_)(price|amount|cost|total|fee|rate|budget|value|balance)$")
_NUMBER = re.compile(r"(^|_)(priority|score|count|rating|votes|size|points|severity|estimate|level|quantity)$")
_DATE_FIELD = re.compile(r"(_at|_date|date|_on|updated|created|modified|due)$")
_SKIP = re.compile(r"(^|_)(id|key|uuid|url|email|phone|path|sha)$")


@dataclass
class Work:
    """One composition: the probe, the chain of steps, and what the request and answer will say."""

    drawn: Drawn
    probe: _Probe
    seed: int
    rng: random.Random
    today: date
    fields: dict[str, Any] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)
    reports: list[tuple[str, str]] = field(default_factory=list)
    named: list[Named] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    slot_steps: dict[str, list[str]] = field(default_factory=dict)
    skip_constraints: set[str] = field(default_factory=set)
    worked_out: list[tuple[str, str, str]] = field(default_factory=list)
    """Values the task asks the agent to work out: a report's count, the record a stated rule picks, the
    value a condition reads. (value, the letter the dictated text says for it, what the letter stands for):
    the request never gives away what the agent is graded on finding."""

    @property
    def chain(self) -> Chain:
        return self.probe.chain

    def unit(self, slot: str) -> Unit:
        return self.drawn.units[slot]


def letters_for(said: str, worked_out: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    """`said` with each value the agent works out replaced by its letter (whole words only), and what each
    letter used stands for (`N the number`): the person dictates the words around what they ask for."""
    meanings: dict[str, list[str]] = {}
    for value, letter, meaning in worked_out:
        pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)")
        if value and pattern.search(said):
            said = pattern.sub(letter, said)
            meanings.setdefault(meaning, []).append(letter)
    return said, [f"{', '.join(letters)} {meaning}" for meaning, letters in meanings.items()]


class ShapeDrafter:
    """`engine` is the probe's World Engine; `book` the shapes' phrasings (`shapes.yaml`)."""

    def __init__(self, universe: ToolUniverse, options: SynthOptions, leaks: LeakChecker, engine: Any,
                 book: Phrasebook) -> None:
        self.universe, self.options, self.leaks, self.engine, self.book = universe, options, leaks, engine, book
        self.refused: set[str] = set()

    def draft(self, drawn: Drawn, world_seed: int, rng: random.Random, everything: bool) -> Draft:
        from cworld.engine import SessionLog
        from cworld.synth.offline.shape_compose import COMPOSERS

        world = self.engine.world(world_seed)
        chain = Chain(drawn.shape.name, date.fromisoformat(str(world.now)[:10]))
        probe = _Probe(self.engine, SessionLog(seed=world_seed), chain, self.refused)
        work = Work(drawn, probe, world_seed, rng, chain.today)
        COMPOSERS[drawn.shape.name](self, work)
        return self._to_draft(work, everything)

    # --- primitives -----------------------------------------------------------------------------------
    def service(self, unit: Unit) -> str:
        services = self.book.mapping("services")
        return services.get(unit.card) or self.book.text("unknown_service")

    def listing(self, work: Work, slot: str, scope: Any = None) -> tuple[Step, str, list[dict[str, Any]]]:
        """Run the finder of the slot's record kind (or `scope`, the finder of a record another argument
        names): its step, the answer path of the list and its records that have a name a person would say."""
        unit = work.unit(slot)
        finder = scope or (unit.tool if unit.use == "find" and not unit.queries else work.drawn.finders.get(slot))
        if finder is None:
            raise BlockFailed(f"{unit.id}: its kind has no finder")
        others = self._others(work, slot, unit, None) if finder is unit.tool else {}
        step = _step(work, finder, unit)
        self._name_others(work, step, others, unit.by_name if finder is unit.tool else {})
        if scope is None:
            self._held_values(work, step, finder, unit)
        self._plain(step, finder, work, said=False)
        answer = work.probe.run(step)
        for path, items in _lists(answer):
            named = named_records(items)
            if named:
                self._mark(work, slot, step)
                return step, path, named
        self.refused.add(finder.id)  # its answer holds no name a request can say: no later draw takes it
        raise BlockFailed(f"{finder.id} lists no {'record' if scope else work.unit(slot).kind} with a name")

    def _held_values(self, work: Work, step: Step, finder: Any, unit: Unit) -> None:
        """A listing's required filter among set values (`listTestIds(buildId, status)`) takes the value most
        of the kind's records hold, not a member of the enum drawn at random that no record has: a person lists
        what is there."""
        world = self.engine.world(work.seed).server(unit.server)
        records = [r for r in islice(((world.collection(unit.kind or "") or {}) if world else {}).values(), 200)
                   if isinstance(r, dict)]
        schema = finder.input_schema or {}
        for name in schema.get("required") or []:
            prop = (schema.get("properties") or {}).get(name) or {}
            if name in step.plan.arguments or not isinstance(prop, dict) or not prop.get("enum"):
                continue
            held = Counter(r.get(snake(name)) for r in records if r.get(snake(name)) in prop["enum"])
            if held:
                step.plan.arguments[name] = step.literals[name] = held.most_common(1)[0][0]

    def search(self, work: Work, slot: str) -> tuple[Named, Any]:
        """A find unit on its own: a search for a world record's name that must find it, or a list read
        from which a named record is picked; the record and the step's answer."""
        unit = work.unit(slot)
        if not unit.queries:
            step, path, items = self.listing(work, slot)
            record = work.rng.choice(ordinary(items))
            named = _named(unit.kind or "", record, step.plan.id, path, unit.server)
            work.named.append(named)  # a fact of the scenario: the record the request names
            return named, record
        wanted = self.world_record(work, unit.server, unit.kind or "")
        others = self._others(work, slot, unit, wanted)  # the parents it is searched under are its own
        step = _step(work, unit.tool, unit)
        step.plan.arguments[unit.queries[0]] = step.literals[unit.queries[0]] = wanted.label
        self._name_others(work, step, others, unit.by_name)
        self._plain(step, unit.tool, work, said=False)
        answer = work.probe.run(step)
        for path, items in _lists(answer):
            for record in items[:50]:
                by = label_field(record) if isinstance(record, dict) else None
                if by and str(record[by]).lower() == wanted.label.lower():
                    self._mark(work, slot, step)
                    work.named.append(wanted)
                    return _named(unit.kind or "", record, step.plan.id, path, unit.server), record
        self.refused.add(unit.id)
        raise BlockFailed(f"{unit.id}: a search for '{wanted.label}' did not find it")

    def locate(self, work: Work, slot: str, kind: str, server: str, pick: dict[str, Any] | None = None) -> Named:
        """The record an argument names: `pick` from the slot's listing, a listed one, or the world's own."""
        if pick is None and kind == work.unit(slot).kind and slot in work.drawn.finders:
            step, path, items = self.listing(work, slot)
            pick = work.rng.choice(ordinary(items))
            return _named(kind, pick, step.plan.id, path, server)
        if pick is not None:
            raise BlockFailed("internal error: a pick needs its listing")
        return self.world_record(work, server, kind)

    def world_record(self, work: Work, server: str, kind: str) -> Named:
        """A record of `kind` in the server's world of the task's seed, with a name a person would say."""
        found = self.engine.world(work.seed).server(server)
        records = found.collection(kind) if found is not None else None
        named = [(k, r) for k, r in list((records or {}).items())[:200] if isinstance(r, dict) and label_field(r)
                 and not filler(str(r[label_field(r)]))]
        if not named:
            raise BlockFailed(f"{server}: the world holds no {kind} with a name")
        named = [(k, r) for k, r in named if plain_name(r)] or named
        key, record = work.rng.choice(ordinary(named))
        by = label_field(record) or "name"
        return Named(kind, str(record[by]), by, key_value(records, key), server=server)

    def run(self, work: Work, slot: str, target: Named | None, *, label: Any = None, text: Any = None,
            dates: bool = False, unit: Unit | None = None) -> tuple[Step, Any]:
        """Call the slot's unit (or `unit`, the look that opens what the slot found): its record `target`, the
        records its other ids name, the goal's `label` and `text`, plain values stated in the request; dates
        ordered and in the world's future."""
        unit = unit or work.unit(slot)
        others = self._others(work, slot, unit, target)  # their listings run before the unit's step
        step = _step(work, unit.tool, unit)
        args = step.plan.arguments
        if unit.target is not None:
            if target is None:
                raise BlockFailed(f"internal error: {unit.id} needs a target")
            by = target.label_field if target.label_field in unit.by_name.get(unit.target, ()) else None
            args[unit.target] = target.ref(by)  # found by its name: the name the step that found it shows
            _link(step, unit.target, target, by)
            work.named.append(target)
            for arg in unit.describes:  # `element: "Email"` beside `ref: e3`, as the request names it
                args[arg] = step.literals[arg] = target.label
        self._name_others(work, step, others, unit.by_name)
        required = set((unit.tool.input_schema or {}).get("required") or [])
        if label is not None and unit.labels:
            for arg in [a for a in unit.labels if a in required] or unit.labels[:1]:
                args[arg] = step.links[arg] = label
        if text is not None and unit.texts:
            for arg in [a for a in unit.texts if a in required] or unit.texts[:1]:
                args[arg] = step.links[arg] = text
        if unit.queries and target is not None:
            args[unit.queries[0]] = step.literals[unit.queries[0]] = target.label
        if dates or date_args(unit.tool):
            self._dates(step, unit, work)
        self._plain(step, unit.tool, work, said=unit.use in ("make", "change"))
        answer = work.probe.run(step)
        self._mark(work, slot, step)
        self._dictate(step, unit, work)
        return step, answer

    def open(self, work: Work, slot: str, found: Named, fallback: str) -> tuple[str, Any] | None:
        """Open the record the slot's find found with the slot's look (`Drawn.looks`): a reference to its
        name in the look's answer, and that answer. None when the slot has no look, or its answer does not
        show the name (the step is taken back: a read nothing uses serves no goal) or the probe refuses it:
        `fallback` stands."""
        look = work.drawn.looks.get(slot)
        if look is None:
            return None
        try:
            step, answer = self.run(work, slot, found, unit=look)
        except BlockFailed:  # the probe refused it (kept out of later draws): the find alone serves
            return None
        ref = answer_ref(step, answer, found.label, fallback)
        if ref != fallback:
            return ref, answer
        work.probe.forget(step)
        work.slot_steps[slot].remove(step.plan.id)
        return None

    def _others(self, work: Work, slot: str, unit: Unit, target: Named | None) -> dict[str, Named]:
        """The records the unit's other id arguments name (where it acts: a card's list, the project a
        listing is scoped to): found by listing their kind when the draw has a finder for it (`scopes`),
        else the world's own, named in the request."""
        out: dict[str, Named] = {}
        for arg, kind in unit.refs.items():
            if kind == unit.kind:
                out[arg] = target if target is not None else self.locate(work, slot, kind, unit.server)
                continue
            scope = work.drawn.scopes.get(slot, {}).get(arg)
            keys = self._under(work, unit, kind, target, list(out.values()))
            if scope is not None:
                found, path, items = self.listing(work, slot, scope)
                held = [i for i in items if str(_named(kind, i, "", "", "").key) in keys]
                out[arg] = _named(kind, work.rng.choice(held or items), found.plan.id, path, unit.server)
                continue
            records = [r for k in sorted(keys) if (r := self.record(work, unit.server, kind, k)) is not None]
            out[arg] = work.rng.choice(records) if records else self.locate(work, slot, kind, unit.server)
        return out

    def _under(self, work: Work, unit: Unit, kind: str, target: Named | None, chosen: list[Named]) -> set[str]:
        """The keys of the `kind` records the unit's records are under (a pipeline's `organization_id`) that
        agree with the records already chosen for the call (a repository of the organization chosen): the
        target's own when the unit names one, else those some record of the unit's kind names. So a list read
        under one of them lists something, and a call names records that belong together, as a service asks."""
        world = self.engine.world(work.seed).server(unit.server)
        if world is None:
            return set()
        records = world.collection(unit.kind or "") or {}
        field_name = f"{kind}_id"
        if target is not None and target.key is not None:
            record = records.get(str(target.key))
            held = record.get(field_name) if isinstance(record, dict) else None
            keys = {str(held)} if held not in (None, "") else set()
        else:
            keys = {str(r[field_name]) for r in islice(records.values(), 500)
                    if isinstance(r, dict) and r.get(field_name) not in (None, "")}
        own = world.collection(kind) or {}
        for other in chosen:
            mine = (world.collection(other.entity) or {}).get(str(other.key))
            theirs = mine.get(field_name) if isinstance(mine, dict) else None
            if theirs not in (None, ""):
                keys = {k for k in keys if k == str(theirs)} if keys else {str(theirs)}
            keys = {k for k in keys if str((own.get(k) or {}).get(f"{other.entity}_id") or other.key) == str(other.key)}
        return keys

    def record(self, work: Work, server: str, kind: str, key: str) -> Named | None:
        """The world's `kind` record of `key`, when it has a name a person would say."""
        world = self.engine.world(work.seed).server(server)
        records = world.collection(kind) if world is not None else None
        record = (records or {}).get(key)
        by = label_field(record) if isinstance(record, dict) else None
        if not by or filler(str(record[by])):  # type: ignore[index]
            return None
        return Named(kind, str(record[by]), by, key_value(records, key), server=server)  # type: ignore[index]

    def _name_others(self, work: Work, step: Step, others: dict[str, Named],
                     by_name: dict[str, tuple[str, ...]] | None = None) -> None:
        """Each other record the call names: by a reference to where a step found it, or by its name where the
        rule finds it by that field (`database='shop'`), as the request says it."""
        for arg, other in others.items():
            by = other.label_field if other.label_field in (by_name or {}).get(arg, ()) else None
            step.plan.arguments[arg] = other.ref(by)
            _link(step, arg, other, by)
            work.named.append(other)
            work.said.append(self.book.text("where", entity=words_of(other.entity), value=other.label))

    def _dictate(self, step: Step, unit: Unit, work: Work) -> None:
        """What a write's title and text say, as the person dictates it (resolved against what the earlier
        steps found, the same words the plan writes), so the request alone says what to write."""
        from cworld.agents.references import resolve

        for arg in [*unit.labels, *unit.texts]:
            if arg in step.links:
                said = resolve(step.links[arg], work.probe.results, strict=False)
                if isinstance(said, str) and said:
                    key = "title" if arg in unit.labels else "text"
                    said, meanings = letters_for(said, work.worked_out)
                    work.said.append(self.book.text(f"dictated.{key}", value=said)
                                     + "".join(f", with {m}" for m in meanings))

    def _dates(self, step: Step, unit: Unit, work: Work) -> None:
        """Date arguments of a write: in the world's future, an end after its start (a check-out after the
        check-in); the request states them."""
        props = (unit.tool.input_schema or {}).get("properties") or {}
        names = sorted((n for n in date_args(unit.tool) if n not in step.plan.arguments), key=ends_range)
        start = work.today + timedelta(days=work.rng.randint(3, 21))
        for i, name in enumerate(names):
            day = start + timedelta(days=i * work.rng.randint(1, 3))
            prop = props.get(name) or {}
            timed = prop.get("format") == "date-time" or re.search(r"(_at|time)$", snake(name))
            value = f"{day.isoformat()}T{9 + 2 * i:02d}:00:00Z" if timed else day.isoformat()
            step.plan.arguments[name] = step.literals[name] = value
            if unit.use != "look":
                work.said.append(f"{words_of(name)} {value}")

    def _plain(self, step: Step, spec: Any, work: Work, *, said: bool) -> None:
        unit = next((u for u in [*work.drawn.units.values(), *work.drawn.looks.values()] if u.tool is spec), None)
        props = (spec.input_schema or {}).get("properties") or {}
        names = unit.plain if unit is not None else tuple((spec.input_schema or {}).get("required") or [])
        for name in names:
            if name in step.plan.arguments:
                continue
            value = plain_value(name, props.get(name) or {}, work.rng, work.today)
            step.plan.arguments[name] = step.literals[name] = value
            shown = value[0] if isinstance(value, list) and len(value) == 1 else value  # `to: [address]`
            if said and printable(shown):
                recipient = RECIPIENT.search(snake(name)) or "@" in str(shown)
                work.said.append(f"to {shown}" if recipient else f"{words_of(name)} '{shown}'")

    @staticmethod
    def _mark(work: Work, slot: str, step: Step) -> None:
        work.slot_steps.setdefault(slot, []).append(step.plan.id)

    def phrase(self, key: str, work: Work, **fields: Any) -> str:
        return work.rng.choice(self.book.variants(key, **{**work.fields, **fields}))

    # --- the draft ------------------------------------------------------------------------------------
    def _to_draft(self, work: Work, everything: bool) -> Draft:
        chain = work.chain
        shape = work.drawn.shape.name
        purpose = work.rng.choice(self.book.variants(f"purposes.{shape}"))
        ask = self.phrase(f"requests.{shape}", work)
        said = f" ({', '.join(dict.fromkeys(work.said))})" if work.said else ""  # one clause: `;` splits intents
        query = self.leaks.rewrite(f"{purpose} {ask}".strip().replace(" .", ".") + said.replace("()", ""))
        query = _tidy(query)
        constraints = chain_constraints(chain, self.universe, work.rng, work.hints, work.reports,
                                        min_types=self.options.min_constraint_types, everything=everything,
                                        skip=work.skip_constraints)
        return Draft(
            query=query,
            tools=list(dict.fromkeys(s.spec.id for s in chain.steps)),
            rationales={s.spec.id: f"It serves the request: {ask[:160]}" for s in chain.steps},
            constraints=constraints,
            subgoals=self._goals(work),
            gold_plan=[s.plan for s in chain.steps],
            final_answer_hints=work.hints,
            scenario=Scenario(today=f"{chain.today.isoformat()}T09:00:00", entities=self._entities(work),
                              notes=[f"The user asks for this on {chain.today.isoformat()}."]),
        )

    def _goals(self, work: Work) -> list[SubGoal]:
        by_id = {s.plan.id: s for s in work.chain.steps}
        goals: list[SubGoal] = []
        for slot in work.drawn.shape.slots:
            ids = [i for i in work.slot_steps.get(slot.name, []) if i in by_id]
            if not ids:
                continue
            gid = f"g{len(goals) + 1}"
            unit = work.drawn.units[slot.name]
            goals.append(SubGoal(id=gid, description=f"{slot.name.capitalize()}: {unit.use} "
                                 f"{words_of(unit.kind or unit.tool.name)} in {self.service(unit)}",
                                 tools=list(dict.fromkeys(by_id[i].spec.id for i in ids)),
                                 depends_on=[goals[-1].id] if goals else []))
            for i in ids:
                by_id[i].plan.subgoal = gid
        return goals

    def _entities(self, work: Work) -> list[ScenarioEntity]:
        out: dict[str, ScenarioEntity] = {}
        for named in work.named:
            server = self.engine.world(work.seed).server(named.server)
            records = server.collection(named.entity) if server is not None else None
            record = (records or {}).get(named.key) if named.key is not None else None
            if record is None and named.key is not None:
                record = (records or {}).get(str(named.key))
            if isinstance(record, dict):
                entity = ScenarioEntity(app=named.server, kind=named.entity, id=str(named.key),
                                        attributes={k: v for k, v in record.items() if k != "id"})
                out.setdefault(entity.handle, entity)
        return list(out.values())


# --- helpers ---------------------------------------------------------------------------------------------
def _named(kind: str, record: dict[str, Any], step_id: str, path: str, server: str) -> Named:
    by = label_field(record) or "name"
    fields = {snake(k): k for k in record}  # `connectionId` as `connection_id`
    key_field = next((fields[k] for k in ("id", "key", "uuid", "number", "slug", f"{kind}_id") if k in fields), by)
    return Named(kind, str(record[by]), by, record.get(key_field), step_id, path, key_field, server)


def _step(work: Work, spec: Any, unit: Unit) -> Step:
    """A new step calling `spec`; where it is the unit's own tool, with the arguments every call of the unit
    passes (`Unit.fixed`: the operation a multi-operation tool runs)."""
    step = work.probe.new_step(spec)
    if spec is unit.tool:
        step.plan.arguments.update(unit.fixed)
    return step


def _link(step: Step, arg: str, named: Named, by: str | None = None) -> None:
    """The argument as the record it names: a link to the step that found it (its key, or its field `by`), else
    the literal the request states."""
    if named.step is not None:
        step.links[arg] = named.ref(by)
    else:
        step.literals[arg] = named.label if by else named.key


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).replace(" ,", ",").strip()
    return re.sub(r"\b([Aa]) ([aeiou])", lambda m: f"{m.group(1)}n {m.group(2)}", text)


_NUMBERED = re.compile(r" \(\d+\)$")


def named_records(items: list[Any]) -> list[dict[str, Any]]:
    """The records of a listing a request can name (a name a person would say; a numbered one only when no
    other is there), up to its first page of 50."""
    named = [r for r in items[:50] if isinstance(r, dict) and label_field(r) and not filler(r[label_field(r)])]
    return [r for r in named if plain_name(r)] or named


def ordinary(records: list[Any]) -> list[Any]:
    """The records in an ordinary state, when there are any: not closed, cancelled or archived, nor locked or
    in the trash. A request about a record picked by chance names one a person would act on (a cancelled
    order is not cancelled again, a locked document not read), as the services would refuse the others."""
    kept = [r for r in records if not _set_aside(r[1] if isinstance(r, tuple) else r)]
    return kept or records


def _set_aside(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if any(record.get(flag) is True for flag in _ASIDE_FLAGS):
        return True
    return any(str(record.get(f, "")).lower() in STALE for f in ("status", "state"))


_ASIDE_FLAGS = ("locked", "is_locked", "trashed", "in_trash", "is_trashed", "deleted", "is_deleted", "archived",
                "is_archived", "cancelled", "canceled")


def plain_name(record: dict[str, Any]) -> bool:
    """The record's name is not one a vocabulary had to number to keep unique ('Work (17)')."""
    by = label_field(record)
    return by is not None and not _NUMBERED.search(str(record[by]))


def _path_to(answer: Any, value: str, path: str = "", depth: int = 0) -> str | None:
    """The dotted path where an answer holds `value` (a get's answer: `card.title`), shallowest first."""
    if isinstance(answer, dict) and depth < 3:
        for key, sub in answer.items():
            if isinstance(sub, str) and sub == value and "." not in str(key):
                return f"{path}.{key}" if path else str(key)
        for key, sub in answer.items():
            if isinstance(sub, dict) and "." not in str(key):
                found = _path_to(sub, value, f"{path}.{key}" if path else str(key), depth + 1)
                if found:
                    return found
    return None


def answer_ref(step: Step, answer: Any, value: str, fallback: str) -> str:
    """A reference to `value` in a step's answer (the get a later step reads): a field, or the name of the
    record a list in it holds (`get-schema` answers `[{"name": "Puducherry app"}]`); else `fallback`."""
    path = _path_to(answer, value)
    if path:
        return "{{" + f"{step.plan.id}.{path}" + "}}"
    for where, items in _lists(answer):
        for record in items[:50]:
            by = label_field(record) if isinstance(record, dict) else None
            if by and str(record[by]) == value:
                return item_ref(step, where, record, by)
    return fallback


def item_ref(step: Step, path: str, record: dict[str, Any], field_name: str) -> str:
    by = label_field(record) or "name"
    where = f".{path}" if path else ""
    return "{{" + f"{step.plan.id}{where}[{by}={record[by]}].{field_name}" + "}}"


def numeric_fields(items: list[dict[str, Any]], pattern: re.Pattern[str]) -> list[str]:
    """Fields every item holds as a number (not a flag, not an id), whose name matches `pattern`."""
    first = items[0]
    return [k for k, v in first.items() if isinstance(v, int | float) and not isinstance(v, bool)
            and pattern.search(snake(k)) and not _SKIP.search(snake(k))
            and all(isinstance(i.get(k), int | float) and not isinstance(i.get(k), bool) for i in items)]


def unique_extreme(items: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any], highest: bool
                   ) -> dict[str, Any] | None:
    ranked = sorted(items, key=key, reverse=highest)
    if len(ranked) > 1 and key(ranked[0]) == key(ranked[1]):
        return None
    return ranked[0]


def enum_field(items: list[dict[str, Any]]) -> str | None:
    """A field that sorts the records into a few named groups (a status, a priority word)."""
    for k, v in items[0].items():
        if isinstance(v, str) and not _SKIP.search(snake(k)) and k != label_field(items[0]):
            values = {str(i.get(k)) for i in items}
            if 2 <= len(values) <= 6 and all(len(x) <= 20 and " " not in x.strip() for x in values):
                return k
    return None

