"""Tools that take their records as a list: a batch of objects to make (`create_entities(entities=[{name, ...}])`),
names to delete (`delete_entities(entityNames=[...])`), objects that each name a record and the values to add to
or take from one of its lists (`add_observations(observations=[{entityName, contents}])`), objects to delete by
their fields (`delete_relations(relations=[{from, to, relationType}])`), and objects that each name a record of the
tool's kind by its id, to read, change or delete it (`update_tasks(items=[{task_id, content}])`, HubSpot's
`batch-read-objects(inputs=[{id}])`, WooCommerce's `products/batch(update=[{id, price}])`).

Inference reads one record per call from flat arguments; these schemas nest the records, so a call ran no rule
and the engine made its answer up. Each batch rule runs its effect once per item (`each`), keyed as the kind's
records are keyed (by name where the kind's key field is the name), and refuses an item naming no record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.kinds import head_noun
from cworld.engine.cards.operations import ID_ARG, entity_named, name_tokens, singular_word, snake
from cworld.engine.rules.spec import Check, Effect, Rule
from cworld.engine.schema.shaping import schema_types
from cworld.engine.world.base import ServerWorld
from cworld.engine.world.layout import at

#: An item property naming a record of a kind: `entityName`, `entity_id`, `nodeName`.
_NAMING = re.compile(r"^(?P<kind>[a-z][a-z0-9_]*?)_(?P<by>name|id)$")
#: An argument listing the names or ids of the tool's own kind: `entityNames`, `entity_ids`, `names`.
_KEYS = re.compile(r"^(?:(?P<kind>[a-z][a-z0-9_]*?)_)?(?P<by>name|id)s$")
_REMOVE_WORDS = {"delete", "remove", "drop", "clear", "unset"}


def batch_rule(tool: ToolSpec, op: str, card: CategoryCard, world: ServerWorld, own: EntityType,
               message: Callable[[EntityType], str]) -> Rule | None:
    """The batch rule of `tool`, whose own kind is `own`; None when no argument holds a batch. `message` gives a
    kind's not-found text (`{key}` the name an item gave)."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    for arg, schema in props.items():
        items = _object_items(schema)
        if items is None:
            continue
        named = _named_in_items(items, card, world)
        members = _member_values(tool, arg, items, named, world, message(named[1])) if named is not None else None
        if members is not None:
            return members
        each = _keyed_each(op, arg, items, own, world, message(own)) \
            if op in ("get", "update", "delete") and _batch_of(arg, own, props) else None
        if each is not None:
            return each
        coll = _collection(own, world)
        if coll is None:
            continue
        if op == "create" and own.key_field == "id" and not world.keys.get(coll) and _batch_of(arg, own, props):
            return _make_each(arg, schema, own, coll)
        if singular_word(snake(arg)) == own.name:
            if op == "delete":
                return _delete_matching(arg, items, own, world)
            fields = world.keys.get(coll) or ([own.key_field] if own.key_field != "id" else [])
            if fields and all(f in items for f in fields):  # else one record per call, as inferred
                return _create_each(arg, items, own, world, fields)
    keys = next((a for a in props if _names_own(a, props[a], own)), None)
    if keys is None or not _collection(own, world):
        return None
    if op == "delete":
        return _delete_named(keys, props[keys], own, world, message(own))
    if op == "get" and own.key_field == "id" and _reads_the_records(tool, own):
        return _read_keyed(keys, props[keys], own, world, message(own))
    return None


#: Head nouns of a read that answers the records themselves (`get_nodes_info`, `threads_get_posts_batch`).
_RECORD_HEADS = frozenset({"info", "detail", "data", "batch", "metadata", "record", "content", "page"})


def _reads_the_records(tool: ToolSpec, own: EntityType) -> bool:
    """Whether a read of several ids answers those records, not something about them the world does not hold
    (`get_working_location(person_ids)`, `get_ports_risk(port_ids)`)."""
    head = head_noun(tool, None)
    return head is None or singular_word(head) in (own.name, *_RECORD_HEADS)


def _object_items(schema: Any) -> dict[str, Any] | None:
    """The item properties of an array-of-objects argument; None for any other argument."""
    if not isinstance(schema, dict) or "array" not in schema_types(schema):
        return None
    item = schema.get("items")
    props = item.get("properties") if isinstance(item, dict) else None
    return props if isinstance(props, dict) and props else None


def _collection(entity: EntityType, world: ServerWorld) -> str | None:
    """The kind's own collection, named so a rule's expressions can name it (`entities`); never a reference
    catalog (`infer.collection_of` finds those too), which a batch would write."""
    coll = world.kinds.get(entity.name)
    return coll if coll is not None and isinstance(at(world.state, coll), dict) and coll.isidentifier() else None


def _named_in_items(items: dict[str, Any], card: CategoryCard, world: ServerWorld) -> tuple[str, EntityType] | None:
    """(the item property, the kind) where each item names one record of a kind the world holds by its key."""
    for prop in items:
        match = _NAMING.match(snake(prop))
        kind = entity_named(card, match.group("kind")) if match else None
        if match and kind is not None and _collection(kind, world) and _keyed_by(kind, match.group("by")):
            return prop, kind
    return None


def _keyed_by(kind: EntityType, by: str) -> bool:
    return kind.key_field == by


def _names_own(arg: str, schema: Any, own: EntityType) -> bool:
    """`arg` lists names or ids of the tool's own kind: an array of strings, or ids in one string, comma-separated
    (`confluence_read_page(page_ids: "123,456")`)."""
    match = _KEYS.match(snake(arg))
    if not isinstance(schema, dict) or not match or match.group("kind") not in (None, own.name) \
            or not _keyed_by(own, match.group("by")):
        return False
    items = schema.get("items")
    listed = isinstance(items, dict) and items.get("type") in ("string", "integer")
    return listed or (match.group("by") == "id" and schema.get("type") == "string")


def _listed_keys(arg: str, schema: dict[str, Any]) -> str:
    """The expression of the keys `arg` lists (`_names_own`)."""
    if schema.get("type") == "string":
        return f"[k.strip() for k in str(args[{arg!r}] or '').split(',') if k.strip()]"
    return f"[str(k) for k in (args[{arg!r}] or [])]"


def _member_values(tool: ToolSpec, arg: str, items: dict[str, Any], named: tuple[str, EntityType],
                   world: ServerWorld, message: str) -> Rule | None:
    """Each item names a record and gives values for one of its lists: added where missing, or taken away."""
    prop, kind = named
    coll = _collection(kind, world)
    values = next((p for p, s in items.items() if p != prop and "array" in schema_types(s)), None)
    words = {singular_word(w) for w in name_tokens(tool.name)}
    field = next((f for f, t in kind.fields.items() if str(t).startswith("list") and singular_word(f) in words), None)
    if coll is None or values is None or field is None:
        return None
    record = f"{coll}[str(it.get({prop!r}))]"
    given = f"(it.get({values!r}) or [])"
    if words & _REMOVE_WORDS:
        value = f"[v for v in ({record}.get({field!r}) or []) if v not in {given}]"
        missing = "[]"  # taking away from a record that is not there changes nothing
    else:
        value = (f"({record}.get({field!r}) or []) + [v for i, v in enumerate({given}) if v not in {given}[:i] "
                 f"and v not in ({record}.get({field!r}) or [])]")
        missing = f"[str(o.get({prop!r})) for o in (args[{arg!r}] or []) if str(o.get({prop!r})) not in {coll}]"
    each = Effect(each=f"[o for o in (args[{arg!r}] or []) if str(o.get({prop!r})) in {coll}]", as_="it",
                  do=[Effect(set=record, key=repr(field), value=value)])
    return Rule(op="update", origin="inferred", check=[
        Check(let={"missing": missing}),
        Check(fail="missing", error="not_found", message=message.replace("{key}", "{missing[0]}"))], do=[each],
        answer=f"{{'results': [{{{prop!r}: o.get({prop!r}), {field!r}: {coll}[str(o.get({prop!r}))].get({field!r})}} "
               f"for o in (args[{arg!r}] or []) if str(o.get({prop!r})) in {coll}]}}")


def _create_each(arg: str, items: dict[str, Any], own: EntityType, world: ServerWorld, fields: list[str]) -> Rule:
    """Each item is a record of the kind, keyed as the world keys its records: by the field the kind keys them
    by (a name), or by what they hold (`from|relationType|to`); a key already there is kept as it is (the batch
    makes what is new), and an item without a value for its key is refused."""
    coll = _collection(own, world)
    parts = [f"str(it.get({f!r}) or '').strip()" for f in fields]
    key = " + '|' + ".join(parts)
    lists: dict[str, list[Any]] = {p: [] for p, s in items.items() if "array" in schema_types(s)}
    make = Effect(create=coll, key=key, as_="made", if_=f"{key} not in {coll}",
                  record=f"{{**{lists!r}, **{{k: v for k, v in it.items() if k in {list(items)!r}}}}}")
    blank = Check(fail=f"any(not ({' and '.join(parts)}) for it in (args[{arg!r}] or []))", error="invalid",
                  message=f"every item of '{arg}' needs {', '.join(fields)}")
    return Rule(op="create", origin="inferred", check=[blank],
                do=[Effect(each=f"list(args[{arg!r}] or [])", as_="it", do=[make])],
                answer=f"{{{arg!r}: [it for it in (args[{arg!r}] or [])]}}")


def _delete_matching(arg: str, items: dict[str, Any], own: EntityType, world: ServerWorld) -> Rule:
    """Each item deletes the records whose fields all equal its own (a relation given by its ends and type)."""
    coll = _collection(own, world)
    matching = f"[k for k, r in {coll}.items() if all(r.get(f) == v for f, v in it.items())]"
    inner = Effect(each=matching, as_="gone", do=[Effect(delete=coll, key="gone")])
    return Rule(op="delete", origin="inferred", do=[Effect(each=f"list(args[{arg!r}] or [])", as_="it", do=[inner])],
                answer="{'success': True}")


def _delete_named(arg: str, schema: dict[str, Any], own: EntityType, world: ServerWorld, message: str) -> Rule:
    """Each name (or id) deletes its record. A name no record has changes nothing (the memory server's
    `delete_entities(entityNames)` passes over it); an id the service never issued is refused before any is
    deleted, as a batch endpoint answers 404 (`delete_records(recordIds)`, `linear_delete_issues(ids)`)."""
    coll = _collection(own, world)
    keys = _listed_keys(arg, schema)
    gone = Effect(each=keys, as_="gone", do=[Effect(delete=coll, key="gone")])
    checks = _every_id_held(keys, coll, message) if own.key_field == "id" else []
    return Rule(op="delete", origin="inferred", check=checks, do=[gone], answer="{'success': True}")


def _read_keyed(arg: str, schema: dict[str, Any], own: EntityType, world: ServerWorld, message: str) -> Rule:
    """A read of several records by their ids (`get_nodes_info(nodeIds)`, `threads_get_posts_batch(ids)`): those
    records, in the order asked; an id the service never issued is refused, as a batch endpoint answers 404."""
    coll = _collection(own, world)
    keys = _listed_keys(arg, schema)
    return Rule(op="get", origin="inferred", read_only=True, check=_every_id_held(keys, coll, message),
                answer=f"{{'results': [{{**{coll}[k], 'id': k}} for k in {keys}]}}")


def _every_id_held(keys: str, coll: str | None, message: str) -> list[Check]:
    """Every key of `keys` (an expression) must be held, else `not_found` names the first missing."""
    return [Check(let={"missing": f"[k for k in {keys} if k not in {coll}]"}),
            Check(fail="missing", error="not_found", message=message.replace("{key}", "{missing[0]}"))]


#: Arguments that hold a batch of the tool's own records whatever the kind (`items`, HubSpot's `inputs`, WooCommerce's
#: `update` and `delete`); else the argument is named for the kind (`transactions`).
BATCH_ARGS = frozenset({"items", "inputs", "records", "updates", "update", "delete", "entries", "batch", "objects"})


def _batch_of(arg: str, own: EntityType, props: dict[str, Any]) -> bool:
    """`arg` holds a batch of the tool's own records, and no other argument names a record on its own
    (`update_workflow(id, nodes=[{id}])` changes one workflow: its nodes are no batch of workflows;
    `set_annotations(nodeId, annotations=[...])` is about one node)."""
    plain = snake(arg)
    alone = any(_names_a_record(snake(p)) for p in props if p != arg)
    return not alone and (plain in BATCH_ARGS or singular_word(plain) == own.name)


def _names_a_record(plain: str) -> bool:
    """An argument that names one record: an id in any form (`node_id`, `gid`), a key or an id-or-name."""
    return plain in _OWN_ID_FORMS or bool(ID_ARG.match(plain)) or plain.endswith(("_key", "_or_name"))


#: An item property naming a record of the tool's own kind by its id: `id`, `task_id`, `taskId`, Asana's `gid`.
_OWN_ID_FORMS = ("id", "uid", "gid", "uuid")


def _keyed_each(op: str, arg: str, items: dict[str, Any], own: EntityType, world: ServerWorld,
                message: str) -> Rule | None:
    """Each item names a record of the tool's kind by its id: every one named must exist (a batch endpoint
    answers 404 naming the missing one, and changes nothing); a read answers the records, an update sets the
    values each item gives, a delete removes them. Items that name no record are passed over."""
    coll = _collection(own, world)
    prop = next((p for p in items if snake(p) in (*_OWN_ID_FORMS, *(f"{own.name}_{f}" for f in _OWN_ID_FORMS))), None)
    if coll is None or prop is None:
        return None
    named = f"[o for o in (args[{arg!r}] or []) if isinstance(o, dict) and o.get({prop!r}) is not None]"
    record = f"{coll}[str(it.get({prop!r}))]"
    checks = _every_id_held(f"[str(o.get({prop!r})) for o in {named}]", coll, message)
    shown = f"[{{**{coll}[str(o.get({prop!r}))], 'id': str(o.get({prop!r}))}} for o in {named}]"
    if op == "get":
        return Rule(op="get", origin="inferred", read_only=True, check=checks, answer=f"{{'results': {shown}}}")
    if op == "delete":
        gone = Effect(each=f"[str(o.get({prop!r})) for o in {named}]", as_="gone", do=[Effect(delete=coll, key="gone")])
        return Rule(op="delete", origin="inferred", check=checks, do=[gone],
                    answer=f"{{'deleted': [str(o.get({prop!r})) for o in {named}]}}")
    # the values the item gives (a service keeps what it is given; `project_id` moves it), not another way of naming
    # the record itself (`task_name` beside `task_id`)
    own_names = {*_OWN_ID_FORMS, *(f"{own.name}_{f}" for f in (*_OWN_ID_FORMS, "name", "key"))}
    fields = {p: snake(p) for p in items if p != prop and snake(p) not in own_names}
    sets = [Effect(set=record, key=repr(field), value=f"it.get({p!r})", if_=f"it.get({p!r}) is not None")
            for p, field in fields.items()]
    return Rule(op="update", origin="inferred", check=checks, do=[Effect(each=named, as_="it", do=sets)] if sets else [],
                answer=f"{{'results': {shown}}}")


#: Item properties a service refuses empty when an item requires them (the item's name, title or text).
_ITEM_NAMING = ("name", "title", "content", "text", "subject", "summary")


def _make_each(arg: str, schema: dict[str, Any], own: EntityType, coll: str) -> Rule:
    """A batch of new records of a kind keyed by id (todoist's `create_projects(items=[{name}])`, HubSpot's
    `batch-create(inputs=[...])`): each item makes one record under the next id, as it would alone; an item
    without the name or text it requires is refused before any is made; the answer lists what was made."""
    item = schema.get("items") or {}
    needed = [p for p in item.get("required") or [] if snake(p) in _ITEM_NAMING or snake(p).endswith(("_name", "_title"))]
    checks = []
    if needed:
        blank = " or ".join(f"not str(it.get({p!r}) or '').strip()" for p in needed)
        checks.append(Check(fail=f"any(not isinstance(it, dict) or {blank} for it in (args[{arg!r}] or []))",
                            error="invalid", message=f"every item of '{arg}' needs {', '.join(needed)}"))
    make = Effect(create=coll, id=own.id_prefix, as_="made", record="{k: v for k, v in it.items() if v is not None}")
    return Rule(op="create", origin="inferred", check=checks,
                do=[Effect(let={"before": f"set({coll})"}),  # what was there: the answer lists what was made
                    Effect(each=f"[it for it in (args[{arg!r}] or []) if isinstance(it, dict)]", as_="it", do=[make])],
                answer=f"{{{arg!r}: [{{**r, 'id': k}} for k, r in {coll}.items() if k not in before]}}")
