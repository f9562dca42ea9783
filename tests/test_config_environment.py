from __future__ import annotations

import pytest

from cworld.config import load_models
from cworld.environment import CONTENT_FOLDERS, Environment, Workspace, init_environment
from cworld.errors import ConfigError, UsageError
from cworld.seeding import derive_rng


def test_roles_from_env_and_file(tmp_path):
    (tmp_path / "config.yaml").write_text(
        "models:\n  agent: mock/a\n  judge: [mock/j1, {model: mock/j2, max_concurrency: 2}]\n"
    )
    models = load_models(tmp_path, env={"CWORLD_ENGINE_MODEL": "openai/local", "CWORLD_API_BASE": "http://x/v1"})
    assert models.agent and models.agent.model == "mock/a"
    assert [m.model for m in models.judge] == ["mock/j1", "mock/j2"]
    assert models.judge[1].max_concurrency == 2
    assert models.engine and models.engine.api_base == "http://x/v1"
    assert not models.configured("synth")


def test_env_overrides_file(tmp_path):
    (tmp_path / "config.yaml").write_text("models:\n  agent: mock/a\n")
    models = load_models(tmp_path, env={"CWORLD_AGENT_MODEL": "mock/b"})
    assert models.agent and models.agent.model == "mock/b"


def test_bad_config_is_one_clear_error(tmp_path):
    (tmp_path / "config.yaml").write_text("models:\n  planner: mock/a\n")
    with pytest.raises(ConfigError, match="unknown role 'planner'"):
        load_models(tmp_path, env={})
    (tmp_path / "config.yaml").write_text("models: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_models(tmp_path, env={})


def test_default_environment_has_the_content_folders():
    env = Environment.resolve()
    for name in CONTENT_FOLDERS:
        assert (env.root / name).is_dir()


def test_init_copies_and_refuses_to_overwrite(tmp_path):
    target = init_environment(tmp_path / "env")
    assert Environment.resolve(target).root == target
    marker = target / "registry" / "README.md"
    marker.write_text("mine")
    with pytest.raises(UsageError, match="already holds"):
        init_environment(target)
    assert marker.read_text() == "mine"


def test_workspace_chains_latest(tmp_path):
    ws = Workspace.resolve(tmp_path / "ws")
    with pytest.raises(UsageError, match="no run"):
        ws.latest("run")
    run = ws.new_run_dir("r1")
    assert ws.latest("run") == run


def test_rng_streams_are_independent_and_reproducible():
    a = derive_rng(7, "faults").random()
    assert a == derive_rng(7, "faults").random()
    assert a != derive_rng(7, "state").random()
    assert a != derive_rng(8, "faults").random()
