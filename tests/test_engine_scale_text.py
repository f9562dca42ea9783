"""The text a search reads, made cheaply for large worlds, finds exactly what the normalized text finds.

`match_text` folds the flattened values (lower case, accents dropped) without collapsing whitespace, and a
world's text index reads only the candidates' texts when another condition narrows a search. Both are
checked here against the plain definitions: every word of `norm(query)` is in `norm` of the values'
texts joined by spaces, tested record by record.
"""

from __future__ import annotations

import random
from typing import Any

from cworld.engine.rules.index import CollectionIndexes, plan, select
from cworld.seeding import derive_rng
from cworld.values import match_text, matches, norm, text_of

ALPHABET = "abcXYZ 09-.'\"\t\n\r\x0b\x0c\x1c\x1f\u00a0\u2003é\u00dfﬁ\u2163Ωç"


def _reference(*values: Any) -> str:
    """`norm` of the values' texts joined by spaces, nested values flattened: the text `matches` means."""
    def flat(value: Any) -> str:
        if isinstance(value, dict):
            return " ".join(flat(v) for v in value.values())
        if isinstance(value, list):
            return " ".join(flat(v) for v in value)
        return "" if value is None or isinstance(value, bool) else str(value)
    return norm(" ".join(flat(v) for v in values))


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(10)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 7)
    if kind < 3:
        return _text(rng)
    if kind < 7:
        return [None, True, rng.choice([0, -7, 2.5, float("inf")]), ("tu", "ple")][kind - 3]
    if kind == 7:
        return {"k": _value(rng, depth + 1), "j": _text(rng)}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]


def test_a_query_word_is_in_the_folded_text_exactly_when_in_the_normalized_one() -> None:
    rng = derive_rng(35, "test:engine_scale:folded")
    for _ in range(3000):
        values = tuple(_value(rng) for _ in range(rng.randint(1, 3)))
        folded, reference = match_text(*values), _reference(*values)
        assert text_of(values) == folded
        query = " ".join([_text(rng), *rng.sample(reference.split() or [""], min(2, len(reference.split())))])
        words = norm(query).split()
        for word in words:
            assert (word in folded) == (word in reference), (values, word)
            for cut in (word[1:], word[:-1]):
                assert not cut or (cut in folded) == (cut in reference), (values, cut)
        assert matches(query, *values) == all(w in reference for w in words)


def _records(seed: int, size: int) -> dict[str, Any]:
    rng = derive_rng(seed, "test:engine_scale:records")
    words = ["alpha", "Bravo", "são", "paulo", "delta", "echo", "ox", "café", "golf"]
    out: dict[str, Any] = {}
    for i in range(size):
        record: dict[str, Any] = {"n": rng.randrange(5), "body": {"text": " ".join(rng.sample(words, 2)),
                                                                 "tags": [rng.choice(words), rng.randrange(99)]}}
        if rng.random() < 0.9:  # a record without the title: `matches` raises on it, so it is always evaluated
            record["title"] = rng.choice(words).title()
        out[f"r{i:04d}"] = record
    out["odd"] = "not a record"
    return out


def test_a_narrowed_search_reads_only_its_candidates_texts_and_answers_as_a_full_one() -> None:
    """`matches` after (or before) a condition that narrows: the same keys, always-evaluated keys and
    exactness as each record tested in full, whether the texts were read before or not."""
    records = _records(3, 400)
    rng = derive_rng(3, "test:engine_scale:queries")
    wheres = ["it['n'] == args_n and matches(args_q, it['title'], it['body'])",
              "matches(args_q, it['title'], it['body']) and it['n'] == args_n",
              "(it['n'] == args_n and matches(args_q, it['title'])) or (it['n'] == 0 and matches(args_q, it['body']))"]
    lazy, full = CollectionIndexes(records), CollectionIndexes(records)
    full.text(("it['title']", "it['body']"), ["a"])  # every text read first
    full.text(("it['title']",), ["a"])
    full.text(("it['body']",), ["a"])
    assert not lazy._texts
    for n in range(200):
        args = {"args_n": rng.randrange(6), "args_q": rng.choice(["", "al", "PAU sao", "cafe", "zz", "o 4", "bravo"])}
        where = rng.choice(wheres)
        conjuncts = plan(where)
        answers = [select(ix, conjuncts, lambda e, a=args: eval(e, {}, a)) for ix in (lazy, full)]  # noqa: S307
        assert answers[0] == answers[1], (n, where, args)
        chosen = answers[0]
        for key, record in records.items():
            if type(record) is not dict:
                continue
            try:
                passes: bool | None = bool(eval(where, {"matches": matches}, {**args, "it": record}))  # noqa: S307
            except KeyError:
                passes = None  # the walk fails on it: it must be evaluated
            candidate = chosen.keys is None or key in chosen.keys or key in chosen.always
            assert candidate or passes is False, (n, where, args, key)
            if chosen.exact and chosen.keys is not None and key not in chosen.always:
                assert (key in chosen.keys) == bool(passes), (n, where, args, key)
    fresh = CollectionIndexes(records)  # one narrowed search reads the texts of its candidates only
    select(fresh, plan(wheres[0]), lambda e: {"args_n": 1, "args_q": "al"}[e])
    texts = fresh._texts[("it['title']", "it['body']")]
    assert not texts.complete
    assert set(texts.texts) | texts.residual == {k for k, r in records.items() if type(r) is dict and r["n"] == 1}
