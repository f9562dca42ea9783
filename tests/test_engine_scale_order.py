"""A seed's order for a sort reads as the stable sort of every record by its `sortable` value, whether the
index kept the values themselves (every value a text, or a tuple of texts) or wrapped each one."""

from __future__ import annotations

from typing import Any

import pytest

from cworld.engine.rules.index import CollectionIndexes, record_function, sortable
from cworld.seeding import derive_rng

SORTS = ["it['name']", "(it['name'], key)", "(str(it.get('when') or ''), str(key))", "it.get('when')",
         "(it['n'], key)", "(it['name'], it.get('when'))", "it['tags']"]


def _records(seed: int) -> dict[str, Any]:
    rng = derive_rng(seed, "test:engine_scale:order")
    names = ["b", "a", "B", "ä", "", "a b", "c"]
    out: dict[str, Any] = {}
    for i in rng.sample(range(500), 300):  # keys not in sorted order: the position breaks ties
        record: dict[str, Any] = {"name": rng.choice(names), "n": rng.randrange(4), "tags": rng.sample(names, 2)}
        if rng.random() < 0.8:
            record["when"] = rng.choice(["2026-01-02T00:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01"])
        out[f"k{i}"] = record
    return out


@pytest.mark.parametrize("seed", range(3))
def test_the_seed_order_is_the_stable_sort_by_sortable_values(seed: int) -> None:
    records = _records(seed)
    ix = CollectionIndexes(records)
    for sort in SORTS:
        fn = record_function(sort)
        rows = [(sortable(fn(r, k)), i, k) for i, (k, r) in enumerate(records.items())]
        for desc in (False, True):
            expected = sorted(rows, key=lambda row: row[0], reverse=desc)
            found = ix.order(sort, desc)
            assert found is not None
            assert list(found) == expected, (sort, desc)
    assert ix.order("it['name'] + it['n']", False) is None  # a value that fails: the caller sorts itself
