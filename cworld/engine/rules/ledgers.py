"""Ledgers: what a service counts per record it sells, kept beside the records (a hotel's rooms taken per night, a
flight's seats sold per cabin). A booking adds to the count; availability is the capacity less the count.

A world shows its ledgers by their shape, not by a name a card could know: a top-level map keyed by ids of one
form (`htl_047`, `GH723-20260902`), each holding counts under keys of another (dates, cabin names). A family
rule asks for the ledger of an id and a key of the forms it books (`ledger_of(state, hotel_id, night)`), so the
same rule holds for `hotel_nights`, `inventory` or `sold`, and does nothing where the world keeps none.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

#: A run of letters of one case, or of digits: what an id's or a key's form is made of.
_RUNS = re.compile(r"[A-Z]+|[a-z]+|[0-9]+")


def form(value: Any) -> str:
    """A key's form: each run of upper-case letters `A`, lower-case letters `a`, digits `9`, separators kept
    (`GH723-20260902` and `AP727-20260903` read `A9-9`; `2026-09-04` reads `9-9-9`; `economy` reads `a`)."""
    return _RUNS.sub(lambda m: "A" if m.group().isupper() else "a" if m.group().isalpha() else "9", str(value))


#: How many of a map's entries show its shape (a ledger of 10,000 flights is read as its first ones show it).
SAMPLE = 20


def _is_ledger(value: Any) -> bool:
    """A non-empty map of maps of whole counts (its first entries looked at)."""
    return isinstance(value, dict) and bool(value) and all(
        isinstance(inner, dict) and inner and all(isinstance(n, int) and not isinstance(n, bool) for n in inner.values())
        for inner in islice(value.values(), SAMPLE))


def ledger_of(state: Any, key: Any, inner: Any) -> str | None:
    """The name of the world's ledger counting under ids of `key`'s form and sub-keys of `inner`'s form; None where
    it keeps none, or more than one (which one counts would be a guess)."""
    if not isinstance(state, dict) or key is None or inner is None:
        return None
    outer_form, inner_form = form(key), form(inner)
    found = [name for name, value in state.items() if _is_ledger(value)
             and all(form(k) == outer_form for k in islice(value, SAMPLE))
             and all(form(s) == inner_form for counts in islice(value.values(), SAMPLE) for s in counts)]
    return found[0] if len(found) == 1 else None


def counted(state: Any, ledger: Any, key: Any, inner: Any) -> int:
    """What the ledger counts for one id and sub-key (0 where it counts nothing yet, or there is no ledger)."""
    counts = state.get(ledger) if isinstance(state, dict) and isinstance(ledger, str) else None
    row = counts.get(str(key)) if isinstance(counts, dict) else None
    value = row.get(str(inner)) if isinstance(row, dict) else None
    return value if isinstance(value, int) else 0
