"""Rules inferred for a tool no file or card family covers: every harvested tool, and the card-rules-only
view of the sandbox apps. Inferred from the tool's name (operation kind and entity, `cards/operations.py`),
its input schema (ids that must exist, filters, the page size its `page_size` default states) and the
server's world (which kinds it holds). The result is an ordinary `Rule`, so `cworld world rules SERVER`
writes it out for a person to review and correct.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import (
    ID_ARG,
    entity_for,
    entity_named,
    id_stem,
    key_stem,
    keyed_by,
    name_tokens,
    names_its_kind,
    names_many,
    operation_kind,
    reads_signed_in_user,
    same_entity,
    singular_word,
    snake,
    verb_kind,
)
from cworld.engine.rules.arguments import (
    CURSOR_ARGS,
    OFFSET_ARGS,
    PAGE_ARGS,
    PAGING_ARGS,
    SIZE_ARGS,
    argument_checks,
    blank_checks,
    cursor_checks,
    holds_time,
    named_arg,
    value_checks,
)
from cworld.engine.rules.batches import batch_rule
from cworld.engine.rules.derived import derived_fields
from cworld.engine.rules.selectors import selected_kind_rule, selected_record_checks
from cworld.engine.rules.sources import create_source, list_parent, placed_kind, removes_a_part
from cworld.engine.rules.spec import Check, Effect, ListRead, Rule
from cworld.engine.schema.shaping import schema_types
from cworld.engine.world.base import SECRET_FIELDS, ServerWorld
from cworld.engine.world.fresh import freshen
from cworld.engine.world.layout import at, catalog_path, held_view, holder_answer
from cworld.engine.world.named import NAMING_ARGS
from cworld.engine.world.shape import HISTORY_FIELDS, self_key_field, user_pointer
from cworld.values import norm

_REF = ID_ARG
TOKEN_ARGS = ("token", "access_token", "session_token", "auth_token")
QUERY_ARGS = ("query", "q", "search", "text", "keyword", "keywords", "term", "terms", "search_term", "name_contains",
              "search_query", "search_text", "search_string", "search_terms")
DEFAULT_PAGE_SIZE = 20
UNPAGED_CAP = 1000
"""A list that takes no paging argument answers everything it holds, as such services do, up to a server's cap."""


def infer_rule(tool: ToolSpec, card: CategoryCard, world: ServerWorld) -> Rule | None:
    """The generic rule of `tool` on `world`; None when the world holds nothing the tool is about (the
    engine then answers from the schema, marked simulated). A write to a collection kept inside a value held
    once answers that value where the tool's output shows it (`layout.holder_answer`: the cart after a line)."""
    rule = _inferred(tool, card, world)
    if rule is None:
        return None
    rule = with_argument_checks(rule, tool, entity_for(tool, card))
    return _with_derived(rule, tool, card, world) if not rule.writes else holder_shown(rule, tool, world)


def with_argument_checks(rule: Rule, tool: ToolSpec, entity: EntityType | None) -> Rule:
    """The rule with what services refuse in any call's arguments (`arguments.py`) that it does not check yet:
    after the token (a 401 comes before a 400) and before the records are looked up (a 400 before a 404). Not
    for a call that carries credentials: a service answers any wrong ones alike, never saying which part."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    if any(snake(p) in SECRET_FIELDS for p in props):
        return rule
    extra = [c for c in (*argument_checks(props, required), *blank_checks(props, required), *value_checks(entity, props))
             if c not in rule.check]
    if not extra:
        return rule
    signed = next((i for i, c in enumerate(rule.check) if c.auth is None), len(rule.check))
    return rule.model_copy(update={"check": [*rule.check[:signed], *extra, *rule.check[signed:]]})


def holder_shown(rule: Rule, tool: ToolSpec, world: ServerWorld) -> Rule:
    """A write to a collection kept inside a value held once answers that value where the tool's output shows it
    (`layout.holder_answer`), unless the rule gives its own answer."""
    if not rule.writes or (rule.answer is not None and not rule.answer.startswith("{'deleted'")):
        return rule
    path = next((c.in_ for c in rule.check if c.find == "target"), None) or next(
        (e.create for e in rule.do if e.create), None)
    shown = holder_answer(world.kinds.get(path, path) if path else None, world.kinds, tool.output_schema)
    return rule if shown is None else rule.model_copy(update={"answer": shown})


def _with_derived(rule: Rule, tool: ToolSpec, card: CategoryCard, world: ServerWorld) -> Rule:
    """A read whose answer schema asks for a flag the records derive (`expired` from `expires`: `derived.py`)
    shows it computed from the world's record."""
    out = tool.output_schema or {}
    listed, found = rule.list_, next((c for c in rule.check if c.find == "target"), None)
    path = listed.from_ if listed is not None else (found.in_ if found is not None and rule.answer is None else None)
    if path is None:
        return rule
    held = _held_fields(entity_for(tool, card), at(world.state, path))
    shown = f"{entity_for(tool, card).name}_id"
    if listed is not None:
        flags = derived_fields(((out.get("properties") or {}).get(listed.into) or {}).get("items"), out, held, "it")
        view = listed.item or f"{{{shown!r}: key, **it}}"
        return rule if not flags else rule.model_copy(update={"list_": listed.model_copy(update={
            "item": f"{{**{view}, " + ", ".join(f"{k!r}: {v}" for k, v in flags.items()) + "}"})})
    flags = derived_fields(out, out, held, "target")
    return rule if not flags else rule.model_copy(update={
        "answer": f"{{{shown!r}: target_key, **target, " + ", ".join(f"{k!r}: {v}" for k, v in flags.items()) + "}"})


def _inferred(tool: ToolSpec, card: CategoryCard, world: ServerWorld) -> Rule | None:
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    login = _login_rule(tool, props, world)
    if login is not None:
        return login
    op = operation_kind(tool)
    single = _singleton_rule(tool, op, props, world)
    if single is not None:
        return single
    selected = selected_kind_rule(tool, op, world)  # `hubspot-list-objects(objectType)`: the kind it names
    if selected is not None:
        return selected
    required = set(tool.input_schema.get("required") or [])
    # before the tool's own kind is looked for: `add_label(card_id, label_id)` changes a card, whatever labels are
    member = _member_rule(tool, op, card, world, props, required)
    if member is not None:
        return member
    entity = entity_for(tool, card)
    batch = batch_rule(tool, op, card, world, entity, lambda kind: not_found_message(kind, card))
    if batch is not None:  # records nested in the arguments (`entities: [{name, ...}]`), under records that must
        # exist (`remove_estimate_items(estimate_id, item_ids)`)
        refs = reference_checks(props, required, card, world, own=entity, names=False)
        return batch.model_copy(update={"check": [*auth_checks(props, world), *refs, *batch.check]})
    coll = collection_of(entity, world)
    catalog = coll is not None and coll not in world.kinds.values()  # read from the world's reference, never written
    if coll is None or (catalog and op not in ("get", "list", "search")):
        return _referenced_get(tool, op, entity, props, required, card, world)
    own = own_key_arg(entity, props, required, op, card, words=set(name_tokens(tool.name)))
    listing = op in ("list", "search") or (op == "get" and own is None and names_many(tool))
    signed = [*auth_checks(props, world), *selected_record_checks(tool, world)]  # `(object_type, object_id)`
    # a list or a create names no record of its own kind by an id: one there must exist (`list_replies(commentId)`,
    # `create_connector(startNodeId, endNodeId)`), but for a create's own new key
    refs = reference_checks(props, required, card, world, own=entity,
                            own_arg="" if listing or (op == "create" and own is None) else own,
                            names=optional_names(op) and not listing)
    checks = signed + refs
    source = create_source(tool, own, entity, required) if op == "create" else None
    if op == "delete" and not listing and removes_a_part(tool, entity, card):
        source = "act"  # `delete_card_public_link(card_id)`: the card stays
    if source == "act":  # `send_invoice(invoice_id)`: the invoice is sent, none is made
        op = "action"
        placed = _placed(tool, entity, props, required, card, world)
        if isinstance(placed, Rule):
            return placed
        if placed is not None:  # `add_card_to_list(listId, name)` makes a card there
            (entity, coll), op, source = placed, "create", None
            checks = signed + reference_checks(props, required, card, world, own=entity)
    if listing:  # a filter's times and a required query are checked as a write's values are
        checks += [*belongs_checks(checks, card, entity), *cursor_checks(props), *_parent_checks(tool, props, required,
                                                                                                card, world, entity)]
        listed = _list_read(tool, coll, entity, props, card)
        those = _named_many(entity, props, required, listed)
        if those is not None:  # `get_stock_quotes(tickers)`: those records, not every one
            listed = listed.model_copy(update={"where": " and ".join(w for w in (listed.where, those) if w)})
        return Rule(op=op, check=[*checks, *value_checks(entity, props), *blank_checks(props, required)],
                    list_=listed.model_copy(update={"item": _keyed_view(entity, "key", "it")}) if catalog else listed,
                    origin="inferred")
    if op == "create" and (attach := _attach_rule(tool, entity, coll, props, required, card, world)) is not None:
        return attach
    if op == "create" and not names_its_kind(tool, card):
        # `create_change_request` on a card without them makes a record of no kind the world holds: none of
        # the card's first kind; its arguments are still checked
        checks = [*checks, *blank_checks(props, required)]
        return Rule(op="action", read_only=False, check=checks, origin="inferred") if checks else None
    if op == "create":
        if source == "copy" and own is not None:  # `copy_file(fileId)`: made from a file that must exist
            checks.append(Check(find="source", in_=coll, key=record_key(own, entity, world),
                                message=not_found_message(entity, card)))
        # a copy's own key argument names what it copies, never the copy (`entity_copy(handle)`)
        made_from = {p: v for p, v in props.items() if p != own} if source == "copy" else props
        return _create(op, [*checks, *blank_checks(props, required)], coll, entity, made_from, card,
                       _held_fields(entity, at(world.state, coll)), {singular_word(t) for t in name_tokens(tool.name)},
                       self_key_field(at(world.state, coll)), world,
                       given_key=own if source is None and own is not None and key_stem(own) is not None else None)
    key = record_key(own, entity, world) if own is not None else _key_by_field(entity, coll, props, required)
    if key is None and op == "get" and "count" in name_tokens(tool.name) and coll.isidentifier():
        # `get_products_count(query)`, `accelo_count_contacts(search)`: how many the world holds, as its list shows
        where = _list_read(tool, coll, entity, props, card).where or "True"
        return Rule(op=op, read_only=True, check=checks, origin="inferred",
                    answer=f"{{'count': len([1 for key, it in {coll}.items() if {where}])}}")
    if key is None:
        # a call about other records (`research_start(notebook_id)`), or about several of its own kind, none its
        # own (`entity_fillet(handle1, handle2)`, `create_connector(startNodeId, endNodeId)`): they must exist
        # (a read of them, or a call naming none, is left to the schema engine after the guard checks them)
        checks = signed + reference_checks(props, required, card, world, own=None if op != "get" else entity,
                                           names=False)
        return Rule(op=op, read_only=op == "get", check=checks, origin="inferred") if checks else None
    find = Check(find="target", in_=coll, key=key, message=not_found_message(entity, card),
                 optional=own is not None and own not in required)
    own = own or ""
    # the record the tool is about is found first, as a service resolves its path: what it holds (locked, in
    # the trash, not yours) refuses the call before the other records it names (`refs`) are looked up
    if op == "get":
        return Rule(op=op, read_only=True, check=[*signed, *value_checks(entity, props), find, *refs], origin="inferred",
                    answer=_keyed_view(entity, "target_key", "target") if catalog else None)
    if op == "delete":
        return Rule(op=op, check=[*signed, find, *refs], do=[Effect(delete=coll, key="target_key", if_="target is not None")],
                    answer="{'deleted': True, 'id': target_key}", origin="inferred")
    # an act (`send_invoice`, `studio_create(notebook_id, title)`) edits nothing of the record it names: its other
    # arguments are for what it sends or makes, which the world does not hold
    fields = [] if source == "act" else _field_args(entity, props, exclude={own})
    effects = [Effect(set="target", to={snake(f): f"args[{f!r}]"}, if_=f"target is not None and args[{f!r}] is not None")
               for f in fields]  # an optional id argument not given finds no target: nothing to set
    valid = value_checks(entity, props) if effects or op == "action" else []
    expected, bump = _version_check(entity, props) if effects else ([], [])
    # a reference the update writes into the record (`move_document(folder_id)`) is its new parent, not its own
    named = [c for c in checks if c.key not in {f"args[{f!r}]" for f in fields}]
    members = [*_on_record_checks(tool, entity, props, card, world), *belongs_checks([*named, find], card, entity)]
    guards = [*_closed_guard(entity), *(role_guard() if effects else [])]
    return Rule(op=op, read_only=not effects and source != "act", check=[*signed, *valid, find, *guards, *refs, *members, *expected],
                do=[*effects, *bump], origin="inferred")


def _placed(tool: ToolSpec, entity: EntityType, props: dict[str, Any], required: set[str], card: CategoryCard,
            world: ServerWorld) -> Rule | tuple[EntityType, str] | None:
    """An act whose name puts one kind into another: the rule filing the record it names there
    (`addIssueToProject(issueId, projectId)` sets the issue's project), else, naming none, the kind and collection
    it makes there (`add_card_to_list(listId, name)`); None where its name puts no kind the world holds."""
    placed = placed_kind(tool, card)
    placed_in = collection_of(placed, world) if placed is not None and placed is not entity else None
    if placed is None or placed_in is None:
        return None
    attach = _attach_rule(tool, placed, placed_in, props, required, card, world)
    if attach is not None:
        return attach
    return None if any(id_kind(p, card) == (placed, False) for p in props) else (placed, placed_in)


def _parent_checks(tool: ToolSpec, props: dict[str, Any], required: set[str], card: CategoryCard, world: ServerWorld,
                   listed: EntityType) -> list[Check]:
    """A list read under a parent its bare id names (`boond_companies_invoices(id)`): the parent must exist."""
    parent = list_parent(tool, props, required, card, listed)
    coll = collection_of(parent[1], world) if parent is not None else None
    if parent is None or coll is None:
        return []
    return [Check(find=f"ref_{parent[1].name}", in_=coll, key=record_key(parent[0], parent[1], world),
                  message=not_found_message(parent[1], card))]


def belongs_checks(checks: list[Check], card: CategoryCard, own: EntityType) -> list[Check]:
    """Two records a call names, one the other's child (`list_cards(board_id, list_id)`, the list holding its
    `board_id`): the child must be the parent's, as services refuse a list of another board."""
    found = [(c, kind) for c in checks if c.find and c.key and (c.find == "target" or c.find.startswith("ref_"))
             if (kind := own if c.find == "target" else card.entity(c.find[4:])) is not None]
    out = []
    for parent, parent_kind in found:
        field = f"{parent_kind.name}_id"
        for child, child_kind in found:
            if child is parent or field not in child_kind.fields:
                continue
            out.append(Check(fail=f"{child.find} is not None and {parent.find} is not None and "
                                  f"{child.find}.get({field!r}) not in (None, '') and "
                                  f"str({child.find}.get({field!r})) != str({parent.key})", error="invalid",
                             message=f"{child_kind.name.replace('_', ' ')} {{{child.key}}} is not on "
                                     f"{parent_kind.name.replace('_', ' ')} {{{parent.key}}}"))
    return out


def _referenced_get(tool: ToolSpec, op: str, entity: EntityType, props: dict[str, Any], required: set[str],
                    card: CategoryCard, world: ServerWorld) -> Rule | None:
    """A get of a kind the world holds no records of, only references to (a booking's `flight_id`): an id of the
    form the world shows names a record (the schema's other fields are made up, and the answer says so), any
    other id is `not_found`; the schema engine had answered `not_found` for every id it had not invented."""
    if op != "get":
        return None
    own = own_key_arg(entity, props, required, op, card)
    if own is None or not shown_id_forms(world, entity.name):
        return None
    checks = [*auth_checks(props, world), *reference_checks(props, required, card, world, own=None)]
    key = entity.key_field if entity.key_field != "id" else f"{entity.name}_id"
    return Rule(op=op, read_only=True, check=checks, answer=f"{{{key!r}: args[{own!r}]}}", origin="inferred")


#: Name words of a tool that puts a member on a record (the member need not be on it yet).
ADDING_WORDS = frozenset({"add", "invite", "assign", "attach", "include", "join", "share", "grant", "link", "enroll",
                          "subscribe", "tag", "append", "insert", "put", "set", "replace", "update", "edit"})


def _on_record_checks(tool: ToolSpec, entity: EntityType, props: dict[str, Any], card: CategoryCard,
                      world: ServerWorld) -> list[Check]:
    """A change to a record for one of its members (`select_seat(booking_id, traveller_id)`, the record listing
    its travellers): the member must be on the record, as services refuse a seat for someone not on the booking.
    Not for a tool that puts members on (`add_`, `assign_`...)."""
    if {singular_word(t) for t in name_tokens(tool.name)} & ADDING_WORDS:
        return []
    checks = []
    for arg in props:
        named = id_kind(arg, card)
        other = named[0] if named is not None and not named[1] else None
        if other is None or other is entity or collection_of(other, world) is None:
            continue
        field = list_field(entity, {other.name})
        if field is not None:
            have = f"(target.get({field!r}) or [])"
            checks.append(Check(fail=f"target is not None and args[{arg!r}] is not None and isinstance({have}, list) "
                                     f"and {have} and str(args[{arg!r}]) not in [str(m) for m in {have}]",
                                error="not_found",
                                message=f"{other.name.replace('_', ' ')} {{args[{arg!r}]}} is not on "
                                        f"{entity.name.replace('_', ' ')} {{target_key}} ({field}: {{{have}}})"))
    return checks


#: Arguments of an update that name the version it was made on (optimistic concurrency, HTTP's If-Match).
EXPECTED_VERSION_ARGS = ("expected_version", "if_version", "base_version", "if_match_version", "version_expected")


def _version_check(entity: EntityType, props: dict[str, Any]) -> tuple[list[Check], list[Effect]]:
    """An update that names the version it was made on is refused (a conflict) when the record has moved on
    since, and a change it makes is the next version, as services that version their records do."""
    arg = next((p for p in props if snake(p) in EXPECTED_VERSION_ARGS), None)
    if arg is None or "version" not in entity.fields:
        return [], []
    check = Check(fail=f"target is not None and args[{arg!r}] is not None and args[{arg!r}] != target.get('version')",
                  error="conflict", message=f"{entity.name.replace('_', ' ')} {{target_key}} is at version "
                                            f"{{target.get('version')}}, not {{args[{arg!r}]}}: read it again")
    return [check], version_bump()


def version_bump() -> list[Effect]:
    """A change that is the record's next version: the number goes up by one, and where the record keeps its
    past versions (`versions: [{version, content, author, saved_at}]`) the new one is kept there as they are."""
    return [Effect(add="target", to={"version": "1"}, if_="target is not None and isinstance(target.get('version'), int)"),
            *(Effect(set="target", key=repr(f), value=f"history_after(target[{f!r}], target, {ME}, now)",
                     if_=f"target is not None and isinstance(target.get({f!r}), list)") for f in HISTORY_FIELDS)]


def _member_rule(tool: ToolSpec, op: str, card: CategoryCard, world: ServerWorld, props: dict[str, Any],
                 required: set[str]) -> Rule | None:
    """`add_attendees(event_id, person_ids)`, `remove_label(card_id, label)`: a tool whose name names a list
    field of the record one of its id arguments names (not a kind the world holds) adds members to that field
    or removes them (one not there is `not_found`); it neither makes nor deletes a record. The field may be a
    list or a map keyed by member (a new key maps to None: what the service puts there is not known)."""
    if op not in ("create", "delete"):
        return None
    words = {singular_word(t) for t in name_tokens(tool.name)}
    # `create_watchlist` makes a watchlist; `add_to_watchlist(watchlist_id, symbol)` names the one it changes
    changed = {k[0].name for p in props if (k := id_kind(p, card)) is not None and k[0] is not None and not k[1]}
    if any(collection_of(e, world) for e in card.entities if e.name in words and e.name not in changed):
        return None
    for arg in props:
        named = id_kind(arg, card)
        kind = named[0] if named is not None and not named[1] else None
        coll = collection_of(kind, world) if kind is not None else None
        value = next((p for p in props if p != arg and snake(p) not in TOKEN_ARGS and snake(p) not in PAGING_ARGS
                      and p in required), None)
        # the list the name names (`add_attendees`), else the one the value argument names (`symbol` -> `symbols`)
        named_by = words | ({singular_word(snake(value))} if value is not None else set())
        field = list_field(kind, named_by) if kind is not None and coll is not None else None
        if kind is None or coll is None or field is None or value is None:
            continue
        have, given = f"(target.get({field!r}) or [])", f"(args[{value!r}] if isinstance(args[{value!r}], list) else [args[{value!r}]])"
        find = Check(find="target", in_=coll, key=f"args[{arg!r}]", message=not_found_message(kind, card))
        checks = [*auth_checks(props, world), *reference_checks(props, required, card, world, own=kind, own_arg=arg),
                  find, *_closed_guard(kind)]
        if op == "create":
            merged = (f"{{**{have}, **{{str(m): None for m in {given} if m not in {have}}}}} if isinstance({have}, dict) "
                      f"else list({have}) + [m for m in {given} if m not in {have}]")
        else:
            checks.append(Check(fail=f"[m for m in {given} if m not in {have}]", error="not_found",
                                message=f"{{args[{value!r}]}} is not among the {field} of {kind.name.replace('_', ' ')} "
                                        "{target_key}"))
            merged = (f"{{k: v for k, v in {have}.items() if k not in {given}}} if isinstance({have}, dict) "
                      f"else [m for m in {have} if m not in {given}]")
        return Rule(op="update", check=checks, do=[Effect(set="target", key=repr(field), value=merged)],
                    answer="{**target, 'id': target_key}", origin="inferred")
    return None


#: Verbs that put an existing record somewhere (`add_task_to_list`, `firewall-add-droplets`), where the tool takes
#: the record's own id: it is placed, not made.
ATTACH_VERBS = frozenset({"add", "attach", "link", "assign", "apply", "put", "pin"})


def _attach_rule(tool: ToolSpec, entity: EntityType, coll: str, props: dict[str, Any], required: set[str],
                 card: CategoryCard, world: ServerWorld) -> Rule | None:
    """`add_recipe_to_shopping_list(recipe_id, list_name)`, `linear_addIssueToProject(issue_id, project_id)`: an
    add whose required arguments name an existing record of the very kind it would make, and somewhere to put
    it, makes no record. Every record it names must exist; where the record keeps a reference to the other
    kind named (`issue.project_id`), that reference is set; the answer is the record."""
    tokens = [singular_word(t) for t in name_tokens(tool.name)]
    verb = next((i for i, t in enumerate(tokens) if verb_kind(t) == "create"), None)
    if verb is None or tokens[verb] not in ATTACH_VERBS or verb + 1 >= len(tokens) \
            or entity_named(card, tokens[verb + 1]) is not entity:  # the thing added is named right after the verb
        return None
    kinds = {a: k for a in props if (k := id_kind(a, card)) is not None and k[0] is not None}
    own = [a for a in props if a in required and a in kinds and kinds[a][0] is entity]
    others = [a for a in props if a not in own and snake(a) not in TOKEN_ARGS and snake(a) not in PAGING_ARGS]
    placed = bool({"to", "into", "on"} & set(tokens)) or verb > 0 or any(
        a in kinds and kinds[a][0] is not entity for a in others)
    if len(own) != 1 or not others or not placed:
        return None
    checks = [*auth_checks(props, world), *reference_checks(props, required, card, world, own=None)]
    if kinds[own[0]][1]:  # several records placed at once: each must exist; where they go is not kept on them
        return Rule(op="update", check=checks, answer=f"{{'success': True, 'ids': args[{own[0]!r}]}}", origin="inferred")
    held = _held_fields(entity, at(world.state, coll))
    links = {f"{kind.name}_id": a for a in others if a in kinds
             for kind, many in [kinds[a]] if kind is not None and not many and f"{kind.name}_id" in held}
    find = Check(find="target", in_=coll, key=record_key(own[0], entity, world), message=not_found_message(entity, card))
    effects = [Effect(set="target", to={field: f"args[{arg!r}]" for field, arg in links.items()})] if links else []
    return Rule(op="update", check=[*checks, find], do=effects, answer="{**target, 'id': target_key}", origin="inferred")


#: Statuses after which a record takes no more changes (a cancelled booking gets no seat; a closed order no item).
CLOSED_STATUSES = ("cancelled", "canceled", "deleted", "void", "voided")


def _closed_guard(entity: EntityType) -> list[Check]:
    """A change to a cancelled record is refused (a conflict), as services refuse it; undoing the status is a
    family of its own (reopen, restore), never this."""
    kind = entity.name.replace('_', ' ')
    field = next((f for f in ("status", "state") if f in entity.fields), None)
    trash = next((f for f in TRASH_FLAGS if f in entity.fields), None)
    closed = [] if field is None else [
        Check(fail=f"target is not None and norm(target.get({field!r})) in {CLOSED_STATUSES!r}", error="conflict",
              message=f"{kind} {{target_key}} is {{target.get({field!r})}}")]
    trashed = [] if trash is None else [  # a document in the trash is restored before it is edited again
        Check(fail=f"target is not None and target.get({trash!r}) is True", error="conflict",
              message=f"{kind} {{target_key}} is in the trash")]
    return [*closed, *trashed]


#: Roles that read a record but do not change it (Drive's viewer and commenter, a board's observer).
READER_ROLES = ("viewer", "reader", "commenter", "observer", "guest", "read", "read_only", "readonly")


def role_guard() -> list[Check]:
    """A change by someone the record names as a reader is refused: where it maps people to roles and names the
    signed-in user (`access: {person_057: viewer}`), an edit, move, share or restore asks for more."""
    role = f"role_of(target, {ME})"
    return [Check(fail=f"target is not None and {ME} is not None and norm({role}) in {READER_ROLES!r}",
                  error="permission_denied", message=f"you are {{{role}}} of {{target_key}} and cannot change it; "
                                                     "ask its owner for edit access")]


#: A kind's flag for a record moved to the trash (it keeps its id and reads back; changes wait for a restore).
TRASH_FLAGS = ("trashed", "in_trash", "is_trashed")


#: Fields that name one record as well as its id does (`get_user(email)`, `getRepo(slug)`).
NAMING_FIELDS = tuple(dict.fromkeys(("email", "username", "handle", "slug", "path", "name", "title", "code", "symbol",
                                     "url", "number", "sku", "isbn", "domain", "hostname", "ticker", "login",
                                     *NAMING_ARGS)))
"""with every field a server's world gains for the tools naming its records so (`world/named.NAMING_ARGS`)"""


#: The field an argument named for the kind itself names a record by (`branch`: its name; `symbol`: its ticker).
BY_KIND_FIELDS = ("name", "title", "symbol", "code", "slug", "handle", "path")


def _key_by_field(entity: EntityType, coll: str, props: dict[str, Any], required: set[str]) -> str | None:
    """For a tool naming its record by a field (`get_user(email)`): the key of the record whose field equals
    the argument (case and spacing aside), else the argument itself (so a miss is `not_found` naming it).
    None for an open-world kind (any name names a record) or when no required argument is such a field."""
    if entity.open_world or not coll.isidentifier():
        return None
    by_snake = {snake(p): p for p in props if p in required}
    # the field by its own name (`code`), or by the kind's (`course_code`, `application_name`)
    field, name = next(((f, n) for f in (entity.key_field, *NAMING_FIELDS) for n in (f, f"{entity.name}_{f}")
                        if n in by_snake and f in entity.fields), (None, None))
    if field is None and entity.name in by_snake and (props[by_snake[entity.name]] or {}).get("type") not in (
            "object", "array"):  # the kind itself names one (`git_merge(branch)`, `excel_read(sheet)`): by its name
        field, name = next((f for f in (entity.key_field, *BY_KIND_FIELDS) if f in entity.fields), None), entity.name
    if field is None or name is None:
        return None
    arg = f"args[{by_snake[name]!r}]"
    # a record may keep the value under the argument's own name (`branch_name`) rather than the card's (`name`)
    held = f"v.get({field!r})" if name == field else f"(v.get({field!r}) or v.get({name!r}))"
    if field == "filename":  # `report` names `report.docx`: a file service adds its own suffix
        return found_by_field(coll, by_snake[name], f"norm({arg}) in (norm({held}), norm({held}).rsplit('.', 1)[0])")
    return found_by_field(coll, by_snake[name], f"norm({held}) == norm({arg})")


def found_by_field(coll: str, arg: str, test: str) -> str:
    """The key of the first record of `coll` whose fields pass `test` (an expression of `v`, the record, and
    `args`), else the argument itself, so a miss is `not_found` naming it. The synthesizer reads this form
    (`action_space._BY_FIELD`): the argument names a record by a field's value."""
    return f"([k for k, v in {coll}.items() if {test}] + [args[{arg!r}]])[0]"


def _singleton_rule(tool: ToolSpec, op: str, props: dict[str, Any], world: ServerWorld) -> Rule | None:
    """A tool about what the world holds once, not as records: the signed-in user (`get_me`, when the world
    points at a user, `me: usr_0002`), or a named value (`get_settings` -> `settings`, `update_settings` sets
    its fields, `get_balance` -> `balance`)."""
    checks = auth_checks(props, world)
    if reads_signed_in_user(tool, TOKEN_ARGS):
        pointer = user_pointer(world.state)
        if pointer is not None:
            coll, name = pointer
            return Rule(op="get", read_only=True, origin="inferred",
                        check=[*checks, Check(find="target", in_=coll, key=name, message="no signed-in user")])
    if op not in ("get", "update") or any(p in (tool.input_schema.get("required") or []) and snake(p) not in
                                          TOKEN_ARGS for p in props if op == "get"):
        return None
    words = [singular_word(w) for w in name_tokens(tool.name)]
    # a text held once is set by an argument of its name (`set_timezone(timezone)`); else it may be a pointer (`me`)
    named = next((n for w in reversed(words) for n in (w, f"{w}s") if _is_singleton(world.state.get(n)) or (
        op == "update" and isinstance(world.state.get(n), str) and any(snake(p) == n for p in props))), None)
    if named is None or not named.isidentifier():
        return None
    if op == "get":
        value = world.state[named]
        return Rule(op=op, read_only=True, check=checks, origin="inferred",
                    answer=held_view(named, world.kinds) if isinstance(value, dict) else f"{{{named!r}: {named}}}")
    if not isinstance(world.state[named], dict):  # a value held once (`timezone: Europe/Lisbon`): set it whole
        given = next((p for p in props if snake(p) == named), None)
        return None if given is None else Rule(
            op=op, check=checks, origin="inferred", answer=f"{{{named!r}: state[{named!r}]}}",
            do=[Effect(set="state", key=repr(named), value=f"args[{given!r}]", if_=f"args[{given!r}] is not None")])
    fields = [p for p in props if snake(p) in world.state[named]]
    if not fields:
        return None
    return Rule(op=op, check=checks, origin="inferred", answer=named,
                do=[Effect(set=named, to={snake(f): f"args[{f!r}]"}, if_=f"args[{f!r}] is not None") for f in fields])


def _is_singleton(value: Any) -> bool:
    """A value held once (settings, a balance, a counter), not a collection of records."""
    if isinstance(value, dict):
        return bool(value) and not all(isinstance(v, dict) for v in value.values())
    return value is not None and not isinstance(value, str)


LOGIN_WORDS = ({"login"}, {"log", "in"}, {"signin"}, {"sign", "in"}, {"authenticate"})
SECRET_ARGS = SECRET_FIELDS
TOKEN_MINUTES = 60


def _login_rule(tool: ToolSpec, props: dict[str, Any], world: ServerWorld) -> Rule | None:
    """Log in, wherever the world keeps a session token (`auth`): the credentials must be those of the record
    that holds them (the account, the customer), and a fresh token, stored where every `auth` check reads it,
    is the answer. Without it a login answered a made-up token that no later call accepted."""
    words = set(name_tokens(tool.name))
    if not any(w <= words for w in LOGIN_WORDS) or not isinstance(world.state.get("auth"), dict):
        return None
    args = [p for p in props if p not in TOKEN_ARGS]
    holder = _credentials_holder(world, args) or _signed_in_user(world, args)
    lets: list[Check] = []
    if holder is None:
        holder = _credentials_record(world, args)
        if holder is None:
            return None
        lets = [Check(let={"account": holder[0]})]
        holder = ("account", *holder[1:])
    record, fields, user = holder
    wrong = " or ".join(f"str(args[{f!r}]) != str({record}.get({f!r}))" if f in SECRET_ARGS
                        else f"norm(args[{f!r}]) != norm({record}.get({f!r}))" for f in fields)
    if lets:
        return Rule(op="action", check=[*lets, Check(fail=wrong, error="auth", message=WRONG_CREDENTIALS)],
                    do=[Effect(set="auth", to={"token": _token(world, fields, token_minutes(tool))})], origin="inferred",
                    answer="{'token': auth['token']['value'], 'expires_at': auth['token']['expires_at'], "
                           f"'user_id': {user}}}")
    answer = "{'token': auth['token']['value'], 'expires_at': auth['token']['expires_at']" + \
             (f", 'user_id': {user}}}" if user else "}")
    return Rule(op="action", check=[Check(fail=wrong, error="auth", message=WRONG_CREDENTIALS)],
                do=[Effect(set="auth", to={"token": _token(world, fields, token_minutes(tool))})], answer=answer, origin="inferred")


WRONG_CREDENTIALS = "the credentials are wrong: check them and log in again"


def _token(world: ServerWorld, fields: list[str], minutes: int = TOKEN_MINUTES) -> str:
    """A fresh session token (fixed by the seed, the server, the clock and the user) and its expiry."""
    return ("{'value': 'tok_' + secret(seed, " + repr(world.server) + ", now, args[" + repr(fields[0]) + "]), "
            f"'expires_at': later(now, minutes={minutes})}}")


#: A lifetime a login's description states (`valid 10 minutes`, `works for 2 hours`, `expires after 30 min`).
_LIFETIME = re.compile(r"\b(?:valid|works|lasts|expires?|good)\b[^.;]{0,20}?\b(\d+)\s*(min(?:ute)?s?|h(?:ou)?rs?|hours?)\b",
                       re.IGNORECASE)


def token_minutes(tool: ToolSpec) -> int:
    """How long a login's token lasts: what its description says, else `TOKEN_MINUTES`."""
    found = _LIFETIME.search(tool.description or "")
    if found is None:
        return TOKEN_MINUTES
    return int(found.group(1)) * (60 if found.group(2).lower().startswith("h") else 1)


def _credentials_record(world: ServerWorld, args: list[str]) -> tuple[str, list[str], str] | None:
    """A collection whose records hold every credential argument, a secret among them (`staff` with
    username and password): (the expression finding the record the non-secret credentials name, the
    fields, the expression of its key)."""
    names = [a for a in args if a not in SECRET_ARGS]
    if not names or len(names) == len(args):
        return None
    for coll, records in world.state.items():
        first = next(iter(records.values()), None) if isinstance(records, dict) and coll.isidentifier() else None
        if isinstance(first, dict) and all(a in first for a in args):
            match = " and ".join(f"norm(v.get({a!r})) == norm(args[{a!r}])" for a in names)
            found = f"[k for k, v in {coll}.items() if {match}]"
            return (f"({coll}[{found}[0]] if {found} else {{}})", list(args),
                    f"({found} + [None])[0]")
    return None


def _credentials_holder(world: ServerWorld, args: list[str]) -> tuple[str, list[str], str | None] | None:
    """The top-level record of the world whose fields include every credential argument, a secret among them
    (`account` with email and password, `customer` with customer_id and pin): (its name, the fields, None)."""
    for name, value in world.state.items():
        if isinstance(value, dict) and name != "auth" and name.isidentifier():
            fields = [a for a in args if a in value and not isinstance(value[a], dict | list)]
            if fields and set(fields) == set(args) and any(f in SECRET_ARGS for f in fields):
                return name, fields, None
    return None


def _signed_in_user(world: ServerWorld, args: list[str]) -> tuple[str, list[str], str | None] | None:
    """The signed-in user's record when the world points at one (a top-level string naming a record, `me`)
    and that record holds every credential argument (chat's `handle`): (the record expression, the fields,
    the pointer's name)."""
    for pointer, key in world.state.items():
        if not isinstance(key, str) or not pointer.isidentifier():
            continue
        for coll, records in world.state.items():
            record = records.get(key) if isinstance(records, dict) and coll.isidentifier() else None
            if isinstance(record, dict) and args and all(a in record for a in args):
                return f"{coll}[{pointer}]", list(args), pointer
    return None


def _keyed_view(entity: EntityType, key: str, record: str) -> str:
    """A catalog record as the kind shows it: its key under the kind's key field (`symbol`), or `<kind>_id`
    (a reference catalog's records rarely hold their own key)."""
    field = entity.key_field if entity.key_field != "id" else f"{entity.name}_id"
    return f"{{{field!r}: {key}, **{record}}}"


def collection_of(entity: EntityType, world: ServerWorld) -> str | None:
    """Where the world keeps the kind's records: its collection (a layout path too), else a catalog of its
    reference (`layout.catalog_path`: a market's securities, a network's hotels), which rules only read."""
    name = world.kinds.get(entity.name)
    if name is not None and isinstance(at(world.state, name), dict):
        return name
    if not world.reference:
        return None
    key = (id(world), entity.name)
    cached = _CATALOGS.get(key)
    if cached is None or cached[0] is not world:
        if len(_CATALOGS) > _FORMS_LIMIT:
            _CATALOGS.clear()
        fields = [f for f in entity.fields if f != entity.key_field]
        cached = _CATALOGS[key] = (world, catalog_path(fields, world.reference))
    return cached[1]


_CATALOGS: dict[tuple[int, str], tuple[ServerWorld, str | None]] = {}
"""(id of a world, kind) -> (that world, the catalog path of the kind in its reference)"""


def own_key_arg(entity: EntityType, props: dict[str, Any], required: set[str], op: str,
                card: CategoryCard, words: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The argument naming the record the tool is about: `<kind>_id` (any style), `id`, the kind's key field
    (not for an update, where that field may be the new value, while an id argument names the record), else
    the one required id argument that names no other kind of the card (`get_record(recordId)`); of several,
    the one the tool's name `words` name (`delete_ad(adId, campaignId)` -> adId)."""
    by_snake = {snake(p): p for p in props}
    # a bare id in any service's form: DigitalOcean's `UUID`, Grafana's `uid`, Asana's `gid`
    own = next((by_snake[f"{entity.name}_{s}"] for s in ("id", "gid", "iid", "uid", "uuid", "identifier")
                if f"{entity.name}_{s}" in by_snake), None) \
        or next((by_snake[n] for n in ("id", "uuid", "guid", "uid", "gid") if n in by_snake), None)
    if own is not None:
        return own
    ids = [p for p in props if p in required and (named := id_kind(p, card)) is not None
           and not named[1] and named[0] in (None, entity)]
    key = by_snake.get(entity.key_field) if entity.key_field != "id" else None
    if key is not None and not (op == "update" and len(ids) == 1):
        return key
    if len(ids) > 1:
        ids = [p for p in ids if (m := _REF.match(snake(p))) is not None and set(m.group(1).split("_")) <= words] or ids
    if not ids and op != "get":  # a write's only id argument, optional (`browser_click(selector, sessionId?)`)
        every = [p for p in props if id_kind(p, card) is not None]
        named = id_kind(every[0], card) if len(every) == 1 else None
        ids = every if named is not None and not named[1] and named[0] in (None, entity) else []
    return ids[0] if len(ids) == 1 else None


def auth_checks(props: dict[str, Any], world: ServerWorld) -> list[Check]:
    token = next((p for p in TOKEN_ARGS if p in props), None)
    if token is None or not isinstance(world.state.get("auth"), dict):
        return []
    return [Check(auth=token)]


def guard_rule(tool: ToolSpec, card: CategoryCard, world: ServerWorld) -> Rule:
    """What a tool no rule covers still checks before the schema engine makes its answer up: a live token where
    the world keeps tokens, and every id argument of a kind the world holds naming a record that exists (the
    fallback never contradicts the world: `create_label(board_id)` on a board that is not there is refused), its
    own kind's too (`get_free_busy(person_ids)`: no rule reads the people, but they must be there), and what
    services refuse in any call's arguments (`arguments.py`: a limit of -1, `url: example.com`)."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    op = operation_kind(tool)
    rule = Rule(op=op, origin="inferred", check=[*auth_checks(props, world), *reference_checks(
        props, required, card, world, own=None, names=optional_names(op))])
    return with_argument_checks(rule, tool, entity_for(tool, card))


def reference_checks(props: dict[str, Any], required: set[str], card: CategoryCard, world: ServerWorld,
                     own: EntityType | None, own_arg: str | None = None, names: bool = True) -> list[Check]:
    """Every `<kind>_id` argument of another kind the world holds must name an existing record (a list filtered
    by an unknown one too: services differ there, and most of those measured refuse it); of the tool's own kind
    too, but for `own_arg`, the one naming the record the tool is about (`link(workItemId, relatedWorkItemId)`:
    the related item must exist). Without `own_arg` every argument of the own kind is passed over; without
    `own`, every id argument of a kind the world holds is checked. An argument named as a kind names its record
    by name (`_by_its_name`); an optional one too where `names` (not a list's filter: it narrows, it names none)."""
    checks = []
    for name in props:
        if isinstance(props[name], dict) and "enum" in props[name]:
            continue  # the schema lists the ids it takes (eBay's `marketplaceId: EBAY_US | EBAY_AT ...`)
        named = id_kind(name, card)
        if named is None or named[0] is None:
            named = described_kind(props[name], card) or named
        if named is None and (name in required or names) \
                and (by_name := _by_its_name(name, props[name], card, world, own, name in required)):
            checks.append(by_name)
            continue
        other = named[0] if named else None
        if other is None or (other is own and (own_arg is None or name == own_arg)):
            continue
        coll = collection_of(other, world)
        if coll is None:
            checks.extend(_shown_form_check(name, other, bool(named and named[1]), world))
            continue
        if named and named[1]:
            checks.append(Check(fail=f"any(str(k) not in {coll} for k in (args[{name!r}] or []))", error="not_found",
                                message=f"no {other.name.replace('_', ' ')} among {{args[{name!r}]}}"))
        else:
            checks.append(Check(find=f"ref_{other.name}", in_=coll, key=f"args[{name!r}]",
                                optional=name not in required, message=not_found_message(other, card)))
    return checks


def optional_names(op: str) -> bool:
    """Whether an optional argument named as a kind names one of its records in a call of this operation: in an
    act or a read (`dimension_linear(layer)`, `selection_filter(layer)`); not in a create or an update, where it
    is as often a value the record is given (a webhook's `label`)."""
    return op not in ("create", "update", "list", "search")


#: Kinds whose records are texts: an argument of that name is the text to write (`post(message)`), not a name.
_TEXT_KINDS = frozenset({"message", "comment", "note", "text", "content", "query", "description", "body", "prompt",
                         "summary", "reply", "post", "memory", "log", "result", "source", "item", "value", "entry"})


def _by_its_name(arg: str, schema: Any, card: CategoryCard, world: ServerWorld, own: EntityType | None,
                 required: bool = True) -> Check | None:
    """For a text argument named as another kind the world holds (`database`, `collection` of
    `count(database, collection)`, `exchange`, a dimension's `layer`): the record of that kind it names by its name
    must exist; an optional one only when given, and never as the schema's default."""
    kind = snake(arg)
    coll = world.kinds.get(kind)
    if kind in _TEXT_KINDS or coll is None or not coll.isidentifier() or (own is not None and own.name == kind) \
            or not isinstance(world.state.get(coll), dict) or (schema or {}).get("type") not in ("string", None) \
            or "enum" in (schema or {}):
        return None
    entity = next((e for e in card.entities if e.name == kind), None)
    if entity is not None and entity.open_world:
        return None
    fields = tuple(dict.fromkeys(f for f in ((entity.key_field,) if entity else ()) + ("name", "title", f"{kind}_name")
                                 if f != "id"))
    held = ", ".join(f"norm(v.get({f!r}))" for f in fields)
    test = f"isinstance(v, dict) and norm(args[{arg!r}]) in ({held},)"
    message = not_found_message(entity, card) if entity is not None else f"no {kind.replace('_', ' ')} '{{key}}'"
    if not required:  # the schema's default is one the service always has (WooCommerce's tax `class: standard`)
        default = (schema or {}).get("default")
        usual = f" and norm(args[{arg!r}]) != {norm(default)!r}" if isinstance(default, str) else ""
        return Check(fail=f"args[{arg!r}] is not None{usual} and not any({test} for v in {coll}.values())",
                     error="not_found", message=message.replace("{key}", f"{{args[{arg!r}]}}"))
    return Check(find=f"ref_{kind}", in_=coll, key=found_by_field(coll, arg, test), message=message)


def _shown_form_check(arg: str, kind: EntityType, many: bool, world: ServerWorld) -> list[Check]:
    """An id of a kind the world holds no records of, only references to (a booking's `hotel_id`): it must have
    the form of the ids the world shows (`htl_047`, `GH723-20260902`), as a service answers 404 for an id it
    never issued; no check where the world shows none."""
    forms = shown_id_forms(world, kind.name)
    if not forms:
        return []
    pattern = "|".join(f"(?:{f})" for f in sorted(forms))
    given = f"(args[{arg!r}] or [])" if many else f"[args[{arg!r}]]"
    return [Check(fail=f"any(k is not None and not re_match({f'^(?:{pattern})$'!r}, str(k)) for k in {given})",
                  error="not_found", message=f"no {kind.name.replace('_', ' ')} {{args[{arg!r}]}}")]


_RUNS = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^A-Za-z0-9]")
_FORMS: dict[tuple[int, str], tuple[ServerWorld, frozenset[str]]] = {}
"""(id of a world, kind) -> (that world, its forms): the entry holds the world, so its id stays its own"""
_FORMS_LIMIT = 4096


def shown_id_forms(world: ServerWorld, kind: str) -> frozenset[str]:
    """The forms (regular expressions) of the ids of `kind` the world shows: the values of `<kind>_id` across its
    records, the keys of a map named for the kind (`hotel_nights` keyed by hotel) and the ids in a record's list
    named for it (`labels`). Lower-case words
    kept (a prefix such as `htl`), upper-case words, digits and other runs generalized: `GH723-20260902` reads as
    upper-case letters, digits, a dash, digits)."""
    cached = _FORMS.get((id(world), kind))
    if cached is not None and cached[0] is world:
        return cached[1]
    field = f"{kind}_id"
    values = {v for coll in world.state.values() if isinstance(coll, dict)
              for rec in coll.values() if isinstance(rec, dict) and isinstance(v := rec.get(field), str) and v}
    values |= {k for name, coll in world.state.items() if isinstance(coll, dict) and name.startswith(f"{kind}_")
               for k in coll if isinstance(k, str) and any(c.isdigit() for c in k)}
    plural = f"{kind}s"  # a record's list named for the kind holds its ids (a card's `labels: [lbl_0001]`)
    values |= {v for coll in world.state.values() if isinstance(coll, dict)
               for rec in coll.values() if isinstance(rec, dict) and isinstance(rec.get(plural), list)
               for v in rec[plural] if isinstance(v, str) and any(c.isdigit() for c in v)}
    forms = frozenset("".join(_run_form(r) for r in _RUNS.findall(v)) for v in values)
    if len(_FORMS) >= _FORMS_LIMIT:
        _FORMS.clear()
    _FORMS[(id(world), kind)] = (world, forms)
    return forms


def _run_form(run: str) -> str:
    if run.isdigit():
        return r"\d+"
    if run.isupper():
        return "[A-Z]+"
    return re.escape(run)


def id_kind(arg: str, card: CategoryCard) -> tuple[EntityType | None, bool] | None:
    """For an id argument (`order_id`, `orderIds`): the card kind it names (None: no kind of the card) and
    whether it holds several ids; None for an argument that is not an id."""
    stem = id_stem(arg)
    if stem is not None:
        return entity_named(card, stem[0]), stem[1]
    key = key_stem(arg)  # `issueKey` names an issue where the card holds issues (`repo_slug` its repositories)
    kind = (entity_named(card, key[0]) or next((e for e in card.entities if same_entity(key[0], e.name)), None)) \
        if key is not None else None  # `api_key` names nothing
    return (kind, key[1]) if key is not None and kind is not None else keyed_by(arg, card)


#: A description saying an argument takes a record's id or another naming value.
_ID_OR_NAME = re.compile(r"\b(?:ids? or (?:its |the )?(?:name|slug|email|username|key|handle|title|url)|"
                         r"(?:name|slug|email|username|key|handle|title|url) or (?:its |the )?ids?)\b")


def described_kind(schema: Any, card: CategoryCard) -> tuple[EntityType, bool] | None:
    """For an argument whose description says it holds ids of a card kind (`to: "contact ids, not addresses"`,
    `attendees: "person ids to invite"`): that kind and whether it holds several; None otherwise. What a
    service's schema says an argument refers to is checked as an id argument's name is."""
    text = str((schema or {}).get("description") or "").lower() if isinstance(schema, dict) else ""
    if not text or _ID_OR_NAME.search(text) or "enum" in schema:  # a name names it as well; an enum holds no ids
        return None
    if "object" in schema_types(schema):  # "create ad by listing id request body": a body, no id
        return None
    for entity in card.entities:
        if re.search(rf"\b{re.escape(entity.name.replace('_', ' '))}s? ids?\b", text):
            return entity, "array" in schema_types(schema)
    return None


def not_found_message(entity: EntityType, card: CategoryCard) -> str:
    failure = card.failure("not_found", entity.name)
    text = failure.message if failure else "no {entity} '{id}'"
    return text.replace("{entity}", entity.name.replace("_", " ")).replace("{id}", "{key}")


def _field_args(entity: EntityType, props: dict[str, Any], exclude: set[str]) -> list[str]:
    return [p for p in props if snake(p) in entity.fields and p not in exclude and snake(p) not in TOKEN_ARGS]


def field_for(prop: str, entity: EntityType, card: CategoryCard) -> str:
    """The record field an argument fills or filters: its own name in snake case, or the kind's field it names
    (`branch_name`: a branch's `name`), else, for an id argument of
    a kind the entity's one reference field names, that field (`add_comment(task_id)` on a card whose comments
    hold `card_id`, the kind tasks are: a list filtered by `task_id` then finds what the create made)."""
    plain = snake(prop)
    named_field = plain.removeprefix(f"{entity.name}_")  # `branch_name` is a branch's `name`
    if plain not in entity.fields and named_field != plain and named_field in entity.fields \
            and named_field in (*NAMING_FIELDS, "description", "type", "status"):
        return named_field
    named = id_kind(prop, card) if plain not in entity.fields else None
    if named is not None and named[1]:  # `traveller_ids` fills the record's `travellers` list where it has one
        stem = id_stem(prop)
        return (list_field(entity, {stem[0]}) if stem is not None else None) or plain
    if named is None or named[0] is None:
        return plain
    refs = [f for f in entity.fields if (kind := id_kind(f, card)) is not None and kind == (named[0], False)]
    return refs[0] if len(refs) == 1 else plain


def _held_fields(entity: EntityType, records: Any) -> set[str]:
    """The fields a kind's records hold: the card's and those of the world's records (a few looked at)."""
    held = set(entity.fields)
    if isinstance(records, dict):
        for record in islice(records.values(), 20):
            held |= set(record) if isinstance(record, dict) else set()
    return held


def record_key(arg: str, entity: EntityType, world: ServerWorld) -> str:
    """The key an argument names its record by: the argument, or, for a kind keyed by path in a world kept under a
    root folder (a file store's allowed directory), the path under that root (`/scratch/fs/a.md` -> `a.md`)."""
    if entity.fields.get(entity.key_field) == "path" and isinstance(world.state.get("root"), str):
        return f"under_root(args[{arg!r}], root)"
    return f"args[{arg!r}]"


def list_field(entity: EntityType, names: set[str] | frozenset[str]) -> str | None:
    """The kind's first list field whose singular is one of `names` (`travellers` for `traveller`)."""
    return next((f for f, kind in entity.fields.items() if str(kind).startswith("list") and singular_word(f) in names),
                None)


def _option(prop: str, schema: dict[str, Any]) -> bool:
    """A flag, or a list of ids: what a create is told to do, not a value of the record it makes."""
    stem = id_stem(prop)
    return "boolean" in schema_types(schema) or (stem is not None and stem[1])


def fresh_fields(entity: EntityType, given: set[str], words: set[str]) -> dict[str, Any]:
    """What a new record of the kind holds that the call did not give (`world/fresh.freshen`: the state machine's
    first state, the enum member the tool's name names, flags false, empty lists, version 1); its times are
    the rule's stamps, not these."""
    record: dict[str, Any] = {}
    freshen(record, entity, given, words, datetime(2000, 1, 1, tzinfo=UTC))
    return {f: v for f, v in record.items() if entity.fields.get(f) not in ("datetime", "date")}


def _create(op: str, checks: list[Check], coll: str, entity: EntityType, props: dict[str, Any],
            card: CategoryCard, held: set[str], words: set[str], own_key: str | None, world: ServerWorld,
            given_key: str | None = None) -> Rule:
    """The create of one record; `given_key` the argument that is its key (eBay's
    `create_inventory_location(merchantLocationKey)`: the caller names the new location, and a key taken is refused)."""
    # a create pages nothing: `start` or `limit` is a paging argument only where the kind has no such field;
    # and a flag its kind does not hold (`allow_overlap`, `notify`) is an option, not a field, as a list of ids
    # it does not hold is whom to tell or invite (`attendee_ids`), which the record keeps its own way
    given = [p for p in props if snake(p) not in TOKEN_ARGS and (snake(p) not in PAGING_ARGS or snake(p) in held)
             and (field_for(p, entity, card) in held or not _option(p, props[p] or {}))]
    # the made key is the record's own: an id of its kind the call names is another record's (`endNodeId`)
    fields = {f: p for p in given if (f := field_for(p, entity, card)) != own_key or snake(p) == own_key}
    key = record_key(entity.key_field, entity, world) if entity.key_field != "id" and entity.key_field in props else None
    if key is None and given_key is not None and coll.isidentifier():
        key = f"str(args[{given_key!r}])"
        checks = [*checks, Check(fail=f"{key} in {coll}", error="conflict",
                                 message=f"a {entity.name.replace('_', ' ')} '{{args[{given_key!r}]}}' already exists")]
    made_order = _made_order_field(entity)  # what its lists sort by, newest first: a new record is the newest
    stamps = [f for f in dict.fromkeys((*STAMP_FIELDS, *([made_order] if made_order else [])))
              if f in entity.fields and f not in fields]
    creator = next((f for f in CREATOR_FIELDS if f in entity.fields), None)
    fresh = fresh_fields(entity, set(fields) | set(stamps), words)
    entries = [*(f"{f!r}: {v!r}" for f, v in fresh.items()), *([f"{own_key!r}: made_key"] if own_key else []),
               *(f"{f!r}: args[{p!r}]" for f, p in fields.items()), *(f"{f!r}: now" for f in stamps),
               *([f"**({{{creator!r}: {ME}}} if {ME} is not None else {{}})"] if creator and creator not in fields else [])]
    record = "{" + ", ".join(entries) + "}"
    make = Effect(create=coll, id=None if key else entity.id_prefix, key=key, record=record, as_="made")
    return Rule(op=op, check=[*checks, *value_checks(entity, props), *_unique_checks(entity, coll, props)],
                do=[make], origin="inferred")


#: Fields no two records share (a second client with the same email is refused).
UNIQUE_FIELDS = ("email", "username", "handle", "slug")


def _unique_checks(entity: EntityType, coll: str, props: dict[str, Any]) -> list[Check]:
    if not coll.isidentifier():
        return []
    checks = []
    for prop in props:
        field = snake(prop)
        if field in UNIQUE_FIELDS and field in entity.fields:
            checks.append(Check(
                fail=f"args[{prop!r}] is not None and [k for k, v in {coll}.items() if norm(v.get({field!r})) == "
                     f"norm(args[{prop!r}])]", error="conflict",
                message=f"a {entity.name.replace('_', ' ')} with {field} {{args[{prop!r}]}} already exists"))
    return checks


#: Fields a service fills with who made a record: the signed-in user, where the world keeps one (`me`).
CREATOR_FIELDS = ("organizer", "owner", "created_by", "author")
ME = "user_id(state.get('me'))"

#: Fields a service stamps with the time a record is made.
STAMP_FIELDS = ("created_at", "created", "updated_at", "booked_at", "placed_at", "sent_at")
#: A filter's enum value that selects every record (`platform: [all, android, ios]`, default `all`).
EVERY_VALUES = frozenset({"all", "any"})


def _list_read(tool: ToolSpec, coll: str, entity: EntityType, props: dict[str, Any], card: CategoryCard) -> ListRead:
    conditions = []
    for name in props:
        plain = snake(name)
        if plain in TOKEN_ARGS or plain in PAGING_ARGS:
            continue
        if plain in QUERY_ARGS or plain.removeprefix("q_") in QUERY_ARGS:  # `q_keywords`, as Apollo spells it
            conditions.append(f"matches(args[{name!r}], it)")
        elif plain in entity.fields or _REF.match(plain):
            field = field_for(name, entity, card)
            every = [v for v in (props.get(name) or {}).get("enum") or [] if str(v).lower() in EVERY_VALUES]
            anything = f" or args[{name!r}] == {every[0]!r}" if every else ""  # `platform: all` filters nothing
            conditions.append(f"(args[{name!r}] is None{anything} or str(it.get({field!r})).lower() == "
                              f"str(args[{name!r}]).lower())")
    page, size = named_arg(props, PAGE_ARGS, "integer"), named_arg(props, SIZE_ARGS, "integer")
    offset, cursor = named_arg(props, OFFSET_ARGS, "integer"), named_arg(props, CURSOR_ARGS, "string")
    cursor = None if cursor is not None and holds_time(props[cursor]) else cursor  # `after: 2026-01-31` is no cursor
    default = (props.get(size) or {}).get("default") if size else None
    paged = any((page, offset, cursor, size))
    page_size = default if isinstance(default, int) and default > 0 else DEFAULT_PAGE_SIZE if paged else UNPAGED_CAP
    sort, desc = _list_order(entity)
    return ListRead(from_=coll, where=" and ".join(conditions) or None, sort=sort, desc=desc, page=page,
                    page_base=_page_base(props, page), offset=offset, cursor=cursor, size=size, page_size=page_size,
                    into=_items_field(tool), meta=any((page, offset, cursor)))


#: Fields a list of scheduled things is ordered by, soonest first (appointments, events, reminders, tasks).
SCHEDULE_FIELDS = ("start", "starts_at", "start_at", "start_time", "due_at", "due_date", "due", "departs_at")
#: Fields a list of made things is ordered by, newest first (messages, orders, clients, posts).
STAMP_ORDER_FIELDS = ("created_at", "created", "date", "sent_at", "placed_at", "published_at", "ts", "at")


def _named_many(entity: EntityType, props: dict[str, Any], required: set[str], listed: ListRead) -> str | None:
    """For a read of several records named by a field's values (`get_stock_quotes(tickers)`, `open_nodes(names)`,
    `get_component_docs(components)`: the kind's own names), the filter to them; None where no required list names
    records so. A name the world lacks is left out, not refused: batch reads answer what they find (the memory
    server's `open_nodes`, the filesystem's `read_multiple_files`)."""
    if entity.open_world:
        return None
    for arg in props:
        schema = props[arg] or {}
        plain = snake(arg)
        one = singular_word(plain)
        if arg not in required or schema.get("type") != "array" or one == plain or id_stem(arg) is not None \
                or (listed.where and f"args[{arg!r}]" in listed.where):
            continue
        field = one if one in entity.fields else next((f for f in (entity.key_field, *BY_KIND_FIELDS)
                                                       if f in entity.fields), None) if one == entity.name else None
        if field is not None:
            return f"norm(it.get({field!r})) in [norm(x) for x in (args[{arg!r}] or [])]"
    return None


def _list_order(entity: EntityType) -> tuple[str | None, bool]:
    """How services order a kind's lists: scheduled things soonest first, made things newest first (so what
    was just made is on the first page); the world's order for kinds with neither."""
    for name in SCHEDULE_FIELDS:
        if name in entity.fields:
            return f"(str(it.get({name!r}) or ''), str(key))", False
    made = _made_order_field(entity)
    return (f"(str(it.get({made!r}) or ''), str(key))", True) if made else (None, False)


def _made_order_field(entity: EntityType) -> str | None:
    """The field a kind of made things is ordered by (its first `STAMP_ORDER_FIELDS`); None for a scheduled kind."""
    if any(name in entity.fields for name in SCHEDULE_FIELDS):
        return None
    return next((name for name in STAMP_ORDER_FIELDS if name in entity.fields), None)


def _page_base(props: dict[str, Any], page: str | None) -> int:
    """0 when the page argument's schema starts at 0 (its minimum or default), else 1."""
    schema = props.get(page) or {} if page else {}
    return 0 if schema.get("minimum") == 0 or schema.get("default") == 0 else 1


def _items_field(tool: ToolSpec) -> str:
    """Where a page's records go: the output schema's list property (`contacts`), else `items`."""
    props = (tool.output_schema or {}).get("properties") or {}
    return next((name for name, sub in props.items() if isinstance(sub, dict) and sub.get("type") == "array"),
                "items")
