"""The executor choice without a cluster: config checks, the missing-extra line, the fidelity pass-through."""

from __future__ import annotations

import sys

import pytest

from cworld.errors import MissingDependency, UsageError
from cworld.fidelity import ExperimentConfig
from cworld.rollout import RunConfig
from cworld.rollout.executors.ray import import_ray, probe


def test_without_the_extra_ray_is_one_line_on_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    with pytest.raises(MissingDependency, match=r"pip install 'cworld\[ray\]'"):
        import_ray()


def test_unknown_executor_and_a_stray_ray_address_are_usage_errors():
    with pytest.raises(UsageError, match="unknown executor"):
        RunConfig(agent="scripted:oracle", executor="spark")
    with pytest.raises(UsageError, match="--ray-address needs --executor ray"):
        RunConfig(agent="scripted:oracle", ray_address="auto")


def test_a_malformed_address_is_a_usage_error():
    with pytest.raises(UsageError, match="not HOST:PORT"):
        probe("nowhere")


def test_the_fidelity_experiment_passes_the_executor_to_both_runs():
    config = ExperimentConfig(executor="ray", ray_address="10.0.0.5:6379")
    for mode in ("live", "synthesized"):
        run = config.run_config("scripted:oracle", mode)
        assert (run.executor, run.ray_address) == ("ray", "10.0.0.5:6379")
