"""The top-level parts of a state (the sandbox's apps) as the diff sees them, computed once for many diffs,
and what the three states share below the top level, left out of the diff (`shared_left_out`).

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


def same_value(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (`==` alone takes True for 1 and 1 for 1.0; the diff
    does not). A false "not the same" only costs time, never changes a result."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, dict):
        return all(same_value(v, b[k]) for k, v in a.items())
    if isinstance(a, list | tuple):
        return all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return True


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


def shared_left_out(initial: Any, expected: Any, actual: Any) -> tuple[dict[str, Any], dict[str, Any],
                                                                      dict[str, Any]] | None:
    """The three states without the keys whose values are the same in all three, types included, from the
    top down through dicts (never into lists); None when none could be left out.

    A value the same in all three adds nothing to T or M_b wherever it sits, as an untouched app does
    (`diff_from`): what is left is the agent's change and the task's, typically one record of one
    collection, so the diff normalizes that and not the app's every record. Paths stay as they were, and
    a dict that is not the same in all three keeps at least one key. The results share the inputs' values:
    read them only."""
    if not (type(initial) is dict and type(expected) is dict and type(actual) is dict):
        return None
    out = dict(initial), dict(expected), dict(actual)
    left_out = False
    for key in initial:
        if key not in expected or key not in actual:
            continue
        values = initial[key], expected[key], actual[key]
        if _same_in_all(*values):
            for state in out:
                del state[key]
            left_out = True
        elif (inner := shared_left_out(*values)) is not None:
            for state, value in zip(out, inner, strict=True):
                state[key] = value
            left_out = True
    return out if left_out else None


def _same_in_all(initial: Any, expected: Any, actual: Any) -> bool:
    """The same value in all three states, types included: identity or inequality first, then marshal
    bytes (written once for the initial value), then a walk for equal values written differently."""
    told = [same_part(initial, None, other, None) for other in (expected, actual)]
    if False in told:
        return False
    if None not in told:
        return True
    text = part_text(initial)
    for other, known in zip((expected, actual), told, strict=True):
        if known is None:
            same = same_part(initial, text, other, part_text(other))
            if not (same_value(initial, other) if same is None else same):
                return False
    return True
