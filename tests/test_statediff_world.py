"""Changes to other servers' worlds are graded with the sandbox apps (the `_world` delta)."""

from __future__ import annotations

import copy

from cworld.sandbox.statediff import sandbox_initial_state, sandbox_state_diff
from cworld.sandbox.statediff.world import WORLD_KEY, world_delta, world_trees

BEFORE = {
    "contacts": {"c_1": {"name": "Ada", "stage": "lead"}, "c_2": {"name": "Grace", "stage": "lead"}},
    "notes": {},
    "settings": ["a", "b"],
}


def _after(**changes: dict) -> dict:
    state = copy.deepcopy(BEFORE)
    for collection, records in changes.items():
        for key, record in records.items():
            if record is None:
                state[collection].pop(key, None)
            else:
                state[collection][key] = record
    return state


def _end(after: dict) -> dict:
    return {WORLD_KEY: {"crm": world_delta(BEFORE, after, after.keys())}}


def test_a_delta_holds_only_the_records_that_changed():
    after = _after(contacts={"c_1": {"name": "Ada", "stage": "won"}}, notes={"n_1": {"text": "call back"}})
    delta = world_delta(BEFORE, after, after.keys())
    assert delta["contacts"] == {"records": True, "before": {"c_1": BEFORE["contacts"]["c_1"]},
                                 "after": {"c_1": {"name": "Ada", "stage": "won"}}}
    assert delta["notes"] == {"records": True, "before": {}, "after": {"n_1": {"text": "call back"}}}
    assert "settings" not in delta


def test_trees_put_untouched_records_back_as_they_were():
    gold = world_delta(BEFORE, _after(contacts={"c_1": {"name": "Ada", "stage": "won"}}), BEFORE.keys())
    done = world_delta(BEFORE, _after(contacts={"c_2": None}), BEFORE.keys())
    initial, expected, actual = world_trees({"crm": gold}, {"crm": done})
    assert initial["world:crm"]["contacts"] == BEFORE["contacts"]
    assert expected["world:crm"]["contacts"]["c_2"] == BEFORE["contacts"]["c_2"]
    assert actual["world:crm"]["contacts"] == {"c_1": BEFORE["contacts"]["c_1"]}


def test_the_world_part_is_graded_with_the_sandbox():
    seed = 0
    sandbox = sandbox_initial_state(seed)
    gold = {**sandbox, **_end(_after(contacts={"c_1": {"name": "Ada", "stage": "won"}},
                                       notes={"n_1": {"text": "call back"}}))}
    same = sandbox_state_diff(seed, gold, {**sandbox, **_end(_after(
        contacts={"c_1": {"name": "Ada", "stage": "won"}}, notes={"n_9": {"text": "call back"}}))})
    assert same.success and same.R_c == 1.0
    nothing = sandbox_state_diff(seed, gold, sandbox)
    assert not nothing.success and nothing.R_c == 0.0
    half = sandbox_state_diff(seed, gold, {**sandbox, **_end(_after(contacts={"c_1": {"name": "Ada", "stage": "won"}}))})
    assert not half.success and 0.0 < half.R_c < 1.0
    extra = sandbox_state_diff(seed, gold, {**sandbox, **_end(_after(
        contacts={"c_1": {"name": "Ada", "stage": "won"}, "c_2": None}, notes={"n_1": {"text": "call back"}}))})
    assert not extra.success and extra.R_b > 0


def test_a_ground_truth_without_sandbox_apps_expects_them_unchanged():
    seed = 0
    gold = _end(_after(contacts={"c_1": {"name": "Ada", "stage": "won"}}))
    result = sandbox_state_diff(seed, gold, {**sandbox_initial_state(seed), **gold})
    assert result.success and result.R_b == 0
