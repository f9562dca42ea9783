"""The top-level parts of a state (the sandbox's apps) as the diff sees them, computed once for many diffs.

Every episode of a task is diffed against the same initial and expected state; only the actual state is
new. So each part's normalized tree and flat view are kept in a small memo and reused. Entries are keyed by
the part's content, its `marshal` bytes (format version 2: by value and exact type, `True`, `1` and `1.0`
apart, and no object references, so equal values give equal bytes whatever objects they share), never by
object identity: a caller that changes a state in place between two diffs gets a fresh entry. The same
bytes are the cheap test for "the same, types included" that tells the parts that changed (3x faster to
write than JSON). The trees and flat views handed out are shared between
diffs (and threads): read them, never write them (the diff never does).
"""

from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from cworld.sandbox.statediff.tree import Flat, Path, Rules, flatten, normalize

MEMO_CAPACITY = 96
"""Parts kept: a seed's apps plus the parts a few hundred tasks' ground truths change stay within it."""


def part_text(value: Any) -> bytes | None:
    """A part's content key: its marshal bytes; None for a value marshal cannot write (a subclass of a
    built-in type, an object)."""
    try:
        return marshal.dumps(value, 2)
    except (ValueError, RecursionError):
        return None


def same_part(a: Any, text_a: bytes | None, b: Any, text_b: bytes | None) -> bool | None:
    """True/False when the bytes tell whether two parts are the same, types included; None when only a
    walk can (no bytes, or equal values written differently, as dicts with their keys in another order)."""
    if a is b:
        return True
    if a != b:
        return False
    if text_a is not None and text_a == text_b:
        return True
    return None


@dataclass(frozen=True)
class PartView:
    """One part normalized at its place in the state: the tree and its nodes and leaves by full path."""

    tree: Any
    flat: Flat


class PartMemo:
    """Least recently used `PartView`s by (part key, content bytes, rules); safe to share between threads."""

    def __init__(self, capacity: int = MEMO_CAPACITY) -> None:
        self.capacity = capacity
        self._views: OrderedDict[tuple[str, bytes, Rules], PartView] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def view(self, key: str, value: Any, text: bytes | None, rules: Rules, *, remember: bool) -> PartView:
        """The part `value` (at top-level `key`) as the diff sees it. `remember`: keep a computed view (the
        initial and expected parts repeat across episodes; an actual part rarely does, so it is only looked up)."""
        memo_key = (key, text, rules) if text is not None else None
        if memo_key is not None:
            with self._lock:
                found = self._views.get(memo_key)
                if found is not None:
                    self._views.move_to_end(memo_key)
                    self.hits += 1
                    return found
                self.misses += 1
        root: Path = (("k", key),)
        tree = normalize(value, rules, root)
        made = PartView(tree, flatten(tree, root))
        if memo_key is not None and remember:
            with self._lock:
                self._views[memo_key] = made
                while len(self._views) > self.capacity:
                    self._views.popitem(last=False)
        return made


SHARED = PartMemo()
"""The process's memo: what `diff_from` uses for every diff."""
