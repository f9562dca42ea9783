"""Flags a service computes from a record's own fields each time it shows the record, never stores: a saved
card's or a code's `expired`, from its expiry. An answer whose schema asks for one gets it from the world's
record, where the schema engine would have made it up (a made-up `expired: false` on a lapsed card sends an
agent to a checkout the world then refuses)."""

from __future__ import annotations

from typing import Any

from cworld.schemas.walk import resolve_ref

#: Fields that hold when a record lapses, as services name them.
EXPIRY_FIELDS = ("expires", "expires_at", "expiry", "expiry_date", "expiration", "expiration_date", "valid_until")
#: Flags that say a record has lapsed.
EXPIRED_FLAGS = ("expired", "is_expired")


def lapsed(value: str) -> str:
    """The expression: the expiry in `value` is over. Compared at the expiry's own precision, so a card that
    expires `2026-06` is good through June and a date through its day."""
    return f"({value} is not None and str({value}) < now[:len(str({value}))])"


def derived_fields(item_schema: Any, root: dict[str, Any], held: set[str], record: str) -> dict[str, str]:
    """Flag -> expression over `record` (a rule's name for the shown record), for each flag the item schema asks
    for that the records do not hold but derive from a field they do hold."""
    props = (resolve_ref(item_schema, root) if isinstance(item_schema, dict) else {}).get("properties") or {}
    expiry = next((f for f in EXPIRY_FIELDS if f in held), None)
    if expiry is None:
        return {}
    return {flag: lapsed(f"{record}.get({expiry!r})") for flag in EXPIRED_FLAGS if flag in props and flag not in held}
