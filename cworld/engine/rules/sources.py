"""Records a call names beside the one its name makes or lists: the source a create copies or acts on, the
parent a list reads under.

`send_invoice(invoice_id)` and `create_dashboard_public_link(dashboard_id)` read as creates of their kind, yet
they make no invoice or dashboard: they act on one that must exist. `copy_file(fileId)`,
`reply_to_message(message_id)` and `create_booking(from_booking_id)` do make one, from or in answer to a record
that must exist.
`delete_card_public_link(card_id)` takes the card's link away, not the card.
`boond_companies_invoices(id)` and `firecrawl_monitor_checks(id)` list invoices and checks under the company
or monitor their bare `id` names, which must exist too. A service answers 404 for each when the record is not
there; without these readings the engine made a new invoice, or listed invoices, whatever id it was given.
"""

from __future__ import annotations

from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.kinds import BARE_IDS, head_noun
from cworld.engine.cards.operations import (
    entity_named,
    id_stem,
    name_tokens,
    same_entity,
    singular_word,
    snake,
    verb_kind,
)

#: Create verbs whose own-kind id names what is sent or saved, never a new record's chosen key.
ACTING_VERBS = frozenset({"send", "save", "push", "commit", "post", "append"})
#: Create verbs that make a new record from, or in answer to, the one the id names (a reply is a message).
COPYING_VERBS = frozenset({"copy", "duplicate", "fork", "forward", "clone", "reply"})
#: Stems of an id argument naming the record a new one is made from (`from_booking_id`, `source_file_id`).
_SOURCE_STEMS = ("from_", "source_", "template_", "original_", "base_")


def create_source(tool: ToolSpec, own: str | None, entity: EntityType, required: set[str]) -> str | None:
    """How a create's required id argument of its own kind reads: 'copy' (a new record is made from the one it
    names), 'act' (no record is made: the one it names is sent, answered, linked), None (the new record's own
    key, `create_project(project_id)`, or no such argument)."""
    if own is None or own not in required:
        return None
    stem = id_stem(own)
    verb = next((w for w in map(singular_word, name_tokens(tool.name)) if verb_kind(w) == "create"), None)
    if stem is None and own == entity.key_field != "id" and verb in COPYING_VERBS:
        return "copy"  # `entity_copy(handle)`: the key field names what is copied
    bare = stem is None and snake(own) in BARE_IDS  # `send_draft(id)`, `firewall_add_tags(id, tags)`
    if not bare and (stem is None or stem[1] or not (stem[0] == entity.name or stem[0].endswith(f"_{entity.name}"))):
        return None  # the kind's key field is the new record's key
    if bare and verb in COPYING_VERBS:
        return None  # `duplicate(id)` of a kind keyed by id: the source is found by the copy's own rule
    if verb in COPYING_VERBS or (stem is not None and stem[0].startswith(_SOURCE_STEMS)):
        return "copy"
    if verb in ACTING_VERBS:
        return "act"
    head = _head(tool)
    return "act" if head is not None and not same_entity(head, entity.name) \
        and not entity.name.endswith(f"_{head}") else None


def removes_a_part(tool: ToolSpec, entity: EntityType, card: CategoryCard) -> bool:
    """Whether a delete takes away a part of its record that the world holds no kind for, not the record:
    `delete_card_public_link(card_id)` (a link), `linear_deleteIssueRelation(id)` (a relation), where
    the name names the record's kind before that part (`delete_forever(message_id)` deletes the message): the
    record stays, and it must exist."""
    words = [singular_word(t) for t in name_tokens(tool.name)]
    head = _head(tool)
    if head is None or same_entity(head, entity.name) or entity.name.endswith(head) or entity_named(card, head):
        return False
    before = words[:len(words) - 1 - words[::-1].index(head)]
    return any(same_entity(w, entity.name) or w == entity.name.split("_")[-1] for w in before)


def placed_kind(tool: ToolSpec, card: CategoryCard) -> EntityType | None:
    """The kind an act's name puts somewhere (`linear_addIssueToProject` -> issue), else None."""
    head = _head(tool)
    return entity_named(card, head) if head is not None else None


def _head(tool: ToolSpec) -> str | None:
    """The word naming what the tool makes, in the singular (`kinds.head_noun`: after its verb, before
    `by`/`for`/`to`; `create_dashboard_public_link` -> link, `woo_orders_notes_create` -> note)."""
    head = head_noun(tool, None)
    return singular_word(head) if head is not None else None


def list_parent(tool: ToolSpec, props: dict[str, Any], required: set[str], card: CategoryCard,
                listed: EntityType) -> tuple[str, EntityType] | None:
    """(the required bare id argument, the kind it names) of a list read under a parent record: the kind named
    by a word of the tool's name before the listed kind's (`boond_companies_invoices(id)` -> company)."""
    bare = next((p for p in props if p in required and snake(p) in BARE_IDS), None)
    if bare is None:
        return None
    words = [singular_word(t) for t in name_tokens(tool.name) if verb_kind(t) is None]
    last = max((i for i, w in enumerate(words) if same_entity(w, listed.name) or listed.name.endswith(w)), default=None)
    if last is None:
        return None
    for word in reversed(words[:last]):
        parent = entity_named(card, word)
        if parent is not None and parent is not listed:
            return bare, parent
    return None
