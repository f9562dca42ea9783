"""Values seen in earlier answers (and a sandbox app's seeded state), for parameters that need real ones.

An identifier cannot be invented: `get_order(order_id)` needs an order that exists. The bank keeps every
scalar of every successful answer by its key (`order_id`; an `id` inside `orders` also as `order_id`),
newest first, and the values of the seeded state after them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cworld.data_model import ToolResult
from cworld.schemas.probe import singular
from cworld.schemas.walk import result_value


class ValueBank:
    """Values seen so far, by key name; the newest response values first, seeded state values last."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now
        self._fresh: dict[str, list[Any]] = {}
        self._seeded: dict[str, list[Any]] = {}

    def seed(self, data: Any) -> None:
        _collect(data, self._seeded, parent="")

    def learn(self, result: ToolResult) -> None:
        """Keep the values of a successful response (its structured content, or its text if JSON)."""
        if result.is_error:
            return
        data = result_value(result)
        if data is None:
            return
        found: dict[str, list[Any]] = {}
        _collect(data, found, parent="")
        for key, values in found.items():
            self._fresh[key] = values + [v for v in self._fresh.get(key, []) if v not in values]

    def candidates(self, name: str) -> list[Any]:
        return [*self._fresh.get(name, []), *self._seeded.get(name, [])]


def _collect(data: Any, out: dict[str, list[Any]], parent: str, depth: int = 0) -> None:
    """Scalars by key; an `id` inside `orders`/`order` also counts as `order_id`."""
    if depth > 8:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str | int | float | bool) and value is not None:
                _add(out, str(key), value)
                if key == "id" and parent:
                    _add(out, f"{singular(parent)}_id", value)
            else:
                _collect(value, out, str(key), depth + 1)
    elif isinstance(data, list):
        for item in data[:50]:
            _collect(item, out, parent, depth + 1)


def _add(out: dict[str, list[Any]], key: str, value: Any) -> None:
    bucket = out.setdefault(key, [])
    if value not in bucket and len(bucket) < 20:
        bucket.append(value)
