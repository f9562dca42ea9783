"""The state-diff evaluator of ComplexMCP §3.3: did the agent make the required changes, and only those?

Three states are compared over key paths: `initial`, `expected` (after the gold plan) and `actual`
(after the agent). T are the paths where expected differs from initial, M those of T where actual
equals expected, M_b the paths outside T where actual differs from initial. R_c = M / T,
R_b = M_b / T, success iff R_c = 1 and R_b = 0. Every rule beyond the paper (how lists are keyed,
what counts once, volatile keys, fuzzy text, new-record pairing) is in `docs/state-diff.md`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Any, Literal

from cworld.sandbox.statediff.ids import (
    IdContext,
    align_new_values,
    compose,
    make_injective,
    pair_new_records,
    raw_strings,
    rename_ids,
    tree_strings,
)
from cworld.sandbox.statediff.match import match, nearer_to_expected
from cworld.sandbox.statediff.models import (
    ABSENT_REPR,
    DEFAULT_VOLATILE_KEYS,
    Change,
    StateDiffConfig,
    StateDiffResult,
)
from cworld.sandbox.statediff.overlay import actual_state
from cworld.sandbox.statediff.parts import SHARED, PartView, part_text, same_part, same_value, shared_left_out
from cworld.sandbox.statediff.tree import ABSENT, Flat, Path, Rules, flatten, normalize, render, to_plain
from cworld.sandbox.statediff.world import world_parts

__all__ = [
    "ABSENT_REPR",
    "DEFAULT_VOLATILE_KEYS",
    "Change",
    "StateDiffConfig",
    "StateDiffResult",
    "Baseline",
    "config_for_apps",
    "diff_from",
    "sandbox_baseline",
    "sandbox_diff_config",
    "sandbox_initial_state",
    "sandbox_state_diff",
    "diff_states",
]

Kind = Literal["added", "removed", "changed"]


@dataclass
class _Views:
    initial: Flat
    expected: Flat
    actual: Flat


_DEFAULT_CONFIG = StateDiffConfig()


@dataclass(frozen=True)
class Baseline:
    """An initial state ready for many diffs: the state (read-only), the strings of each top-level part
    (an app of the sandbox), which tell generated ids from known ones, and each part's content bytes (`parts.py`).
    `sandbox_baseline` caches one per seed."""

    state: Any
    strings: dict[str, frozenset[str]]
    texts: dict[str, bytes | None] = field(default_factory=dict)

    @classmethod
    def of(cls, state: Any) -> Baseline:
        if not isinstance(state, dict):
            return cls(state, {"": frozenset(raw_strings(state))})
        return cls(state, {key: frozenset(raw_strings({key: value})) for key, value in state.items()},
                   {key: part_text(value) for key, value in state.items()})

    def extended(self, parts: dict[str, Any]) -> Baseline:
        """This baseline with more top-level parts (the worlds an episode touched), sharing the rest."""
        if not parts:
            return self
        more = {key: frozenset(raw_strings({key: value})) for key, value in parts.items()}
        texts = {key: part_text(value) for key, value in parts.items()}
        return Baseline({**self.state, **parts}, {**self.strings, **more}, {**self.texts, **texts})

    @cached_property
    def all_strings(self) -> frozenset[str]:
        return frozenset().union(*self.strings.values())


class _PartTexts:
    """The content bytes of each top-level part of the three states (`parts.py`), written once per diff; a
    part that is the baseline's own object has the baseline's."""

    def __init__(self, baseline: Baseline, expected: dict[str, Any], actual: dict[str, Any]) -> None:
        self.baseline = baseline
        self._states = {"initial": baseline.state, "expected": expected, "actual": actual}
        self._texts: dict[str, dict[str, bytes | None]] = {"initial": dict(baseline.texts), "expected": {}, "actual": {}}

    def text(self, which: str, key: str) -> bytes | None:
        texts = self._texts[which]
        if key not in texts:
            value = self._states[which][key]
            own = key in self.baseline.texts and value is self.baseline.state.get(key)
            texts[key] = self.baseline.texts[key] if own else part_text(value)
        return texts[key]

    def same(self, key: str, which: str) -> bool:
        """Is the part the same in `which` as in the initial state, types included?"""
        a, b = self._states["initial"][key], self._states[which][key]
        told = same_part(a, None, b, None)
        if told is None:
            told = same_part(a, self.text("initial", key), b, self.text(which, key))
        return same_value(a, b) if told is None else told


class _LeftOut:
    """The strings of the parts left out of a diff (in whole or in part), gathered only when a rename asks:
    most diffs rename nothing."""

    def __init__(self, baseline: Baseline, keys: set[str]) -> None:
        self.baseline, self.keys = baseline, keys

    def __bool__(self) -> bool:
        return bool(self.keys)

    def __contains__(self, text: object) -> bool:
        return text in self.strings

    @cached_property
    def strings(self) -> frozenset[str]:
        return frozenset().union(*(self.baseline.strings[k] for k in self.keys))


class _LeftOutRenamed(Exception):
    """An id rename touches a part that was left out of the diff: redo it over everything."""


def diff_states(
    initial: Any, expected: Any, actual: Any, *, config: StateDiffConfig = _DEFAULT_CONFIG
) -> StateDiffResult:
    """Score the agent's end state against the ground truth; the inputs are never modified."""
    return diff_from(Baseline.of(initial), expected, actual, config=config)


def diff_from(
    baseline: Baseline, expected: Any, actual: Any, *, config: StateDiffConfig = _DEFAULT_CONFIG
) -> StateDiffResult:
    """`diff_states` from a prepared initial state.

    Top-level parts (apps) that are the same in all three states add nothing to T or M_b, so they are
    left out of the diff, which is then a fraction of the work: typically one or two of the sandbox's
    apps change. Inside the apps that do, what the three states share is left out too, down through dicts
    (`parts.shared_left_out`): typically one record of one collection is left to diff. The one way a
    left-out value could still matter is id renaming reaching into it; the ids renamed are new ones, never
    strings of the initial state, so it cannot, except for a duplicate record's `id#2` key, which is no
    raw string: a rename that involves a string of a part left out (in whole or in part) or a `#` redoes
    the diff over everything."""
    initial, rules, strings = baseline.state, _rules(config), baseline.all_strings
    if not (isinstance(initial, dict) and isinstance(expected, dict) and isinstance(actual, dict)):
        return _diff(initial, expected, actual, rules, strings, frozenset())
    texts = _PartTexts(baseline, expected, actual)
    untouched = {k for k in initial if k in expected and k in actual and texts.same(k, "actual")
                 and texts.same(k, "expected")}
    cut = {k: parts for k in initial if k not in untouched and k in expected and k in actual
           and (parts := _worth_cutting(shared_left_out(initial[k], expected[k], actual[k]), texts, k)) is not None}
    if untouched or cut:
        kept_i, kept_e, kept_a = ({k: v for k, v in state.items() if k not in untouched}
                                  for state in (initial, expected, actual))
        for key, (part_i, part_e, part_a) in cut.items():
            kept_i[key], kept_e[key], kept_a[key] = part_i, part_e, part_a
        try:
            return _diff(kept_i, kept_e, kept_a, rules, strings, _LeftOut(baseline, untouched | cut.keys()), texts,
                         frozenset(cut))
        except _LeftOutRenamed:
            pass
    return _diff(initial, expected, actual, rules, strings, frozenset(), texts)


def _worth_cutting(parts: tuple[Any, Any, Any] | None, texts: _PartTexts, key: str) -> tuple[Any, Any, Any] | None:
    """The part without what the three states share, when that is less to normalize than the whole part
    once (the whole initial and expected parts come from the memo; the cut ones never do): when the task's
    changes reach most of the part, the part is diffed whole."""
    whole = texts.text("actual", key)
    if parts is None or whole is None:
        return parts
    kept = sum(len(part_text(part) or b"") for part in parts)
    return parts if kept < len(whole) else None


def _diff(initial: Any, expected: Any, actual: Any, rules: Rules, initial_strings: frozenset[str],
          left_out: frozenset[str] | _LeftOut, texts: _PartTexts | None = None, cut: frozenset[str] = frozenset()
          ) -> StateDiffResult:
    """The diff of the three states as given; `cut` names the top-level parts given without what the three
    share (`shared_left_out`), whose content is not the part's memo key."""
    (i_tree, i_flat), (e_tree, e_flat), (a_tree, a_flat) = (
        _view(state, rules, texts, which, cut) for state, which in ((initial, "initial"), (expected, "expected"),
                                                                  (actual, "actual")))
    ctx = IdContext(rules, initial_strings)
    a_flat, renamed = _align_generated_ids(i_tree, e_tree, a_tree, e_flat, a_flat, ctx, left_out)
    views = _Views(i_flat, e_flat, a_flat)
    required, removal_roots = _required_units(views, rules)
    unwanted = _unwanted_units(views, rules, removal_roots)
    return _result(views, rules, required, unwanted, renamed)


@lru_cache(maxsize=32)
def _rules(config: StateDiffConfig) -> Rules:
    return Rules.from_config(config)


def _view(state: Any, rules: Rules, texts: _PartTexts | None, which: str,
          cut: frozenset[str] = frozenset()) -> tuple[Any, Flat]:
    """A state normalized and flattened; with `texts`, part by part through the memo (`parts.py`): the
    initial and expected parts repeat across episodes, so they are normalized once. The same tree and
    paths as `normalize` and `flatten` of the whole state."""
    if texts is None or not isinstance(state, dict):
        whole = normalize(state, rules)
        return whole, flatten(whole)
    tree: dict[Any, Any] = {}
    flat = Flat(nodes={(): tree}, leaves={})
    for key, value in state.items():
        seg = ("k", key)
        if rules.is_volatile_key(key) or rules.is_volatile_path((seg,)):
            continue
        text = None if key in cut else texts.text(which, key)
        part: PartView = SHARED.view(key, value, text, rules, remember=which != "actual")
        tree[seg] = part.tree
        flat.nodes.update(part.flat.nodes)
        flat.leaves.update(part.flat.leaves)
    return tree, flat


def _align_generated_ids(
    i_tree: Any, e_tree: Any, a_tree: Any, e_flat: Flat, a_flat: Flat, ctx: IdContext, left_out: frozenset[str] | _LeftOut
) -> tuple[Flat, dict[str, str]]:
    """Rename the actual state's generated ids to the expected ones they stand for (`ids.py`):
    first new records paired by content, then new id values left at the same paths."""
    records = pair_new_records(i_tree, e_tree, a_tree, ctx)
    if records:
        records = _checked(make_injective(records, tree_strings(a_tree)), left_out)
        a_tree = rename_ids(a_tree, records)
        a_flat = flatten(a_tree)
    values = align_new_values(e_flat.leaves, a_flat.leaves, ctx)
    if values:
        values = _checked(make_injective(values, tree_strings(a_tree)), left_out)
        a_flat = flatten(rename_ids(a_tree, values))
    return a_flat, compose(records, values)


def _checked(id_map: dict[str, str], left_out: frozenset[str] | _LeftOut) -> dict[str, str]:
    """The rename map, unless it involves a string of a left-out part (a duplicate record's `id#2` key
    is not among the raw strings, so any `#` counts as involved)."""
    if left_out and any(s in left_out or "#" in s for pair in id_map.items() for s in pair):
        raise _LeftOutRenamed
    return id_map


def _first_absent(path: Path, *present: dict[Path, Any]) -> Path:
    """The shallowest prefix of `path` that none of the given states has: where a subtree appeared
    or disappeared, so that deleting a record counts once, not once per field."""
    for n in range(1, len(path) + 1):
        prefix = path[:n]
        if not any(prefix in nodes for nodes in present):
            return prefix
    return path


def _required_units(views: _Views, rules: Rules) -> tuple[dict[Path, Kind], set[Path]]:
    """T: exact comparison (no fuzzy text), so that a small required edit is never mistaken for none."""
    required: dict[Path, Kind] = {}
    removal_roots: set[Path] = set()
    for path in views.initial.leaves.keys() | views.expected.leaves.keys():
        before = views.initial.leaves.get(path, ABSENT)
        after = views.expected.leaves.get(path, ABSENT)
        if match(after, before, rules, fuzzy=False) is not None:
            continue
        if after is ABSENT:
            root = _first_absent(path, views.expected.nodes)
            removed = root not in views.expected.nodes
            if removed:
                removal_roots.add(root)
            required[root] = "removed" if removed else "changed"
        else:
            required[path] = "added" if before is ABSENT else "changed"
    return required, removal_roots


def _unwanted_units(views: _Views, rules: Rules, removal_roots: set[Path]) -> dict[Path, Kind]:
    """M_b: leaves the task leaves alone but the agent changed, collapsed like T; anything inside a
    record the task deletes is already judged by that deletion."""
    unwanted: dict[Path, Kind] = {}
    leaves = views.initial.leaves.keys() | views.expected.leaves.keys() | views.actual.leaves.keys()
    for path in leaves:
        before = views.initial.leaves.get(path, ABSENT)
        if match(views.expected.leaves.get(path, ABSENT), before, rules, fuzzy=False) is None:
            continue
        now = views.actual.leaves.get(path, ABSENT)
        if match(before, now, rules) is not None:
            continue
        unit, kind = _unwanted_unit(path, before, now, views)
        if not any(unit[:n] in removal_roots for n in range(1, len(unit) + 1)):
            unwanted[unit] = kind
    return unwanted


def _unwanted_unit(path: Path, before: Any, now: Any, views: _Views) -> tuple[Path, Kind]:
    if now is ABSENT:
        root = _first_absent(path, views.actual.nodes)
        return root, "removed" if root not in views.actual.nodes else "changed"
    if before is ABSENT:
        root = _first_absent(path, views.initial.nodes, views.expected.nodes)
        return root, "added" if root not in views.initial.nodes else "changed"
    return path, "changed"


def _judge(path: Path, kind: Kind, views: _Views, rules: Rules) -> Literal["exact", "fuzzy"] | None:
    """Whether the actual state made this required change."""
    if kind == "removed":
        return "exact" if path not in views.actual.nodes else None
    expected = views.expected.leaves.get(path, ABSENT)
    actual = views.actual.leaves.get(path, ABSENT)
    how = match(expected, actual, rules)
    if how == "fuzzy" and not nearer_to_expected(actual, expected, views.initial.leaves.get(path, ABSENT)):
        return None
    return how


def _change(path: Path, kind: Kind, views: _Views, fuzzy: bool = False) -> Change:
    return Change(
        path=render(path),
        kind=kind,
        before=to_plain(views.initial.nodes.get(path, ABSENT)),
        expected=to_plain(views.expected.nodes.get(path, ABSENT)),
        actual=to_plain(views.actual.nodes.get(path, ABSENT)),
        fuzzy=fuzzy,
    )


def _result(
    views: _Views,
    rules: Rules,
    required: dict[Path, Kind],
    unwanted: dict[Path, Kind],
    id_map: dict[str, str],
) -> StateDiffResult:
    matched: list[Change] = []
    missed: list[Change] = []
    all_required: list[Change] = []
    for path, kind in sorted(required.items(), key=lambda item: render(item[0])):
        how = _judge(path, kind, views, rules)
        change = _change(path, kind, views, fuzzy=how == "fuzzy")
        all_required.append(change)
        (matched if how else missed).append(change)
    bad = [_change(p, k, views) for p, k in sorted(unwanted.items(), key=lambda item: render(item[0]))]
    t, m, m_b = len(all_required), len(matched), len(bad)
    return StateDiffResult(
        T=t,
        M=m,
        M_b=m_b,
        R_c=m / t if t else 1.0,
        R_b=m_b / max(t, 1),
        success=m == t and m_b == 0,
        required=all_required,
        matched=matched,
        missed=missed,
        unwanted=bad,
        renamed_ids=id_map,
    )


def config_for_apps(apps: list[Any], base: StateDiffConfig = _DEFAULT_CONFIG) -> StateDiffConfig:
    """`base` plus every app's declared `volatile_paths` (clock-stamped fields), prefixed by the app name."""
    extra = tuple(f"{app.name}.{path}" for app in apps for path in getattr(app, "volatile_paths", ()))
    return base.model_copy(update={"volatile_paths": base.volatile_paths + extra})


@cache
def sandbox_diff_config() -> StateDiffConfig:
    """The state-diff rules for our sandbox: defaults plus every stateful app's declared volatile paths."""
    from cworld.sandbox.catalog import stateful_apps

    return config_for_apps(stateful_apps())


@cache
def _initial_snapshot(seed: int) -> str:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.session import SandboxSession

    return json.dumps(SandboxSession(seed, all_apps()).snapshot())


def sandbox_initial_state(seed: int) -> dict[str, Any]:
    """The seeded start state of a whole sandbox session (cached per seed; a fresh copy each call)."""
    return json.loads(_initial_snapshot(seed))


@lru_cache(maxsize=64)
def sandbox_baseline(seed: int) -> Baseline:
    """The seeded start state as a diff baseline, cached per seed: read it, never modify it."""
    return Baseline.of(sandbox_initial_state(seed))


def sandbox_state_diff(seed: int, ground_truth: dict[str, Any], end_state: dict[str, Any]) -> StateDiffResult:
    """An episode's end state (a synthesized one's change set overlaid) against the task's ground truth,
    from the sandbox's initial state for the seed: the one diff of the run summary, the gym reward and
    the score. Keys starting with `_` are bookkeeping (`_clock`), never state, except `_world`: the changes
    to other servers' worlds (`world.py`), graded with the apps. An app the ground truth or the end state
    leaves out (a world built server by server holds only those it reached) stands as it started."""
    baseline = sandbox_baseline(seed)
    expected = {**baseline.state, **{k: v for k, v in ground_truth.items() if not k.startswith("_")}}
    actual = {**baseline.state, **actual_state(baseline.state, end_state)}
    initial_worlds, expected_worlds, actual_worlds = world_parts(ground_truth, end_state)
    if initial_worlds:
        baseline = baseline.extended(initial_worlds)
        expected, actual = {**expected, **expected_worlds}, {**actual, **actual_worlds}
    return diff_from(baseline, expected, actual, config=sandbox_diff_config())
