"""The numbered ids a collection's records hold, for `next_id` over a whole collection.

A rule that makes a record in a sequence the world keeps only inside its records (a mail thread) reads
`next_id([m.get('thread_id') for m in coll('message').values()])`: every record, on every such call. `next_id`
reads only the values' prefixes, the widest number and the largest, so a few of the seed's values stand for
all of them: `Numbered` keeps the seed's numbered values by prefix, by width and by size, built once per
collection and expression, and gives the first of each that the session has not written (`scans.py` adds
the session's own values).
"""

from __future__ import annotations

from typing import Any

from cworld.engine.rules.containers import RecordFunction
from cworld.engine.rules.expr import numbered


class Numbered:
    """One expression's numbered values over the seed's records (`failed`: a record it cannot be read on)."""

    def __init__(self, keys: list[str], records: dict[str, Any], fn: RecordFunction) -> None:
        self.failed = False
        rows: list[tuple[str, str, str, str]] = []  # (key, value, prefix, digits)
        for key in keys:
            try:
                value = fn(records[key], key)
            except Exception:
                self.failed = True
                break
            parts = numbered(value)
            if parts is not None:
                rows.append((key, value, *parts))
        self.by_prefix: dict[str, list[tuple[str, str]]] = {}
        for key, value, prefix, _ in rows:
            self.by_prefix.setdefault(prefix, []).append((key, value))
        self.widest = [(r[0], r[1]) for r in sorted(rows, key=lambda r: len(r[3]), reverse=True)]
        self.largest = [(r[0], r[1]) for r in sorted(rows, key=lambda r: int(r[3]), reverse=True)]

    def representatives(self, skip: set[str]) -> list[Any]:
        """Values whose `next_id` with any others is that of every value of the records not in `skip`: one per
        prefix (two prefixes already make it None), the widest and the largest. None keeps the list non-empty."""
        out: list[Any] = [None]
        prefixes = 0
        for rows in self.by_prefix.values():
            first = _first(rows, skip)
            if first is not None:
                out.append(first)
                prefixes += 1
                if prefixes == 2:
                    break
        for rows in (self.widest, self.largest):
            first = _first(rows, skip)
            if first is not None:
                out.append(first)
        return out


def _first(rows: list[tuple[str, str]], skip: set[str]) -> str | None:
    return next((value for key, value in rows if key not in skip), None)
