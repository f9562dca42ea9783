"""Key paths for the state diff: a JSON-like state becomes a tree keyed by path segments.

A segment is `("k", key)` for a dict key, `("i", id)` for a record in a list (a dict carrying an
identity key), or `("e", canonical_json)` for any other list item, whose value is how many times
it occurs (lists without ids are multisets). Keying lists this way makes growth and reordering
harmless. Volatile keys and paths are dropped here, so nothing downstream ever sees them.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cworld.sandbox.statediff.models import ABSENT_REPR, StateDiffConfig

Seg = tuple[str, Any]
Path = tuple[Seg, ...]


class _Absent:
    """The value at a path that a state does not have (distinct from a stored `None`)."""

    def __repr__(self) -> str:
        return ABSENT_REPR


ABSENT: Any = _Absent()


class ListNode(dict):  # type: ignore[type-arg]
    """A normalized list: records by id, other items by canonical value. Marked so reports show a list."""


@dataclass(frozen=True)
class Rules:
    """A `StateDiffConfig` compiled once per diff: lowercase key globs and path regexes."""

    identity_keys: tuple[str, ...]
    volatile_keys: re.Pattern[str]
    volatile_paths: re.Pattern[str] | None
    ordered_paths: re.Pattern[str] | None
    fuzzy_min_chars: int
    fuzzy_threshold: float
    generated_id: re.Pattern[str]
    pair_min_similarity: float
    float_tolerance: float

    @classmethod
    def from_config(cls, cfg: StateDiffConfig) -> Rules:
        return cls(
            identity_keys=cfg.identity_keys,
            volatile_keys=_key_globs(cfg.volatile_keys),
            volatile_paths=_path_globs(cfg.volatile_paths),
            ordered_paths=_path_globs(cfg.ordered_paths),
            fuzzy_min_chars=cfg.fuzzy_min_chars,
            fuzzy_threshold=cfg.fuzzy_threshold,
            generated_id=re.compile(cfg.generated_id_pattern),
            pair_min_similarity=cfg.pair_min_similarity,
            float_tolerance=cfg.float_tolerance,
        )

    def is_volatile_key(self, key: Any) -> bool:
        return self.volatile_keys.fullmatch(str(key)) is not None

    def is_volatile_path(self, path: Path) -> bool:
        return self.volatile_paths is not None and _matches(self.volatile_paths, path)

    def is_ordered(self, path: Path) -> bool:
        return self.ordered_paths is not None and _matches(self.ordered_paths, path)


def _key_globs(globs: tuple[str, ...]) -> re.Pattern[str]:
    """All key-name globs as one case-insensitive regex (a state has thousands of keys)."""
    if not globs:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs), re.IGNORECASE)


def _path_globs(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    """All path globs as one regex: a snapshot has tens of thousands of paths to test."""
    if not globs:
        return None
    return re.compile("|".join(f"(?:{glob_to_regex(g).pattern})" for g in globs))


def _matches(pattern: re.Pattern[str], path: Path) -> bool:
    try:
        text = _render_cached(path)
    except TypeError:  # an unhashable segment: render it afresh
        text = render(path)
    return pattern.fullmatch(text) is not None


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """`*` and `?` stay inside one segment (`[*]` is any record), `**` crosses segments."""
    parts: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**", i):
            parts.append(".*")
            i += 2
            continue
        char = glob[i]
        parts.append(r"[^.\[\]]*" if char == "*" else r"[^.\[\]]" if char == "?" else re.escape(char))
        i += 1
    return re.compile("".join(parts))


_PLAIN = re.compile(r"^[^.\[\]\"\s]+$")


def _render_seg(seg: Seg, first: bool) -> str:
    kind, raw = seg
    if kind == "e":
        return f"[={raw}]"
    text = str(raw)
    plain = isinstance(raw, str | int) and _PLAIN.match(text) is not None
    if kind == "i":
        return f"[{text}]" if plain else f"[{json.dumps(text)}]"
    if plain and isinstance(raw, str):
        return text if first else f".{text}"
    return f"[{json.dumps(text)}]"


@lru_cache(maxsize=200_000)
def _render_cached(path: Path) -> str:
    return render(path)


def render(path: Path) -> str:
    """`mail.messages[msg_0003].read`; `tags[="urgent"]` for a multiset element; `$` for the root."""
    if not path:
        return "$"
    return "".join(_render_seg(seg, i == 0) for i, seg in enumerate(path))


def record_id(item: Any, rules: Rules) -> str | int | None:
    """The identity of a list item, if it is a record that carries one of the identity keys."""
    if not isinstance(item, dict):
        return None
    for key in rules.identity_keys:
        value = item.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return None


def strip_volatile(value: Any, rules: Rules) -> Any:
    """A plain JSON copy without volatile keys (for whole-value leaves and multiset elements)."""
    if isinstance(value, dict):
        return {str(k): strip_volatile(v, rules) for k, v in value.items() if not rules.is_volatile_key(k)}
    if isinstance(value, list | tuple):
        return [strip_volatile(v, rules) for v in value]
    return value


def dump_canonical(plain: Any) -> str:
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def normalize(value: Any, rules: Rules, path: Path = ()) -> Any:
    """Dicts become dicts of segments, lists become `ListNode`s (or one leaf on an ordered path)."""
    if isinstance(value, dict):
        return _normalize_dict(value, rules, path)
    if isinstance(value, list | tuple):
        if rules.is_ordered(path):
            return strip_volatile(value, rules)
        return _normalize_list(value, rules, path)
    return value


def _normalize_dict(value: dict[Any, Any], rules: Rules, path: Path) -> dict[Seg, Any]:
    out: dict[Seg, Any] = {}
    for key, child in value.items():
        seg: Seg = ("k", key)
        if rules.is_volatile_key(key) or rules.is_volatile_path((*path, seg)):
            continue
        out[seg] = normalize(child, rules, (*path, seg))
    return out


def _normalize_list(items: list[Any] | tuple[Any, ...], rules: Rules, path: Path) -> ListNode:
    out = ListNode()
    seen: dict[str | int, int] = {}
    for item in items:
        ident = record_id(item, rules)
        if ident is None:
            seg: Seg = ("e", dump_canonical(strip_volatile(item, rules)))
            if not rules.is_volatile_path((*path, seg)):
                out[seg] = out.get(seg, 0) + 1
            continue
        seen[ident] = seen.get(ident, 0) + 1
        seg = ("i", ident if seen[ident] == 1 else f"{ident}#{seen[ident]}")
        if not rules.is_volatile_path((*path, seg)):
            out[seg] = _normalize_dict(item, rules, (*path, seg))
    return out


@dataclass
class Flat:
    """Every node of a normalized tree by path (containers too, even empty) and its scalar leaves."""

    nodes: dict[Path, Any]
    leaves: dict[Path, Any]


def flatten(tree: Any, root: Path = ()) -> Flat:
    """`tree`'s nodes and leaves by path; `root` is where the tree sits (a part of a larger state)."""
    flat = Flat(nodes={}, leaves={})
    stack: list[tuple[Path, Any]] = [(root, tree)]
    while stack:
        path, node = stack.pop()
        flat.nodes[path] = node
        if isinstance(node, dict):
            stack.extend(((*path, seg), child) for seg, child in node.items())
        else:
            flat.leaves[path] = node
    return flat


def to_plain(node: Any) -> Any:
    """A normalized node back as JSON for a report; element paths show their count."""
    if node is ABSENT:
        return ABSENT_REPR
    if isinstance(node, ListNode):
        items: list[Any] = []
        for (kind, raw), child in node.items():
            items.extend([json.loads(raw)] * child if kind == "e" else [to_plain(child)])
        return items
    if isinstance(node, dict):
        return {seg[1]: to_plain(child) for seg, child in node.items()}
    return node
