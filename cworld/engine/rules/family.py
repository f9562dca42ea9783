"""Family rules: the operations a category's services share (cancel, assign, reply, checkout), written once
in content (a card's `rules:`, and `category_cards/_families.yaml` for the families every category shares)
and fitted to each tool they match.

A family rule matches a tool by the words of its name (`match`) and by its schema: the arguments it must
take (`takes`, any naming style) and, for a rule `about: record`, the fields the record's kind must have
(`has`). Fitting a rule `about: record` to a tool puts in front of its own steps what inference gives every
tool: the auth check, the reference checks of its other id arguments, and the `find` of the record the tool
names (`target`, `target_key`). So a family rule says only what the operation does (a cancel sets the
status, it does not delete), and holds for `cancelBooking(bookingId)` and `cancel-reservation(id)` alike.
"""

from __future__ import annotations

import re
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import entity_for, name_tokens, operation_kind, singular_word
from cworld.engine.rules.infer import (
    auth_checks,
    collection_of,
    holder_shown,
    id_kind,
    infer_rule,
    not_found_message,
    own_key_arg,
    record_key,
    reference_checks,
    role_guard,
    snake,
)
from cworld.engine.rules.spec import Check, Effect, ListRead, Rule, parse_rule
from cworld.engine.world.base import ServerWorld
from cworld.engine.world.layout import at
from cworld.engine.world.named import thin_kinds

#: In a family rule's `create`/`delete`, the collection of the record the tool is about.
RECORDS = "RECORDS"
#: In a family rule, field -> the values the tool's answer documents for it (`answer_values`).
ANSWER_VALUES = "answer_values"
#: In a family rule, the tool's own description: terms it states in words.
TOOL_DESCRIPTION = "tool_description"
#: In a family rule, the words of the tool's name in the singular: what it makes (`entity_create_circle`: a circle).
TOOL_WORDS = "tool_words"
#: In a family rule, the tool's argument defaults by snake-case name: what the service uses, and so holds.
TOOL_DEFAULTS = "tool_defaults"
_ENUM = re.compile(r"^enum\[(.*)\]$")


def tool_words(tool: ToolSpec) -> list[str]:
    return [singular_word(t) for t in name_tokens(tool.name)]


def family_rules(tool: ToolSpec, card: CategoryCard) -> list[Rule]:
    """The card's family rules whose `match` words all appear in the tool's name, longest match first."""
    words = set(tool_words(tool))
    found: list[tuple[int, int, Rule]] = []
    for i, rule in enumerate(card_rules(card).values()):
        longest = max((len(p.split("_")) for p in rule.match if set(p.split("_")) <= words), default=0)
        if longest:
            found.append((-longest, i, rule))
    return [rule for _, _, rule in sorted(found, key=lambda f: (f[0], f[1]))]


def fitted_family(tool: ToolSpec, card: CategoryCard, world: ServerWorld | None) -> Rule | None:
    """The first family rule that matches the tool and fits its schema and its world, fitted to it; one that
    extends inference also takes the checks of every other matching guard (a family that only refuses:
    `locked_until_unlocked` on a share), which read what that inference binds."""
    matching = [r for r in family_rules(tool, card) if not _writes_read_only(r, tool)]
    for rule in matching:
        fitted = fit(rule, tool, card, world)
        if fitted is not None and rule.extends == "inferred" and world is not None:
            guards = [g for g in matching if _guards(g, rule) and (not g.needs or _holds(world, g.needs))]
            return _guarded(fitted, guards, tool, card, world)
        if fitted is not None:
            return holder_shown(fitted, tool, world) if world is not None else fitted
    return None


def family_guards(tool: ToolSpec, card: CategoryCard) -> list[Check]:
    """The checks of the guard families (refusals only) that match a tool no rule covers and read only its
    arguments and the world, with their names bound: a flight search the schema engine answers still refuses an
    airport code the network does not know, as the category's services do."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    checks: list[Check] = []
    for rule in family_rules(tool, card):
        if rule.extends != "inferred" or rule.has or rule.do or rule.answer is not None or rule.list_ is not None:
            continue
        bound = _taken(rule.takes, props)
        if bound is not None and not any(_names_record(c) for c in rule.check):
            checks += [Check(let=bound), *rule.check]
    return checks


#: What a family binds about the record it is about: a check naming one needs that record.
_RECORD_NAMES = re.compile(r"\b(target|target_key|kind|field_\w+)\b")


def _names_record(check: Check) -> bool:
    text = " ".join(str(v) for v in (check.fail, check.if_, check.message, *(check.let or {}).values()) if v)
    return _RECORD_NAMES.search(text) is not None


def _writes_read_only(rule: Rule, tool: ToolSpec) -> bool:
    """Whether a family that changes the world would run for a tool that declares it changes nothing (MCP's
    `readOnlyHint`: `get_message` "does not mark it read"): the tool's word wins over the category's habit."""
    return tool.annotations.read_only_hint is True and (bool(rule.do) or rule.read_only is False)


def _guards(guard: Rule, chosen: Rule) -> bool:
    """Whether `guard` only refuses, and about another field than the chosen family is about (an unlock is not
    refused for the lock it opens)."""
    if guard is chosen or guard.extends != "inferred" or guard.do or guard.answer is not None or guard.list_:
        return False
    about = {n for alternatives in chosen.has for n in alternatives.split("|")}
    return not any(n in about for alternatives in guard.has for n in alternatives.split("|"))


def _guarded(fitted: Rule, guards: list[Rule], tool: ToolSpec, card: CategoryCard, world: ServerWorld) -> Rule:
    """`fitted` with each guard's checks (its own names bound, its fields those of the record found, as the chosen
    family's are) right after the find of the record (a create's after its own checks)."""
    if not guards:
        return fitted
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    place = next((i + 1 for i, c in enumerate(fitted.check) if c.find == "target"), len(fitted.check))
    entity = _target_entity(fitted, card, world) or entity_for(tool, card)
    added: list[Check] = []
    for guard in guards:
        bound, fields = _taken(guard.takes, props), _had(guard.has, entity)
        if bound is not None and fields is not None:
            added += [Check(let={**bound, **fields}), *guard.check]
    return fitted.model_copy(update={"check": [*fitted.check[:place], *added, *fitted.check[place:]]}) if added else fitted


def fit(rule: Rule, tool: ToolSpec, card: CategoryCard, world: ServerWorld | None) -> Rule | None:
    """`rule` for `tool`: its `takes` bound, and for a rule `about: record` the inferred checks and the find
    of the record in front; None when the tool lacks an argument, or its kind a field, the rule needs."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    bound = _taken(rule.takes, props)
    if bound is None or (rule.needs and not _holds(world, rule.needs)):
        return None
    if _mentions(rule, ANSWER_VALUES):
        bound[ANSWER_VALUES] = repr(answer_values(tool))
    if _mentions(rule, TOOL_DESCRIPTION):  # what the tool states in words ("within 30 days of delivery")
        bound[TOOL_DESCRIPTION] = repr(tool.description or "")
    if _mentions(rule, TOOL_WORDS):
        bound[TOOL_WORDS] = repr(tool_words(tool))
    if _mentions(rule, TOOL_DEFAULTS):
        bound[TOOL_DEFAULTS] = repr({snake(p): s["default"] for p, s in props.items()
                                     if isinstance(s, dict) and isinstance(s.get("default"), (str, int, float, bool))})
    if rule.extends == "inferred":
        return _extended(rule, tool, card, world, bound)
    required = set(tool.input_schema.get("required") or [])
    if rule.about is None:  # what inference checks of any call (a token, the records the ids the family does not
        # read itself name: a browser's `sessionId`) comes first
        text = rule.model_dump_json()
        others = {p: v for p, v in props.items() if p not in text and not any(f"args[{p!r}]" == a for a in bound.values())}
        inferred = [*auth_checks(props, world), *reference_checks(others, required, card, world, own=None)] \
            if world is not None else []
        front = [*inferred, *([Check(let=bound)] if bound else [])]
        return rule if not front else rule.model_copy(update={"check": [*front, *rule.check]})
    if world is None:
        return None
    if rule.about == "parent":
        entity, own = _parent(tool, card, world)
        # the family is written for the card's kinds: a parent the world holds only by name (a kind the tools
        # name that the card lacks, `world/named.py`) is not what its record's fields point at
        coll = collection_of(entity, world) if entity is not None and entity.name not in thin_kinds(world) else None
    else:
        entity = entity_for(tool, card)
        coll = collection_of(entity, world)
        own = own_key_arg(entity, props, required, operation_kind(tool), card) if coll else None
    fields = _had(rule.has, entity) if entity is not None else None
    if entity is None or coll is None or fields is None:
        return None
    if own is None:
        return _on_each(rule, tool, card, world, entity, coll, {**bound, **fields}) if rule.about == "record" else None
    # the record first, then what the family asks of it (locked, not yours), then the other records the call
    # names: a service resolves its path before the body's references
    front = [*auth_checks(props, world),
             Check(find="target", in_=coll, key=record_key(own, entity, world), message=not_found_message(entity, card)),
             Check(let={"kind": repr(entity.name.replace("_", " ")), **bound, **fields}),
             *(role_guard() if rule.about == "record" and not rule.read_only else [])]
    refs = reference_checks(props, required, card, world, own=entity, own_arg=own)
    return rule.model_copy(update={"check": [*front, *rule.check, *refs], "do": [_placed(e, coll) for e in rule.do]})


def _on_each(rule: Rule, tool: ToolSpec, card: CategoryCard, world: ServerWorld, entity: EntityType, coll: str,
             lets: dict[str, str]) -> Rule | None:
    """A family about one record, for a tool naming several of its kind in a list (`mark_read(message_ids)`,
    `archiveCards(cardIds)`): every id must exist (`not_found` names the list), then the family's effects run
    on each; the answer lists the records. Only families whose own steps are all effects: a refusal about one
    record is not the refusal of a list."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    many = next((p for p in props if id_kind(p, card) == (entity, True)), None)
    if many is None or rule.check:
        return None
    keys = f"[str(k) for k in (args[{many!r}] or [])]"
    required = set(tool.input_schema.get("required") or [])
    front = [*auth_checks(props, world), *reference_checks(props, required, card, world, own=entity),
             Check(fail=f"any(k not in {coll} for k in {keys})", error="not_found",
                   message=f"no {entity.name.replace('_', ' ')} among {{args[{many!r}]}}"),
             Check(let={"kind": repr(entity.name.replace("_", " ")), **lets})]
    each = Effect(each=keys, as_="target_key", do=[Effect(let={"target": f"{coll}[target_key]"}),
                                                   *(_placed(e, coll) for e in rule.do)])
    return rule.model_copy(update={"check": front, "do": [each],
                                   "answer": f"{{'items': [{{**{coll}[k], 'id': k}} for k in {keys}]}}"})


def _extended(rule: Rule, tool: ToolSpec, card: CategoryCard, world: ServerWorld | None,
              bound: dict[str, str]) -> Rule | None:
    """The inferred rule with the family's checks after its find of `target` (else after its checks), then its effects
    and the family's; the family's answer where it gives one. None where inference gives no rule."""
    base = infer_rule(tool, card, world) if world is not None else None
    if base is None or world is None:
        return None
    entity = _target_entity(base, card, world) or entity_for(tool, card)
    fields = _had(rule.has, entity)
    if fields is None:
        return None
    # right after the find of the record (a permission before what the record holds), else after every check,
    # with no record (`target` the anchor of its kind a list reads, `list_versions(document_id)`, else None: a
    # guard about the record passes a create by)
    at = next((i + 1 for i, c in enumerate(base.check) if c.find == "target"), None)
    anchor = next((c.find for c in base.check if c.find == f"ref_{entity.name}"), None)
    if at is None and anchor is None and _mentions(rule, "target_key"):
        return None  # a family about the record found does not fit a tool that finds none (`getNotifications()`)
    if operation_kind(tool) == "create" and not any(e.create for e in base.do) and _mentions(rule, "made"):
        return None  # nor one about the record made a create that makes none (`add_card_to_list` makes no list)
    found = {"target": anchor or "None", "target_key": f"{anchor}_key" if anchor else "None"}
    lets = [Check(let={"kind": repr(entity.name.replace("_", " ")), **bound, **fields, **(found if at is None else {})})]
    # a family that changes what inference only read (`append_to_document`) is a change: a reader may not make it
    guard = role_guard() if rule.do and base.read_only and rule.about is None else []
    if at is None:
        checks = [*base.check, *lets, *guard, *rule.check]
    else:  # a check about the arguments alone (a path that names a folder) runs before the record is looked up
        bound_later = {n for c in rule.check if c.let for n in c.let}
        early = [c for c in rule.check if not _reads_target(c, bound_later)]
        late = [c for c in rule.check if c not in early]
        checks = [*base.check[:at - 1], *lets, *early, base.check[at - 1], *guard, *late, *base.check[at:]]
    return base.model_copy(update={"check": checks, "do": [*base.do, *rule.do],
                                   "answer": rule.answer if rule.answer is not None else base.answer,
                                   "list_": _read(base.list_, rule),
                                   "read_only": base.read_only if not rule.do else False})


def _reads_target(check: Check, bound_later: set[str]) -> bool:
    """Whether a check reads the record found (`target`, its key) or a name the family binds after it (a `let`
    stays in its place too)."""
    if check.let is not None or check.find is not None or check.auth is not None:
        return True
    text = " ".join(str(v) for v in (check.fail, check.if_, check.message) if v)
    return any(re.search(rf"\b{re.escape(n)}\b", text) for n in ("target", "target_key", *bound_later))


def _read(base: ListRead | None, rule: Rule) -> ListRead | None:
    """The inferred read under a family: its own answer replaces it; its `list` narrows it (`where`, and-ed
    with inference's filters) and shows each record as its `item` says (a derived field, `overdue`)."""
    if rule.answer is not None or base is None or rule.list_ is None:
        return None if rule.answer is not None else base
    where = " and ".join(f"({w})" for w in (base.where, rule.list_.where) if w)
    return base.model_copy(update={"where": where or None, "item": rule.list_.item or base.item})


def _target_entity(base: Rule, card: CategoryCard, world: ServerWorld) -> EntityType | None:
    """The kind of the record the inferred rule finds as `target` (`add_attendees(event_id, person_ids)` finds
    an event, though its words name none): the fields a guard reads are that record's."""
    coll = next((c.in_ for c in base.check if c.find == "target"), None)
    return next((e for e in card.entities if coll is not None and collection_of(e, world) == coll), None)


def _parent(tool: ToolSpec, card: CategoryCard, world: ServerWorld) -> tuple[EntityType | None, str | None]:
    """(the kind, the argument) of the first id argument naming one record of another kind the world holds:
    what a comment, a reply or a reaction is added to (`add_comment(cardId, text)` -> card)."""
    made = entity_for(tool, card)
    for prop in tool.input_schema.get("properties") or {}:
        named = id_kind(prop, card)
        if named is not None and named[0] is not None and not named[1] and named[0] is not made \
                and collection_of(named[0], world) is not None:
            return named[0], prop
    return None, None


def _holds(world: ServerWorld | None, needs: list[str]) -> bool:
    """Whether the world holds every kind or state entry a family names."""
    return world is not None and all(world.kinds.get(n, n) in world.state or at(world.state, world.kinds.get(n, n))
                                     is not None for n in needs)  # a layout path too (`cart.items`)


def _mentions(rule: Rule, name: str) -> bool:
    """Whether a rule's text names `name` (a binding only some families read)."""
    return re.search(rf"\b{name}\b", rule.model_dump_json()) is not None


#: A description that is only a list of plain words: "processing, shipped, delivered or cancelled".
_LISTED = re.compile(r"^\s*([a-z][\w-]*(?:\s*,\s*(?:or\s+)?[a-z][\w-]*|\s+or\s+[a-z][\w-]*)+)\s*\.?\s*$")


def answer_values(tool: ToolSpec) -> dict[str, list[str]]:
    """Field -> the values the tool's answer documents for it (its enum, or a description that lists them, in the
    order the service lists them; [] where it lists none), for each top-level field of its output schema: what a
    service calls its states (`pending` where the card says `scheduled`, `processing` for `placed`), and which
    fields its records show (`due_utc`)."""
    props: dict[str, Any] = (tool.output_schema or {}).get("properties") or {}
    return {name: _listed(schema) for name, schema in props.items() if isinstance(schema, dict)}


def _listed(schema: dict[str, Any]) -> list[str]:
    if isinstance(schema.get("enum"), list):
        return [str(v) for v in schema["enum"]]
    found = _LISTED.match(str(schema.get("description") or ""))
    return [w for w in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", found.group(1)) if w] if found else []


def _taken(takes: list[str], props: dict[str, Any]) -> dict[str, str] | None:
    """`{arg_<first name>: args[<the tool's own name>]}` per `takes` entry; None when one is missing."""
    by_snake = {snake(p): p for p in props}
    bound = {}
    for alternatives in takes:
        names = alternatives.split("|")
        found = next((by_snake[n] for n in names if n in by_snake), None)
        if found is None:
            return None
        bound[f"arg_{names[0]}"] = f"args[{found!r}]"
    return bound


def _had(has: list[str], entity: EntityType) -> dict[str, str] | None:
    """`{field_<first name>: its name, field_<first name>_values: its enum members}` per `has` entry."""
    bound = {}
    for alternatives in has:
        names = alternatives.split("|")
        found = next((n for n in names if n in entity.fields), None)
        if found is None:
            return None
        enum = _ENUM.match(str(entity.fields[found]).strip())
        members = [m.strip() for m in enum.group(1).split(",")] if enum else []
        bound[f"field_{names[0]}"] = repr(found)
        bound[f"field_{names[0]}_values"] = repr(members)
    return bound


def _placed(effect: Effect, coll: str) -> Effect:
    """An effect with `RECORDS` (in `create`/`delete`) named as the record's collection, nested ones too."""
    update: dict[str, Any] = {}
    if effect.create == RECORDS:
        update["create"] = coll
    if effect.delete == RECORDS:
        update["delete"] = coll
    if effect.do:
        update["do"] = [_placed(e, coll) for e in effect.do]
    return effect.model_copy(update=update) if update else effect


def card_rules(card: CategoryCard) -> dict[str, Rule]:
    """A card's family rules, parsed and validated once per card object."""
    cached = _CARD_RULES.get(id(card))
    if cached is None or cached[0] is not card:
        cached = _CARD_RULES[id(card)] = (card, {name: parse_rule(raw, f"category card {card.name}: rules.{name}")
                                                 for name, raw in (card.rules or {}).items()})
    return cached[1]


_CARD_RULES: dict[int, tuple[CategoryCard, dict[str, Rule]]] = {}
