"""Generated ids in the state diff: pair new records by content, align new id values, rename.

Generated ids depend on how many things a run created before (`mail_0041` for the gold plan may be
`mail_0043` for an agent that saved a draft first), so they cannot be compared as they are:

1. Each new record of the actual state (a record whose generated id is not in the initial state at
   that collection) is paired with the new expected record it most resembles, and takes its id.
2. After that, where the expected and the actual state hold two different new id-like values at the
   same path (a new `thread_id`), the actual value is taken to be the expected one.

Every occurrence of a renamed id in the actual state (keys, values, list items) is rewritten at once,
so references follow their record. An actual id that would collide with a rename target becomes
`<id>~unmatched`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cworld.sandbox.statediff.match import match
from cworld.sandbox.statediff.tree import ListNode, Path, Rules, Seg, dump_canonical, flatten, render


@dataclass(frozen=True)
class IdContext:
    """The rules plus every string of the initial state: an id-like string not among them is new."""

    rules: Rules
    initial_strings: frozenset[str]

    def is_new_id(self, value: Any) -> bool:
        return (
            isinstance(value, str)
            and self.rules.generated_id.search(value) is not None
            and value not in self.initial_strings
        )

    def equal(self, expected: Any, actual: Any) -> bool:
        """Equal for pairing: the same value, or two new generated ids (not yet aligned)."""
        return match(expected, actual, self.rules) is not None or (
            self.is_new_id(expected) and self.is_new_id(actual)
        )


def _collect(root: Any, visit: Callable[[Any, set[str]], Iterable[Any]]) -> set[str]:
    """Depth-first over `root` without recursion: `visit` adds a node's own strings and returns its children."""
    found: set[str] = set()
    stack = [root]
    while stack:
        stack.extend(visit(stack.pop(), found))
    return found


def _raw_node(item: Any, found: set[str]) -> Iterable[Any]:
    if isinstance(item, str):
        found.add(item)
    elif isinstance(item, dict):
        found.update(k for k in item if isinstance(k, str))
        return item.values()
    elif isinstance(item, list | tuple):
        return item
    return ()


def _tree_node(node: Any, found: set[str]) -> Iterable[Any]:
    if not isinstance(node, dict):
        found |= raw_strings(node)
        return ()
    for kind, raw in node:
        found |= raw_strings(json.loads(raw)) if kind == "e" else raw_strings(raw)
    return node.values()


def raw_strings(value: Any) -> set[str]:
    """Every string value and dict key of a plain JSON-like value."""
    return _collect(value, _raw_node)


def tree_strings(tree: Any) -> set[str]:
    """Every string of a normalized tree: keys, record ids, list items and leaf values."""
    return _collect(tree, _tree_node)


# --- 1. new records -------------------------------------------------------------------------


def pair_new_records(initial: Any, expected: Any, actual: Any, ctx: IdContext) -> dict[str, str]:
    """Actual id -> expected id for every pair of new records (top-down, so nested records pair too)."""
    id_map: dict[str, str] = {}
    _pair(initial, expected, actual, ctx, id_map)
    return id_map


def _eligible(seg: Seg, value: Any, ctx: IdContext) -> bool:
    kind, raw = seg
    return kind in ("i", "k") and type(value) is dict and ctx.is_new_id(raw)


def _pair(initial: Any, expected: Any, actual: Any, ctx: IdContext, id_map: dict[str, str]) -> None:
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        return
    old = initial if isinstance(initial, dict) else {}
    new_e = [s for s in expected if s not in old and _eligible(s, expected[s], ctx)]
    new_a = [s for s in actual if s not in old and _eligible(s, actual[s], ctx)]
    for e_seg, a_seg in _greedy_pairs(new_e, new_a, expected, actual, ctx):
        if a_seg[1] != e_seg[1]:
            id_map.setdefault(a_seg[1], e_seg[1])
        _pair(None, expected[e_seg], actual[a_seg], ctx, id_map)
    skip = set(new_e) | set(new_a)
    for seg, child in expected.items():
        if seg in actual and seg not in skip:
            _pair(old.get(seg), child, actual[seg], ctx, id_map)


def _greedy_pairs(
    new_e: list[Seg], new_a: list[Seg], expected: dict[Seg, Any], actual: dict[Seg, Any], ctx: IdContext
) -> list[tuple[Seg, Seg]]:
    """Most similar first; ties prefer the same id, then list order (deterministic)."""
    candidates: list[tuple[float, bool, int, int]] = []
    for ei, e_seg in enumerate(new_e):
        for ai, a_seg in enumerate(new_a):
            sim = record_similarity(expected[e_seg], actual[a_seg], ctx)
            if sim >= ctx.rules.pair_min_similarity:
                candidates.append((-sim, e_seg[1] != a_seg[1], ei, ai))
    candidates.sort()
    used_e: set[int] = set()
    used_a: set[int] = set()
    pairs: list[tuple[Seg, Seg]] = []
    for _, _, ei, ai in candidates:
        if ei not in used_e and ai not in used_a:
            used_e.add(ei)
            used_a.add(ai)
            pairs.append((new_e[ei], new_a[ai]))
    return pairs


def record_similarity(expected: dict[Seg, Any], actual: dict[Seg, Any], ctx: IdContext) -> float:
    """Equal leaves / leaves of the larger record: the share of fields that agree.

    Identity fields are left out and nested generated ids are generalized to `*` (leaves under the
    same general path are matched as a multiset), so a new thread whose new messages got other ids
    still looks like the expected thread.
    """
    e_groups = _content_groups(expected, ctx)
    a_groups = _content_groups(actual, ctx)
    size = max(sum(map(len, e_groups.values())), sum(map(len, a_groups.values())))
    if not size:
        return 1.0
    hits = sum(_count_equal(e_groups[p], a_groups[p], ctx) for p in e_groups.keys() & a_groups.keys())
    return hits / size


def _content_groups(record: dict[Seg, Any], ctx: IdContext) -> dict[Path, list[Any]]:
    groups: dict[Path, list[Any]] = {}
    for path, value in flatten(record).leaves.items():
        if path and path[-1][0] == "k" and path[-1][1] in ctx.rules.identity_keys:
            continue
        general = tuple(
            (seg[0], "*") if seg[0] in ("i", "k") and i < len(path) - 1 and ctx.is_new_id(seg[1]) else seg
            for i, seg in enumerate(path)
        )
        groups.setdefault(general, []).append(value)
    return groups


def _count_equal(e_values: list[Any], a_values: list[Any], ctx: IdContext) -> int:
    free = list(a_values)
    found = 0
    for value in e_values:
        for j, candidate in enumerate(free):
            if ctx.equal(value, candidate):
                del free[j]
                found += 1
                break
    return found


# --- 2. new id values -----------------------------------------------------------------------


def align_new_values(expected: dict[Path, Any], actual: dict[Path, Any], ctx: IdContext) -> dict[str, str]:
    """Actual -> expected for new id-like values at the same path; the first pairing of each wins,
    so an agent that split one new thread into two still misses the second message's thread."""
    id_map: dict[str, str] = {}
    targets: set[str] = set()
    candidates = [
        p
        for p in expected.keys() & actual.keys()
        if expected[p] != actual[p] and ctx.is_new_id(expected[p]) and ctx.is_new_id(actual[p])
    ]
    for path in sorted(candidates, key=render):
        value, target = actual[path], expected[path]
        if value not in id_map and target not in targets:
            id_map[value] = target
            targets.add(target)
    return id_map


# --- renaming -------------------------------------------------------------------------------


def make_injective(id_map: dict[str, str], present: set[str]) -> dict[str, str]:
    """A target already used in the actual state for something else is moved out of the way."""
    out = dict(id_map)
    for target in id_map.values():
        if target in present and target not in out:
            out[target] = f"{target}~unmatched"
    return out


def rename_ids(node: Any, id_map: dict[str, str]) -> Any:
    """Rewrite every occurrence of a mapped id in a normalized tree at once (no chains; swaps work)."""
    if not id_map:
        return node
    if isinstance(node, dict):
        out: dict[Seg, Any] = ListNode() if isinstance(node, ListNode) else {}
        for seg, child in node.items():
            new_seg = _rename_seg(seg, id_map)
            new_child = rename_ids(child, id_map)
            if new_seg in out and seg[0] == "e":
                out[new_seg] += new_child
            else:
                out[seg if new_seg in out else new_seg] = new_child
        return out
    return _rename_plain(node, id_map)


def _rename_seg(seg: Seg, id_map: dict[str, str]) -> Seg:
    kind, raw = seg
    if kind == "e":
        plain = json.loads(raw)
        renamed = _rename_plain(plain, id_map)
        return seg if renamed == plain else ("e", dump_canonical(renamed))
    return (kind, id_map[raw]) if isinstance(raw, str) and raw in id_map else seg


def _rename_plain(value: Any, id_map: dict[str, str]) -> Any:
    if isinstance(value, str):
        return id_map.get(value, value)
    if isinstance(value, list):
        return [_rename_plain(v, id_map) for v in value]
    if isinstance(value, dict):
        return {id_map.get(k, k): _rename_plain(v, id_map) for k, v in value.items()}
    return value


def compose(first: dict[str, str], second: dict[str, str]) -> dict[str, str]:
    """Original actual id -> final id, for the report."""
    out = {src: second.get(dst, dst) for src, dst in first.items()}
    produced = set(first.values())
    for src, dst in second.items():
        if src not in produced:
            out.setdefault(src, dst)
    return dict(sorted(out.items()))
