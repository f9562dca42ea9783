"""Rules of what a call uses, checked before a write runs: the other records it names and its own arguments.

Live apps refuse a checkout with a card past its month, a booking for a traveller whose passport has
lapsed, a transfer from an account to itself. The engine refuses them the same way, with the card's
failure for the case (its `when` names it), and only on facts the task states: an expiry the scenario
fixed, never one the engine drew (a made-up date would make a call fail that the live app accepts).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any

from cworld.engine.cards.card import CategoryCard, FailureMode
from cworld.engine.world.state import Collection, Outcome
from cworld.schemas.plausible import clock

#: Operations that use the records they name (reads only look).
USE_OPS = ("create", "update", "action")
_REF_ARG = re.compile(r"^(.+?)_ids?$")
EXPIRY = re.compile(r"(^|_)(expires|expires_at|expiry|expiry_date|valid_until)$")
#: Flags a record's expiry implies (a card's `expired`).
EXPIRY_FLAGS = ("expired", "is_expired")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_FROM, _TO = re.compile(r"^from_(\w*_)?id$"), re.compile(r"^to_(\w*_)?id$")


def refused_use(coll: Collection, card: CategoryCard, op: str, args: dict[str, Any]) -> Outcome | None:
    """The failure a write meets for what it uses, or None when it may go on."""
    if op not in USE_OPS:
        return None
    return _same_ends(coll, card, args) or _expired_reference(coll, card, args)


def _same_ends(coll: Collection, card: CategoryCard, args: dict[str, Any]) -> Outcome | None:
    """A move from a record to itself (`from_account_id` == `to_id`): nothing would change."""
    ends = [(k, v) for k, v in args.items() if _TO.match(k) and isinstance(v, str) and v]
    for source in (v for k, v in args.items() if _FROM.match(k) and isinstance(v, str) and v):
        same = next((k for k, v in ends if v == source), None)
        if same is not None:
            default = "invalid_args: '{field}' names the same {entity} as the source; pick another destination"
            return _failure(card, "invalid_args", ("same", "itself"), default, coll.entity.name, source, same)
    return None


def _expired_reference(coll: Collection, card: CategoryCard, args: dict[str, Any]) -> Outcome | None:
    """A named record (`payment_method_id`, `traveller_ids`) whose task-stated expiry is past today."""
    if coll.ground is None or coll.ref_collection is None:
        return None
    now = clock()
    for name, value in args.items():
        match = _REF_ARG.match(name)
        keys = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        ref = coll.ref_collection(match.group(1)) if match and keys else None
        if ref is None or ref is coll:  # the record the call changes is not one it uses (a renewal)
            continue
        for key in (k for k in keys if isinstance(k, str) and k in ref.records):
            fixed = ref.grounded.get(key, set())
            lapsed = next((f for f in fixed if EXPIRY.search(f) and is_past(ref.records[key].get(f), now)), None)
            if lapsed is not None:
                default = "business: {entity} '{id}' has expired ({field}); choose another one or renew it"
                return _failure(card, "business", ("expire",), default, ref.entity.name, key, lapsed)
    return None


def is_past(value: Any, now: datetime) -> bool:
    """Whether an expiry is over: a month (`2026-03`) lasts to its end, a day to its end, a time to itself."""
    text = str(value or "").strip()
    month = _MONTH.match(text)
    if month:
        return (int(month.group(1)), int(month.group(2))) < (now.year, now.month)
    try:
        if len(text) == 10:
            return date.fromisoformat(text) < now.date()
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    aware = now if now.tzinfo else now.replace(tzinfo=UTC)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)) < aware


def expiry_flag(record: dict[str, Any]) -> bool | None:
    """`expired` as the record's own expiry says at the session's today; None when it has none."""
    when = next((v for k, v in record.items() if EXPIRY.search(k) and v), None)
    return is_past(when, clock()) if when is not None else None


def _failure(card: CategoryCard, error_class: str, cues: tuple[str, ...], default: str, entity: str, key: str,
             field: str) -> Outcome:
    """The card's failure of the class whose `when` names the case (and the entity, best); else `default`."""
    mode = _matching(card, error_class, cues, entity.replace("_", " "))
    return Outcome.failed(error_class, mode.message if mode else default, entity=entity, key=key, field=field)


def _matching(card: CategoryCard, error_class: str, cues: tuple[str, ...], entity: str) -> FailureMode | None:
    scored = [(sum(c in f.when.lower() for c in cues) * 2 + (entity in f.when.lower()), i, f)
              for i, f in enumerate(card.failures) if f.error_class == error_class]
    best = max(((s, -i, f) for s, i, f in scored if s >= 2), default=None, key=lambda t: (t[0], t[1]))
    return best[2] if best else None
