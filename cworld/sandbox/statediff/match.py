"""Value equality for the state diff: numbers with a tolerance, bools apart from ints, long text fuzzily."""

from __future__ import annotations

import difflib
import math
from typing import Any, Literal

from cworld.sandbox.statediff.tree import ABSENT, Rules

Match = Literal["exact", "fuzzy"] | None


def norm_text(text: str) -> str:
    """Case and whitespace do not make two long texts different."""
    return " ".join(text.casefold().split())


def text_ratio(a: str, b: str, floor: float = 0.0) -> float:
    """difflib ratio of the normalized texts; returns early (an upper bound) when below `floor`."""
    matcher = difflib.SequenceMatcher(None, norm_text(a), norm_text(b), autojunk=False)
    if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
        return matcher.quick_ratio()
    return matcher.ratio()


_SCALARS = frozenset({str, int, float, bool, type(None)})


def match(ref: Any, other: Any, rules: Rules, fuzzy: bool = True) -> Match:
    """How `other` equals the reference value: "exact", "fuzzy" (long text only), or None."""
    if type(ref) is type(other) and type(ref) in _SCALARS and ref == other:
        return "exact"  # the common case, first: two equal scalars of one type (what the rules below say too)
    if ref is ABSENT or other is ABSENT:
        return "exact" if ref is other else None
    if isinstance(ref, bool) or isinstance(other, bool):
        return "exact" if type(ref) is type(other) and ref == other else None
    if isinstance(ref, int | float) and isinstance(other, int | float):
        tol = rules.float_tolerance
        return "exact" if math.isclose(ref, other, rel_tol=tol, abs_tol=tol) else None
    if isinstance(ref, str) and isinstance(other, str):
        return _match_text(ref, other, rules, fuzzy)
    if isinstance(ref, list) and isinstance(other, list):
        return _match_all(list(zip(ref, other, strict=False)), len(ref) == len(other), rules, fuzzy)
    if isinstance(ref, dict) and isinstance(other, dict):
        pairs = [(ref[k], other[k]) for k in ref if k in other]
        return _match_all(pairs, ref.keys() == other.keys(), rules, fuzzy)
    return "exact" if ref == other else None


def _match_text(ref: str, other: str, rules: Rules, fuzzy: bool) -> Match:
    if ref == other:
        return "exact"
    if not fuzzy or len(norm_text(ref)) <= rules.fuzzy_min_chars:
        return None
    return "fuzzy" if text_ratio(ref, other, rules.fuzzy_threshold) >= rules.fuzzy_threshold else None


def _match_all(pairs: list[tuple[Any, Any]], same_shape: bool, rules: Rules, fuzzy: bool) -> Match:
    if not same_shape:
        return None
    results = [match(a, b, rules, fuzzy) for a, b in pairs]
    if None in results:
        return None
    return "fuzzy" if "fuzzy" in results else "exact"


def nearer_to_expected(actual: Any, expected: Any, initial: Any) -> bool:
    """A fuzzy hit counts only if the text moved toward the target: doing nothing to a text that
    needed a small edit would otherwise pass, since the old text resembles the new one."""
    if not (isinstance(actual, str) and isinstance(expected, str) and isinstance(initial, str)):
        return True
    return text_ratio(actual, expected) > text_ratio(actual, initial)
