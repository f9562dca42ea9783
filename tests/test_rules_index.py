"""List reads answered from indexes, and sessions that copy records on write, give the walk's answers.

Seeded random worlds and rules; every answer of the indexed engine (copy-on-write store, seed indexes)
is compared with the reference: the walk over every record of a world written in place."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cworld.engine.rules.cow import SessionStore
from cworld.engine.rules.index import Indexes
from cworld.engine.rules.run import CallContext, run_rule
from cworld.engine.rules.spec import parse_rule
from cworld.sandbox.framework.session import plain_copy
from cworld.seeding import derive_rng

WORDS = ["alpha", "bravo", "são", "paulo", "delta", "echo", "ox", "café", "golf", "hotel"]
TAGS = ["red", "green", "blue", None]

WHERES = [
    None,
    "it['tag'] == args.tag",
    "args.tag in (None, it['tag'])",
    "matches(args.q or '', it['name'], it['meta'])",
    "matches(args.q, it['name']) and not it['flag']",
    "(args.all or not it['flag']) and args.tag in (None, it['tag'])",
    "it['flag'] and it['n'] > args.n",
    "args.n > 3 and it['tag'] == args.tag",
    "key != args.k and matches(args.q or '', it['labels'])",
]
SORTS = [None, "(it['n'], key)", "it['name']", "(it['n'] + args.n, key)"]


def _record(rng: random.Random, missing: float) -> dict[str, Any]:
    record = {"name": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))).title(),
              "n": rng.randint(0, 9), "flag": rng.random() < 0.4, "meta": {"x": rng.choice(WORDS)},
              "labels": [rng.choice(WORDS)]}
    if rng.random() >= missing:  # a record without the field an index reads is evaluated in full (and fails)
        record["tag"] = rng.choice(TAGS)
    return record


def _world(seed: int, size: int, missing: float = 0.0) -> dict[str, Any]:
    rng = derive_rng(seed, "test:rules_index:world")
    return {"items": {f"it_{i:04d}": _record(rng, missing) for i in range(size)}, "settings": {"mode": "a"}}


def _list_rule(where: str | None, sort: str | None, desc: bool) -> Any:
    read = {"from": "items", "page_size": 4, **({"where": where} if where else {}), **({"sort": sort} if sort else {}),
            "desc": desc}
    return parse_rule({"read_only": True, "list": read}, "test")


WRITES = {
    "create": {"do": [{"create": "items", "id": "it", "as": "made",
                       "record": "{'name': args.q or 'new', 'tag': args.tag, 'n': args.n, 'flag': False, "
                                 "'meta': {'x': 'golf'}, 'labels': []}"}]},
    "remake": {"do": [{"create": "items", "key": "args.k", "record": "{'name': 'Remade Echo', 'tag': 'red', 'n': 1, "
                       "'flag': True, 'meta': {}, 'labels': ['ox']}"}]},
    "delete": {"do": [{"delete": "items", "key": "args.k"}]},
    "set": {"check": [{"find": "rec", "in": "items", "key": "args.k"}],
            "do": [{"set": "rec", "to": {"tag": "args.tag", "name": "rec['name'] + ' Delta'"}}]},
    "add": {"check": [{"find": "rec", "in": "items", "key": "args.k"}], "do": [{"add": "rec", "to": {"n": "args.n"}}]},
    "append": {"do": [{"append": "items[args.k]", "to": {"labels": "'hotel'"}, "if": "args.k in items"}]},
    "each": {"do": [{"each": "[k for k in items if items[k]['n'] == args.n]", "as": "k",
                     "do": [{"set": "items[k]", "to": {"flag": "not items[k]['flag']"}}]}]},
    "nested": {"check": [{"find": "rec", "in": "items", "key": "args.k"}],
               "do": [{"set": "rec['meta']", "to": {"x": "args.q or 'paulo'"}}]},
    "direct": {"do": [{"set": "items", "key": "args.k", "value": "{'name': 'Direct Bravo', 'tag': args.tag, 'n': 2, "
                                                                 "'flag': False, 'meta': {}, 'labels': []}"}]},
    "state": {"do": [{"set": "state.settings", "to": {"mode": "args.q"}}]},
}


def _args(rng: random.Random, keys: list[str]) -> dict[str, Any]:
    return {"tag": rng.choice(TAGS), "q": rng.choice([None, "", "al", "pau", "sao paulo", "delta echo", "zzz", "caf"]),
            "n": rng.randint(0, 9), "all": rng.random() < 0.3, "page": rng.choice([None, 1, 2, 3]),
            "page_size": rng.choice([None, 2, 50]),
            "k": rng.choice([*keys, "it_9999"]) if keys else "it_9999"}


def _run(rule: Any, state: dict[str, Any], args: dict[str, Any], ids: dict[str, int], store: SessionStore | None,
         indexes: Indexes | None) -> Any:
    if store is not None and rule.writes:
        store.own("items")
        store.own("settings")
    ctx = CallContext(state, dict(args), "2026-01-01T00:00:00Z", ids=ids, store=store, indexes=indexes)
    outcome = run_rule(rule, ctx)
    return (outcome.error_class, outcome.message, outcome.payload)


@pytest.mark.parametrize("seed", range(6))
def test_indexed_answers_equal_the_walk_under_interleaved_writes(seed: int) -> None:
    base = _world(seed, 60 + 40 * seed, missing=0.01 * (seed % 2))
    pristine = plain_copy(base)
    indexes = Indexes()
    rng = derive_rng(seed, "test:rules_index:calls")
    lists = [_list_rule(w, s, d) for w in WHERES for s in SORTS for d in (False, True)]
    writes = {name: parse_rule(body, name) for name, body in WRITES.items()}
    for _session in range(2):  # two sessions over one seed world share its indexes
        reference, ref_ids = plain_copy(base), {"it": 100}
        mine, ids = dict(base), {"it": 100}
        store = SessionStore(base, mine)
        for _ in range(120):
            rule = rng.choice(lists) if rng.random() < 0.6 else writes[rng.choice(sorted(writes))]
            args = _args(rng, list(reference["items"]))
            expected = _run(rule, reference, args, ref_ids, None, None)
            got = _run(rule, mine, args, ids, store, indexes)
            assert got == expected, (rule.model_dump(by_alias=True, exclude_none=True), args)
        assert mine == reference
        assert base == pristine  # the seed's world is never written


def test_a_list_over_10000_records_evaluates_where_on_few() -> None:
    base = _world(7, 10_000)
    store = SessionStore(base, dict(base))
    rule = _list_rule("args.tag in (None, it['tag']) and matches(args.q, it['name']) and not it['flag']",
                      "(it['n'], key)", True)
    args = {"tag": "red", "q": "sao paulo", "page": 1, "page_size": 10}
    walked = CallContext(plain_copy(base), dict(args), "2026-01-01T00:00:00Z")
    indexed = CallContext(dict(base), dict(args), "2026-01-01T00:00:00Z", store=store, indexes=Indexes())
    assert run_rule(rule, indexed).payload == run_rule(rule, walked).payload
    assert walked.evaluations == 10_000
    assert indexed.evaluations < 1_000
    unfiltered = _list_rule("args.tag in (None, it['tag'])", "(it['n'], key)", False)
    counted = CallContext(dict(base), {"tag": None}, "2026-01-01T00:00:00Z", store=store, indexes=Indexes())
    assert run_rule(unfiltered, counted).payload["total"] > 9_000
    assert counted.evaluations == 0  # every record passes: the total is the index's, the page its order's
