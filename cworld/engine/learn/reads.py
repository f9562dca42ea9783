"""What a read answers, learned from its answers: a list's collection (its items are that collection's
records), its page size (the most items a page showed while more were left), its sort order (a field the
items always came in order of) and filters (arguments that equal an item field in every item shown); and
the answer's keys for other tools, where the state after the call holds their values (a login's token)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from cworld.engine.learn.diff import changes, collections, is_map
from cworld.engine.learn.scope import MISSING, Scope, arg
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.spec import ListRead

_PAGE_ARGS = ("page", "page_number", "pageNumber")
_SIZE_ARGS = ("page_size", "limit", "per_page", "pageSize", "max_results")


def answer_value(obs: Observation) -> dict[str, Any] | None:
    found = obs.result.structured_content
    return found if isinstance(found, dict) else None


def learn_list(oks: list[Observation], scopes: dict[int, Scope]) -> tuple[ListRead | None, int]:
    """A list read when the accepted answers hold a list of records of one collection (and how many
    answers support it)."""
    votes: Counter[tuple[str, str, str]] = Counter()
    first: dict[tuple[str, str, str], int] = {}
    for o in oks:
        body = answer_value(o)
        if body is None or o.before is None:
            continue
        for into, items in body.items():
            if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
                continue
            state = scopes[id(o)].value("state")
            for coll in collections(state if isinstance(state, dict) else o.before):
                records = scopes[id(o)].value(coll)
                if not isinstance(records, dict) or not records:
                    continue
                for id_key in items[0]:
                    if all(str(i.get(id_key)) in records for i in items):
                        votes[(into, coll, id_key)] += 1
                        first.setdefault((into, coll, id_key), list(items[0]).index(id_key))
    if not votes:
        return None, 0
    # the most answers; of as many, the id a record is shown under first (a cart line's own id, not its product's)
    (into, coll, id_key), support = max(votes.items(), key=lambda kv: (kv[1], -first[kv[0]]))
    pages = [(o, answer_value(o) or {}) for o in oks]
    spec: dict[str, Any] = {"from": coll, "into": into, "page_size": _page_size(pages, into),
                            "item": f"{{{id_key!r}: key, **it}}"}  # each record under the key name the answers used
    props = (oks[0].tool.input_schema or {}).get("properties") or {}
    spec["page"] = next((p for p in _PAGE_ARGS if p in props), None)
    spec["size"] = next((p for p in _SIZE_ARGS if p in props), None)
    if spec["page"] and _zero_based(pages):
        spec["page_base"] = 0
    spec["meta"] = any("total" in body or "has_more" in body for _, body in pages)
    sort = _sort(pages, into, coll, id_key, scopes)
    if sort:
        spec["sort"], spec["desc"] = sort
    where = _filters(pages, into, props)
    if where:
        spec["where"] = where
    return ListRead.model_validate(spec), support


def _page_size(pages: list[tuple[Observation, dict[str, Any]]], into: str) -> int:
    """The service's own page size: its answers' `page_size` when they say, else the most items a page
    showed with more left (else the most it ever showed)."""
    said = Counter(body["page_size"] for o, body in pages if isinstance(body.get("page_size"), int)
                   and not any(o.arguments.get(s) for s in _SIZE_ARGS))
    if said:
        return int(said.most_common(1)[0][0])
    full = [len(body.get(into) or []) for _, body in pages if body.get("has_more")]
    shown = [len(body.get(into) or []) for _, body in pages]
    return max(full or shown or [10]) or 10


def _zero_based(pages: list[tuple[Observation, dict[str, Any]]]) -> bool:
    return any(body.get("page") == 0 for _, body in pages)


def _sort(pages: list[tuple[Observation, dict[str, Any]]], into: str, coll: str, id_key: str,
          scopes: dict[int, Scope]) -> tuple[str, bool] | None:
    """A record field (or the key) the items always came ordered by, ascending or descending."""
    rows = []
    for o, body in pages:
        records = scopes[id(o)].value(coll)
        items = body.get(into) or []
        if isinstance(records, dict) and len(items) > 1:
            rows.append([(str(i.get(id_key)), records.get(str(i.get(id_key))) or {}) for i in items])
    if not rows:
        return None
    fields = Counter(f for row in rows for _, r in row for f in r if isinstance(f, str))
    candidates = [("key", None)] + [(f"it.get({f!r})", f) for f, _ in fields.most_common()]
    for expr, name in candidates:
        for desc in (False, True):
            if all(_ordered([k if name is None else r.get(name) for k, r in row], desc) for row in rows) and \
                    any(len({repr(k if name is None else r.get(name)) for k, r in row}) > 1 for row in rows):
                return (expr if name is None else f"(str({expr}), key)"), desc
    return None


def _ordered(values: list[Any], desc: bool) -> bool:
    try:
        keys = [str(v) for v in values]
    except Exception:
        return False
    return keys == sorted(keys, reverse=desc)


def _filters(pages: list[tuple[Observation, dict[str, Any]]], into: str, props: dict[str, Any]) -> str | None:
    """Arguments whose value every shown item held in a field of the same name (`status`, `board_id`)."""
    parts = []
    for name in props:
        if name in _PAGE_ARGS or name in _SIZE_ARGS:
            continue
        given = [(o, body) for o, body in pages if o.arguments.get(name) is not None and body.get(into)]
        if given and all(all(str(i.get(name)) == str(o.arguments[name]) for i in body[into]) for o, body in given):
            parts.append(f"{arg(name)} in (None, it.get({name!r}))")
    return " and ".join(parts) or None


def learn_answer(oks: list[Observation], scopes_after: dict[int, Scope]) -> tuple[str | None, int]:
    """An answer of the keys whose values the state after the call holds at the same place in every
    accepted call (a token where the login stored it); None when no key is explained so."""
    keys: dict[str, Counter[str]] = {}
    bodies = [(o, answer_value(o)) for o in oks]
    bodies = [(o, b) for o, b in bodies if b is not None and o.after is not None]
    for o, body in bodies:
        assert body is not None
        for key, value in body.items():
            if isinstance(value, str | int | float) and not isinstance(value, bool) and len(str(value)) >= 4:
                for path in _located(o.after or {}, value):
                    keys.setdefault(key, Counter())[path] += 1
    parts = []
    for key, paths in keys.items():
        path, count = paths.most_common(1)[0]
        if count >= max(1, len(bodies) * 3 // 4) and scopes_after and \
                all(scopes_after[id(o)].value(path) is not MISSING for o, _ in bodies):
            parts.append(f"{key!r}: {path}")
    support = len(bodies)
    return ("{" + ", ".join(parts) + "}", support) if parts else (None, 0)


def _located(state: dict[str, Any], value: Any, depth: int = 3) -> list[str]:
    """Where a value sits among the state's single records (not inside maps of records)."""
    out: list[str] = []
    for name, sub in state.items():
        if isinstance(sub, dict) and name.isidentifier() and len(sub) <= 12 and not is_map(sub):
            out += _inside(sub, value, name, depth - 1)
    return out


def _inside(record: dict[str, Any], value: Any, expr: str, depth: int) -> list[str]:
    out = []
    for key, sub in record.items():
        here = f"{expr}[{key!r}]"
        if sub == value:
            out.append(here)
        elif isinstance(sub, dict) and depth > 0 and len(sub) <= 12 and not is_map(sub):
            out += _inside(sub, value, here, depth - 1)
    return out


def made_answer(oks: list[Observation]) -> str | None:
    """Where a write makes records (an event; a transfer and its code), the answer shows the first, as the
    service's did: its key under the answer key that named the new record in (nearly) every answer (the
    engine's answer names the record the world holds, so later calls find it by the id they were shown)."""
    named: Counter[str] = Counter()
    for o in oks:
        body = answer_value(o)
        if body is None or o.before is None or o.after is None:
            continue
        made = {c.key for c in changes(o.before, o.after) if c.kind == "create"}
        named.update(k for k, v in body.items() if isinstance(v, str) and v in made)
    if not named:
        return None
    key, n = named.most_common(1)[0]
    return f"{{{key!r}: made_key, **made}}" if n >= len(oks) * 3 // 4 else None
