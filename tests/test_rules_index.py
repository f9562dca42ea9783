"""List reads answered from indexes, and sessions that copy records on write, give the walk's answers.

Seeded random worlds and rules; every answer of the indexed engine (copy-on-write store, seed indexes)
is compared with the reference: the walk over every record of a world written in place."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cworld.engine.rules.cow import SessionStore
from cworld.engine.rules.expr import Evaluator, RuleExprError
from cworld.engine.rules.index import Indexes
from cworld.engine.rules.run import CallContext, run_rule
from cworld.engine.rules.spec import Def, parse_rule
from cworld.sandbox.framework.session import plain_copy
from cworld.seeding import derive_rng

WORDS = ["alpha", "bravo", "são", "paulo", "delta", "echo", "ox", "café", "golf", "hotel"]
TAGS = ["red", "green", "blue", None]
PEOPLE = ["p1", "p2", "p3", "p4", 5, 1, True]
ANSWERS = ["yes", "no", "maybe", None]
TIMES = ["2026-01-01T09:00:00Z", "2026-01-01T10:30:00Z", "2026-01-02", "2026-01-02T08:00:00+02:00",
         "2026-01-03T12:00:00Z", None, "soon"]

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
    "args.p in (it.get('who') or [])",
    "args.p in it['people'] and not it['flag']",
    "(it['who'].get(args.p) in ('yes', 'maybe') if isinstance(it['who'], dict) else args.p in (it['who'] or []))",
    "it['n'] > 2 and isinstance(it['who'], dict) and it['who'].get(args.p) == args.r",
    "before(args.t, it.get('end')) and before(it.get('start'), args.u)",
    "(args.tag is not None and it['tag'] == args.tag) or args.p == it.get('owner') or args.p in it['people']",
    "not it['flag'] and (it['n'] == args.n or matches(args.q, it['name']))",
    "args.all or before(it['start'], args.t)",
    "any(w == args.r for w in (it['who'].values() if isinstance(it['who'], dict) else []))",
    "any(p == args.p for p in it['people']) and it['n'] != args.n",
    "it['n'] == args.n and matches(args.q, it['tag'], it['name'])",
    "matches(args.q, it['meta'], it['tag']) and not it['flag']",
    "matches(args.q, it)",
    "it['n'] == args.n and matches(args.q or '', it)",
]
SORTS = [None, "(it['n'], key)", "it['name']", "(it['n'] + args.n, key)", "(it['name'], key)"]


def _record(rng: random.Random, missing: float) -> dict[str, Any]:
    record = {"name": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))).title(),
              "n": rng.randint(0, 9), "flag": rng.random() < 0.4, "meta": {"x": rng.choice(WORDS)},
              "labels": [rng.choice(WORDS)]}
    if rng.random() >= missing:  # a record without the field an index reads is evaluated in full (and fails)
        record["tag"] = rng.choice(TAGS)
    invited = rng.sample(PEOPLE, rng.randint(0, 3))
    # who: attendee -> answer, or a plain list of attendees, or nothing; people: a list, or a text (`in` is a
    # substring test there: no index files it)
    record["who"] = rng.choice([{p: rng.choice(ANSWERS) for p in invited}, invited, None])
    record["people"] = rng.choice([invited, invited, " ".join(map(str, invited))])
    record["owner"] = rng.choice(PEOPLE)
    record["start"] = rng.choice(TIMES)
    record["end"] = rng.choice(TIMES)
    record["ref"] = rng.choice([f"th_{rng.randint(0, 150):04d}", f"th_{rng.randint(0, 150):04d}", f"th_{rng.randint(0, 99)}",
                                None, "th_"])
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
    "renumber": {"check": [{"find": "rec", "in": "items", "key": "args.k"}],
                 "do": [{"set": "rec", "to": {"ref": "'qq_1' if args.n == 7 else 'th_' + str(args.n * 37).zfill(args.n % 3 + 3)"}}]},
}


def _args(rng: random.Random, keys: list[str]) -> dict[str, Any]:
    return {"tag": rng.choice(TAGS), "q": rng.choice([None, "", "al", "pau", "sao paulo", "delta echo", "zzz", "caf"]),
            "n": rng.randint(0, 9), "all": rng.random() < 0.3, "page": rng.choice([None, 1, 2, 3]),
            "page_size": rng.choice([None, 2, 50]),
            "k": rng.choice([*keys, "it_9999"]) if keys else "it_9999",
            "p": rng.choice([*PEOPLE, None, 5.0, True, ["p1"]]), "r": rng.choice([*ANSWERS, ["yes"]]),
            "t": rng.choice(TIMES), "u": rng.choice(TIMES)}


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


# --- comprehensions over a collection (scans.py) ------------------------------------------------------------
DEFS = {
    "open_with": Def(params=["t"], expr="len([1 for v in items.values() if v['tag'] == t and not v['flag']])"),
    "named": Def(params=["q"], expr="[k for k, v in items.items() if matches(q, v['name'], v['meta'])]"),
}
#: `str` shadowed by a def: an index built with the language's `str` would leave records out; `any` and
#: `next_id` shadowed: the records they are given must be every record's values
SHADOWING = {**DEFS, "str": Def(params=["x"], expr="'3'"), "any": Def(params=["xs"], expr="len(list(xs)) > 3"),
             "next_id": Def(params=["xs"], expr="len(list(xs))")}

COMPREHENSIONS = [
    "[k for k, v in items.items() if v['tag'] == args.tag]",
    "len([v for v in items.values() if args.tag in (None, v['tag']) and not v['flag']])",
    "sum(1 for v in items.values() if matches(args.q or '', v['name'], v['meta']))",
    "sorted([(v['n'], k) for k, v in items.items() if v['flag'] and v['n'] > args.n])[:5]",
    "{k: v['n'] for k, v in items.items() if (args.all or not v['flag']) and v['tag'] == args.tag}",
    "[{'t': t, 'open': open_with(t)} for t in ['red', 'green', 'blue', None]]",
    "named(args.q or '')",
    "any(v['tag'] == args.tag for v in items.values())",
    "[v['name'] for v in items.values() if v['n'] == args.n if not v['flag']]",
    "set([v['tag'] for v in items.values() if matches(args.q, v['labels']) and key_ok(v)])",
    "[k for k, v in items.items() if str(v['n']) == '3']",
    "[v['n'] for v in items.values() if v['tag'] == args.missing['x']]",
    "[[w for w in items.values() if w['n'] == v['n'] and w['tag'] == v['tag']] for v in items.values() "
    "if v['name'] == 'Ox'][:2]",
    "[k for k, v in items.items() if v['n'] == args.n and settings['mode'] != 'off']",
    "[k for k, v in coll('items').items() if args.p in (v.get('who') or [])]",
    "[k for k, v in coll('items').items() if norm(v.get('tag')) != 'red' and before(args.t, v.get('end')) "
    "and before(v.get('start'), args.u) and ((args.tag is not None and v.get('tag') == args.tag) or "
    "(args.p is not None and (v.get('owner') == args.p or args.p in (v.get('who') or []))))]",
    "{p: [v['n'] for v in coll('items').values() if not v['flag'] and (p == v['owner'] or ((v['who'] or {}).get(p) "
    "in ('yes', 'maybe') if isinstance(v['who'], dict) else p in (v['who'] or [])))] for p in ['p1', 5, 'p9']}",
    "[k for k, v in items.items() if (v['who'] or {}).get(args.p) == args.r]",
    "next_id([v.get('ref') for v in coll('items').values()])",
    "next_id(v['ref'] for v in items.values())",
    "next_id([k for k, v in items.items()])",
    "next_id([highest_id([v.get('ref'), 'th_' + str(v['n'] * 20).zfill(4)] if v['flag'] else []) for v in coll('items').values()])",
    "[any(v['tag'] == t for v in items.values()) for t in TAGS_ASKED]",
    "not any(args.p in (v.get('who') or []) for k, v in coll('items').items())",
    "any([v['n'] > args.n and not v['flag'] for v in items.values()])",
    "[w for v in coll('items').values() if isinstance(v['who'], dict) for w in v['who'].values() if w == args.r]",
    "[(k, p) for k, v in items.items() for p in (v['people'] if isinstance(v['people'], list) else []) "
    "if p == args.p or str(p) == str(args.n)]",
    "[p for v in items.values() for p in v['people'] if p in ('p2', 5)]",
]


def _answer_rule(answer: str) -> Any:
    return parse_rule({"read_only": True, "answer": answer}, "test")


def _call(rule: Any, state: dict[str, Any], args: dict[str, Any], ids: dict[str, int], store: SessionStore | None,
          indexes: Indexes | None, defs: dict[str, Def]) -> tuple[Any, int]:
    if store is not None and rule.writes:
        store.own("items")
        store.own("settings")
    ctx = CallContext(state, dict(args), "2026-01-01T00:00:00Z", ids=ids, store=store, indexes=indexes,
                      consts={"TAGS_ASKED": TAGS}, defs={**defs, "key_ok": Def(params=["v"], expr="v['n'] != 4")})
    outcome = run_rule(rule, ctx)
    return (outcome.error_class, outcome.message, outcome.payload), ctx.evaluations


def _plain(answer: str, state: dict[str, Any], args: dict[str, Any], defs: dict[str, Def]) -> Any:
    """The expression compiled as written (no scan), over the world written in place."""
    ev = Evaluator({**state, "state": state, "args": args, "TAGS_ASKED": TAGS})
    ev.define("coll", lambda name: state[name])
    for name, fn in {**defs, "key_ok": Def(params=["v"], expr="v['n'] != 4")}.items():
        ev.define(name, ev.function(fn.params, fn.expr))
    try:
        return ev(answer)
    except RuleExprError:
        return "error"


@pytest.mark.parametrize("seed", range(6))
def test_comprehensions_read_through_indexes_as_the_walk(seed: int) -> None:
    base = _world(seed, 80 + 50 * seed, missing=0.01 * (seed % 2))
    pristine = plain_copy(base)
    indexes = Indexes()
    rng = derive_rng(seed, "test:rules_index:comprehensions")
    reads = [_answer_rule(a) for a in COMPREHENSIONS]
    writes = {name: parse_rule(body, name) for name, body in WRITES.items()}
    defs = SHADOWING if seed % 3 == 2 else DEFS
    for _session in range(2):
        reference, ref_ids = plain_copy(base), {"it": 100}
        mine, ids = dict(base), {"it": 100}
        store = SessionStore(base, mine)
        for _ in range(150):
            rule = rng.choice(reads) if rng.random() < 0.6 else writes[rng.choice(sorted(writes))]
            args = {**_args(rng, list(reference["items"])), "missing": None}
            expected, _ = _call(rule, reference, args, ref_ids, None, None, defs)
            got, _ = _call(rule, mine, args, ids, store, indexes, defs)
            assert got == expected, (rule.answer, args)
            if rule.answer is not None:
                plain = _plain(rule.answer, reference, args, defs)
                assert (expected[2] if expected[0] is None else "error") == plain, rule.answer
        assert mine == reference
        assert base == pristine


def test_a_comprehension_over_10000_records_reads_few() -> None:
    base = _world(11, 10_000)
    rule = _answer_rule("[{'t': t, 'open': open_with(t)} for t in ['red', 'green']]")
    walked, walked_count = _call(rule, plain_copy(base), {}, {}, None, None, DEFS)
    indexes = Indexes()
    store = SessionStore(base, dict(base))
    first, _ = _call(rule, dict(base), {}, {}, store, indexes, DEFS)  # builds the indexes
    indexed, indexed_count = _call(rule, dict(base), {}, {}, store, indexes, DEFS)
    assert first == indexed == walked
    assert walked_count == 20_000  # the walk reads every record per tag
    assert indexed_count < 6_000  # candidates: the tag's records that are not flagged
    shadowed, _ = _call(_answer_rule("[k for k, v in items.items() if str(v['n']) == '3']"), dict(base), {}, {},
                        store, indexes, SHADOWING)
    assert len(shadowed[2]) == 10_000  # `str` is the def here: every record passes, none left out


def test_text_candidates_are_the_same_before_and_after_the_token_index() -> None:
    """A text search's candidates are exactly the records whose text holds every word, whether the texts are
    scanned (the first searches) or a token index answers (after `TOKENS_AFTER` of them)."""
    from cworld.engine.rules.index import TOKENS_AFTER, CollectionIndexes
    from cworld.values import match_text

    rng = random.Random(4)
    words = ["meeting", "notes", "plan", "Budget", "café", "review", "q3"]
    records = {f"d{i}": {"title": " ".join(rng.sample(words, 2)), "body": rng.choice(words) + "s"} for i in range(300)}
    ix = CollectionIndexes(records)
    fields = ("it.title", "it.body")
    for n in range(TOKENS_AFTER + 20):
        query = [w for w in (rng.choice(["eet", "note", "budg", "cafe", "revi", "plans"]),
                             rng.choice(["", "meet", "ans"])) if w]
        hits, residual = ix.text(fields, query)
        texts = {k: match_text(r["title"], r["body"]) for k, r in records.items()}
        assert hits == {k for k, t in texts.items() if all(w in t for w in query)}, (n, query)
        assert not residual


def test_norm_and_match_text_read_every_text_as_the_nfkd_form_does() -> None:
    """`norm` skips NFKD for ASCII text and `text_of` caches plain texts: both give what the full form gives."""
    import unicodedata

    from cworld.values import match_text, norm, text_of

    rng = random.Random(9)
    alphabet = "abcXYZ  \t09-.é\u00dfﬁ\u2163Ωç"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        full = " ".join(unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower().split())
        assert norm(text) == full
        values = (text, None, rng.choice(["Zoë", "x"]))
        assert text_of(values) == match_text(*values) == text_of(values)
    assert text_of((1, True, None, {"a": [2.5, False]})) == "1 2.5"


def test_container_indexes_answer_as_a_scan_of_every_record() -> None:
    """Each index of `containers.py` (members, a map's entries, times, elements under a test) files a record
    exactly when the expression it stands for holds for it; a record it cannot read is residual, never
    answered wrongly."""
    from cworld.engine.rules.containers import Times, elements, entries, entry_hits, members, some_hits
    from cworld.engine.rules.expr import before
    from cworld.engine.rules.index import record_function

    base = _world(13, 400)
    records = base["items"]
    keys = list(records)
    rng = derive_rng(13, "test:rules_index:containers")
    who, start = record_function("it['who']"), record_function("it['start']")
    member_buckets, member_residual = members(keys, records, who)
    entry_buckets, entry_residual = entries(keys, records, who)
    element_buckets, element_residual = elements(keys, records, record_function("it['people']"))
    times = Times(keys, records, start)
    for _ in range(60):
        person, answer, moment = rng.choice(PEOPLE), rng.choice(ANSWERS[:3]), rng.choice(TIMES)
        readable = [k for k in keys if k not in member_residual]
        assert {k for k in readable if k in member_buckets.get(person, {})} == \
            {k for k in readable if person in records[k]["who"]}
        hits = entry_hits(entry_buckets, person, answer, False)
        assert hits is not None
        assert set(hits) == {k for k in keys if k not in entry_residual and records[k]["who"].get(person) == answer}
        assert {k for k in keys if k not in entry_residual} == {k for k in keys if type(records[k]["who"]) is dict}
        for after in (True, False):
            window = times.window(moment, after)
            expected = {k for k in keys if (before(moment, records[k]["start"]) if after
                                            else before(records[k]["start"], moment))}
            assert set(window) == expected == {k for k in keys if k in window}
        def named(v: Any, p: Any = person) -> bool:
            return str(v) == str(p)

        found = some_hits(element_buckets, named)
        assert found == {k for k in keys if k not in element_residual and any(named(v) for v in records[k]["people"])}
    assert element_residual == {k for k in keys if type(records[k]["people"]) is str}
    assert not times.residual and not member_residual - {k for k in keys if records[k]["who"] is None}


def test_highest_id_is_the_largest_number_of_the_numbered_values() -> None:
    from cworld.engine.rules.expr import highest_id, next_id
    assert highest_id(["lbl_0003", "lbl_0012", "x", None, 7]) == "lbl_0012"
    assert highest_id(["a_9", "a_10"]) == "a_10" and highest_id([]) is None and highest_id(None) is None
    boards = [["lbl_0001", "lbl_0004"], [], ["lbl_0009"], ["lbl_0002"]]
    assert next_id([highest_id(b) for b in boards]) == next_id([k for b in boards for k in b]) == "lbl_0010"
