"""A task's scenario written from the seeded state its gold plan relies on (docs/task-synthesis.md,
"Scenario").

The World Engine seeds its session world from the scenario and must stay plan-blind, so the scenario holds
facts about the world before the episode, never the plan. Which facts: the records of the apps'
`entity_kinds` collections that the run touched (named in a call's arguments or shown in its result,
changed by it, or named in the request), the members of those records (the cards of a board, the messages
of a channel: whatever points at them by a `*_id` field) and, one hop out, every record they all refer to.
Each is the initial record verbatim, keyed as the app keys it. Records the plan creates are absent: they do
not exist before the episode. Kinds no state collection holds (an app's `observed_kinds`: the flights,
hotels and airports of the travel knowledge base) are written from what the run's answers showed of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cworld.data_model import Scenario, ScenarioEntity, ScenarioRelation
from cworld.engine.cards.operations import singular_word, verb_kind
from cworld.engine.world.grounding import LIST_NAMES
from cworld.synth.draft import Draft
from cworld.synth.plan_exec import CallRecord, ExecutionTrace, execute_plan
from cworld.synth.toolset import ToolUniverse

#: Attributes by which a request names a record ("the 'Vendor selection' board").
NAME_FIELDS = ("name", "title", "subject")
#: A collection wrapped in a holder object keeps its records under this member (`shop.cart.items`).
HOLDER_MEMBER = "items"

#: Text members of an answer that say where it is, not which record (a search page's `note`).
PAGE_TEXT = ("note", "message", "cursor", "next_cursor", "next_page_token")

Ref = tuple[str, str, str]  # (app, collection, key)
Observed = dict[str, dict[str, str]]  # app -> observed kind -> the field keying its records in answers


@dataclass
class WorldIndex:
    """The entity records of a seeded state, by app and key, with what points at what."""

    state: dict[str, Any]
    kinds: dict[str, dict[str, str]]
    records: dict[Ref, dict[str, Any]] = field(default_factory=dict)
    by_key: dict[tuple[str, str], list[Ref]] = field(default_factory=dict)
    members: dict[tuple[str, str], list[Ref]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for app, collections in self.kinds.items():
            for collection in collections:
                for key, record in collection_records(self.state.get(app, {}), collection).items():
                    ref = (app, collection, key)
                    self.records[ref] = record
                    self.by_key.setdefault((app, key), []).append(ref)
        for ref, record in self.records.items():
            for name, value in record.items():
                if name.endswith("_id") and isinstance(value, str):
                    self.members.setdefault((ref[0], value), []).append(ref)

    def named(self, app: str, values: Iterable[str]) -> list[Ref]:
        return [ref for v in values for ref in self.by_key.get((app, v), [])]

    def entity(self, ref: Ref) -> ScenarioEntity:
        app, collection, key = ref
        return ScenarioEntity(app=app, kind=self.kinds[app][collection], id=key, attributes=self.records[ref])


def sandbox_kinds() -> dict[str, dict[str, str]]:
    """Every sandbox app's `entity_kinds` (state collection -> entity kind), by app name."""
    from cworld.sandbox.catalog import all_apps

    return {app.name: dict(app.entity_kinds) for app in all_apps() if app.entity_kinds}


def sandbox_observed() -> Observed:
    """Every sandbox app's `observed_kinds` (kind -> key field), by app name."""
    from cworld.sandbox.catalog import all_apps

    return {app.name: dict(app.observed_kinds) for app in all_apps() if app.observed_kinds}


def collection_records(app_state: Any, collection: str) -> dict[str, dict[str, Any]]:
    """The `{id: record}` map of one collection; a holder (`{"items": {...}, "coupon": ...}`) gives its
    `items`."""
    found = app_state.get(collection) if isinstance(app_state, dict) else None
    if not isinstance(found, dict):
        return {}
    inner = found.get(HOLDER_MEMBER)
    if isinstance(inner, dict) and all(isinstance(v, dict) for v in inner.values()):
        found = inner  # no record's fields are all objects: `items` is the holder's record map
    return {str(k): v for k, v in found.items() if isinstance(v, dict)}


def strings_in(value: Any) -> Iterator[tuple[str, str]]:
    """Every string in a JSON value, with the innermost field name it sits under (dict keys included:
    `attendees: {person_id: status}` names people by key)."""
    yield from _walk(value, "")


def _walk(value: Any, name: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield name, str(key)
            yield from _walk(inner, str(key))
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner, name)


def derive_scenario(
    initial: dict[str, Any],
    kinds: dict[str, dict[str, str]],
    calls: list[CallRecord],
    *,
    query: str,
    apps: Iterable[str],
    end: dict[str, Any] | None = None,
    today: str | None = None,
    observed: Observed | None = None,
) -> Scenario:
    """The scenario of a run: `initial` is the seeded state before the first call, `kinds` each app's
    `entity_kinds`, `apps` the task's servers, `end` the state after the run (None when it did not finish:
    no change is then read), `observed` each app's `observed_kinds` (None: the sandbox apps')."""
    servers = list(dict.fromkeys(apps))
    touched = [a for a in servers if a in kinds]
    index = WorldIndex(initial, {a: kinds[a] for a in touched})
    direct = _direct(index, calls, query, touched, end)
    members = [m for ref in direct for m in index.members.get((ref[0], ref[2]), [])]
    near = list(dict.fromkeys([*direct, *members]))
    hops = [
        r for ref in near for _, value in strings_in(index.records[ref]) for r in index.named(ref[0], [value])
    ]
    chosen = set(near) | set(hops)
    ordered = [ref for ref in index.records if ref in chosen]
    seen = sandbox_observed() if observed is None else observed
    entities = [index.entity(ref) for ref in ordered]
    entities += observed_entities(calls, {a: seen[a] for a in servers if a in seen})
    return Scenario(
        today=today,
        entities=entities,
        relations=relations_of(entities),
        notes=_notes(initial, index, touched),
    )


def observed_entities(calls: list[CallRecord], observed: Observed) -> list[ScenarioEntity]:
    """The records of kinds no state collection holds, as the run's answers showed them: every object
    under a member named after the kind (`flight`) or its plural (`flights: [...]`) that has the kind's
    key field. A record shown twice keeps what it showed first (before the run changed anything: seats
    left before the booking) plus the fields only later answers showed; a page's own text fields (`city`
    of a hotel search page) are facts of every record it lists."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for call in calls:
        app = call.tool.split("/", 1)[0]
        if call.ok and app in observed:
            for kind, record in [*_shown(call.result, observed[app]), *_read(call, observed[app])]:
                key = str(record[observed[app][kind]])
                have = found.setdefault((app, kind, key), {})
                for name, value in record.items():
                    if name != observed[app][kind]:
                        have.setdefault(name, value)
    return [ScenarioEntity(app=app, kind=kind, id=key, attributes=attributes)
            for (app, kind, key), attributes in found.items()]


def _shown(value: Any, kinds: dict[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, record) for every record of `kinds` in an answer, with the page's text fields added."""
    if isinstance(value, list):
        for inner in value:
            yield from _shown(inner, kinds)
    if not isinstance(value, dict):
        return
    page = {k: v for k, v in value.items() if isinstance(v, str) and k not in PAGE_TEXT}
    for name, inner in value.items():
        kind = name if name in kinds else singular_word(name)
        listed = isinstance(inner, list)
        if kind not in kinds and listed and name in LIST_NAMES:  # `matches: [{symbol: ...}]`
            for item in inner:
                keyed = _keyed_kinds(item, kinds)
                if len(keyed) == 1:
                    yield keyed[0], {**item, **{k: v for k, v in page.items() if k not in item}}
        if kind in kinds:
            for item in inner if listed else [inner]:
                if isinstance(item, dict) and _scalar(item.get(kinds[kind])) and item.get(kinds[kind]) is not None:
                    yield kind, {**item, **{k: v for k, v in page.items() if listed and k not in item}}
        yield from _shown(inner, kinds)


def _keyed_kinds(item: Any, kinds: dict[str, str]) -> list[str]:
    """The kinds whose key field an answer's object carries."""
    if not isinstance(item, dict):
        return []
    return [kind for kind, key in kinds.items() if item.get(key) is not None and _scalar(item.get(key))]


def _read(call: CallRecord, kinds: dict[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The whole answer of a read that names one record by its key (`get_quote(symbol=PODC)` answers
    `{symbol: PODC, price: ...}`): that record."""
    result = call.result
    if verb_kind(call.tool.split("/", 1)[-1]) != "get" or not isinstance(result, dict):
        return
    keyed = [k for k in _keyed_kinds(result, kinds) if str(call.arguments.get(kinds[k])) == str(result[kinds[k]])]
    if len(keyed) == 1:
        yield keyed[0], {k: v for k, v in result.items() if k not in PAGE_TEXT}


def _direct(
    index: WorldIndex, calls: list[CallRecord], query: str, apps: list[str], end: dict[str, Any] | None
) -> list[Ref]:
    found: list[Ref] = []
    for call in calls:
        app = call.tool.split("/", 1)[0]
        if app in index.kinds:
            seen = [v for _, v in strings_in([call.arguments, call.result])]
            found += index.named(app, seen)
    if end is not None:
        found += [ref for ref, record in index.records.items() if _changed(ref, record, end)]
    found += _in_query(index, query)
    for app in apps:
        me = index.state.get(app, {}).get("me")
        if isinstance(me, str):
            found += index.named(app, [me])
    return list(dict.fromkeys(found))


def _changed(ref: Ref, record: dict[str, Any], end: dict[str, Any]) -> bool:
    app, collection, key = ref
    return collection_records(end.get(app, {}), collection).get(key) != record


def _in_query(index: WorldIndex, query: str) -> list[Ref]:
    lowered = query.lower()
    hits = []
    for ref, record in index.records.items():
        names = [ref[2], *(record.get(f) for f in NAME_FIELDS)]
        if any(isinstance(n, str) and len(n) >= 4 and _phrase_in(n.lower(), lowered) for n in names):
            hits.append(ref)
    return hits


def _phrase_in(phrase: str, text: str) -> bool:
    """`phrase` occurs in `text` as whole words."""
    start = text.find(phrase)
    while start >= 0:
        end = start + len(phrase)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(phrase, start + 1)
    return False


def relations_of(entities: list[ScenarioEntity]) -> list[ScenarioRelation]:
    """A relation for every field of an entity that holds the key of another entity of the same app:
    `account_id` gives `account`, `members: [U_0002]` gives `members`."""
    handles: dict[tuple[str, str], list[str]] = {}
    for e in entities:
        handles.setdefault((e.app, str(e.id)), []).append(e.handle)
    found: list[ScenarioRelation] = []
    for e in entities:
        for name, value in strings_in(e.attributes):
            if not name or name == "id":
                continue
            relation = name.removesuffix("_id") if name != "_id" else name
            for target in handles.get((e.app, value), []):
                if target != e.handle:
                    found.append(ScenarioRelation(subject=e.handle, relation=relation, object=target))
    return unique_relations(found)


def unique_relations(relations: Iterable[ScenarioRelation]) -> list[ScenarioRelation]:
    seen: dict[tuple[str, str, str], ScenarioRelation] = {}
    for r in relations:
        seen.setdefault((r.subject, r.relation, r.object), r)
    return list(seen.values())


def _notes(initial: dict[str, Any], index: WorldIndex, apps: list[str]) -> list[str]:
    """The user's own records and accounts, in words: `me` pointers and the flat singleton records
    (`finance.customer`, `mail.account`) that are no entity collection."""
    notes = []
    for app in apps:
        state = initial.get(app, {})
        if not isinstance(state, dict):
            continue
        for name, value in state.items():
            if name in index.kinds.get(app, {}):
                notes += _holder_note(app, name, value)
                continue
            if name == "me" and isinstance(value, str):
                for ref in index.named(app, [value]):
                    notes.append(f"The user is {index.entity(ref).handle} on {app}.")
            elif isinstance(value, str) and value:
                notes.append(f"{app} {name}: {value}")
            elif isinstance(value, dict) and value and all(_scalar(v) for v in value.values()):
                facts = [f"{k} {v}" for k, v in value.items() if v is not None]
                if facts and not _is_map(value):
                    notes.append(f"{app} {name}: " + ", ".join(facts))
    return notes


def _holder_note(app: str, name: str, value: Any) -> list[str]:
    """What a holder collection says besides its records (`shop.cart.coupon`)."""
    if not isinstance(value, dict) or not isinstance(value.get(HOLDER_MEMBER), dict):
        return []
    facts = [f"{k} {v}" for k, v in value.items() if k != HOLDER_MEMBER and v is not None and _scalar(v)]
    return [f"{app} {name}: " + ", ".join(facts)] if facts else []


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_map(value: dict[str, Any]) -> bool:
    """A lookup table (`last_read: {C_0001: ts}`) rather than one record: its keys are data, not fields."""
    return not all(re.fullmatch(r"[a-z][a-z0-9_]*", str(k)) for k in value)


def scenario_of_trace(
    trace: ExecutionTrace,
    kinds: dict[str, dict[str, str]],
    *,
    query: str,
    apps: Iterable[str],
    observed: Observed | None = None,
) -> Scenario:
    if trace.initial_state is None:
        return Scenario()
    return derive_scenario(
        trace.initial_state,
        kinds,
        trace.calls,
        query=query,
        apps=apps,
        end=trace.end_state,
        today=trace.started_at,
        observed=observed,
    )


def merge_stated(
    derived: Scenario, stated: Scenario, kinds: dict[str, dict[str, str]]
) -> tuple[Scenario, list[str]]:
    """The derived scenario plus what a drafter stated that the seeded state cannot say: entities of apps
    without seeded collections (a schema-only CRM) or of kinds no collection holds (a flight). A stated
    entity of a seeded collection is taken from the state when derived, else dropped (it does not exist);
    the second value says what was dropped."""
    seeded = {(app, kind) for app, collections in kinds.items() for kind in collections.values()}
    have = {e.handle for e in derived.entities}
    kept, dropped = [], []
    for e in stated.entities:
        if e.handle in have:
            continue
        if (e.app, e.kind) in seeded:
            dropped.append(e.handle)
        else:
            kept.append(e)
            have.add(e.handle)
    entities = [*derived.entities, *kept]
    relations = [
        *derived.relations,
        *(r for r in stated.relations if r.subject in have and r.object in have),
    ]
    merged = Scenario(
        today=derived.today or stated.today,
        entities=entities,
        relations=unique_relations(relations),
        notes=list(dict.fromkeys([*derived.notes, *stated.notes])),
    )
    return merged, dropped


def write_scenario(
    draft: Draft,
    universe: ToolUniverse,
    world_seed: int,
    *,
    trace: ExecutionTrace | None = None,
    kinds: dict[str, dict[str, str]] | None = None,
    observed: Observed | None = None,
) -> tuple[Scenario, list[str]]:
    """A draft's scenario: written from the seeded state its run relied on (`trace`, the verified run),
    plus what the drafter stated that no seeded collection holds (`merge_stated`). Without a trace (a task
    with schema-only tools is not executed) its live steps run up to the first that fails, for what they
    show. Also returns the stated sandbox entities dropped because the world has no such record."""
    kinds = sandbox_kinds() if kinds is None else kinds
    if trace is None:
        live = [s for s in draft.gold_plan if universe.executable(s.tool)]
        trace = execute_plan(live, world_seed)
    derived = scenario_of_trace(trace, kinds, query=draft.query, apps=draft.servers(), observed=observed)
    return merge_stated(derived, draft.scenario, kinds)


def state_scenario(state: dict[str, Any], kinds: dict[str, dict[str, str]], *, today: str | None = None) -> Scenario:
    """A scenario of a whole seeded state: every record of every app's `entity_kinds` collections, the
    relations between them and the notes on the user's own records. What a caller gives the engine when
    the calls it replays may touch anything the state holds (`benchmarks/engine_fidelity.py`), rather
    than what one run relied on (`derive_scenario`)."""
    apps = [app for app in kinds if app in state]
    index = WorldIndex(state, {app: kinds[app] for app in apps})
    entities = [index.entity(ref) for ref in index.records]
    return Scenario(today=today, entities=entities, relations=relations_of(entities), notes=_notes(state, index, apps))
