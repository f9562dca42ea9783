"""Policy files: the shipped ones load, bad ones fail with one line naming the file and the field."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cworld.controller import FAULT_TYPES, load_policy, policy_names
from cworld.controller.policy import load_policy_file, sample_param
from cworld.environment import Environment, init_environment
from cworld.errors import ConfigError, ContentError

ENV = Environment.resolve()


def test_shipped_policies_load_and_grow_in_adversity() -> None:
    assert policy_names(ENV) == ["default", "light", "none", "stress"]
    policies = {n: load_policy(ENV, n) for n in policy_names(ENV)}
    assert policies["none"].is_empty and not policies["light"].is_empty
    assert set(policies["default"].faults) == set(FAULT_TYPES) == set(policies["stress"].faults)
    assert set(policies["light"].faults) < set(FAULT_TYPES)


def test_unknown_policy_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown fault policy 'harsh'; choose one of: default, light, none, stress"):
        load_policy(ENV, "harsh")


@pytest.mark.parametrize(("body", "error"), [
    ("faults: {meteor: {budget: 1}}", r"unknown fault kind 'meteor'"),
    ("faults: {timeout: {budget: 1, params: {delay: 3}}}", r"timeout: unknown parameter 'delay'"),
    ("faults: {timeout: {budget: 1, params: {delay_s: [-1, 5]}}}", r"timeout: bad params"),
    ("faults: {rate_limit: {params: {scope: {choice: [server, planet]}}}}", r"rate_limit: bad params"),
    ("faults: {timeout: {budget: [3, 1]}}", r"faults\.timeout\.budget"),
    ("faults: {timeout: {turns: [9, 2]}}", r"faults\.timeout\.turns"),
    ("faults: {timeout: {budget: 1, when: later}}", r"faults\.timeout\.when"),
    ("faults: [timeout", r"not valid YAML"),
])
def test_bad_policy_files_fail_with_the_file_and_field(tmp_path: Path, body: str, error: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(ContentError, match=error) as info:
        load_policy_file(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_an_environment_can_add_its_own_policy(tmp_path: Path) -> None:
    env = Environment(init_environment(tmp_path / "env"))
    (env.controller / "policies" / "flaky-mail.yaml").write_text(
        "faults:\n  network_error: {budget: 3, turns: [1, 5], tools: ['mail/*']}\n")
    policy = load_policy(env, "flaky-mail")
    assert policy.name == "flaky-mail" and policy.faults["network_error"].tools == ["mail/*"]


def test_parameter_specs_sample_within_their_ranges() -> None:
    rng = random.Random(0)
    ints = {sample_param([2, 4], rng) for _ in range(200)}
    floats = [sample_param([0.5, 1.5], rng) for _ in range(200)]
    choices = {sample_param({"choice": ["a", "b"]}, rng) for _ in range(50)}
    assert ints == {2, 3, 4} and all(0.5 <= f <= 1.5 for f in floats) and choices == {"a", "b"}
    assert sample_param("fixed", rng) == "fixed" and sample_param([1, 2, 3], rng) == [1, 2, 3]
