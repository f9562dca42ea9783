"""The verifiers environment (cworld[verifiers]): verifiers' own `vf-eval` runs cworld tasks against an
in-process OpenAI-compatible stand-in and writes rewards; the tools are offered with their schemas; the
trajectories land in the workspace's run folder; `load_environment` gives a `vf.Env`; bad settings are one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import FIXTURE

pytest.importorskip("verifiers.v1")

import verifiers.v1 as vf  # noqa: E402

from cworld.errors import UsageError  # noqa: E402
from cworld.harness.verifiers_env import CworldTaskset, load_environment  # noqa: E402
from cworld.llm.strict_server import StrictProvider  # noqa: E402
from cworld.rollout import read_trajectories  # noqa: E402


def call_then_answer(body: dict[str, Any]) -> dict[str, Any] | str:
    """Per request: call the first offered tool once, then answer in plain text (no tool call: the final answer)."""
    if not any(m["role"] == "tool" for m in body["messages"]):
        first = body["tools"][0]["function"]["name"]
        return {"tool_calls": [{"name": first, "arguments": {"query": "audit"}}]}
    return "All done."


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from verifiers.v1.cli.eval.main import main as vf_eval

    tmp = tmp_path_factory.mktemp("verifiers")
    tasks = tmp / "tasks.jsonl"
    tasks.write_text("".join(FIXTURE.read_text().splitlines(keepends=True)[:3]))
    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_WORKSPACE", str(tmp / "ws"))
    mp.setenv("STAND_IN_KEY", "not-a-secret")
    try:
        with StrictProvider() as provider:
            provider.script([call_then_answer] * 6)
            vf_eval(["cworld-env", "--env.taskset.tasks", str(tasks), "--env.taskset.policy", "stress",
                     "--model", "stand-in", "--client.base-url", provider.url, "--client.api-key-var", "STAND_IN_KEY",
                     "--output-dir", str(tmp / "out"), "--num-rollouts", "1", "--no-rich", "--no-push"])
    finally:
        mp.undo()
    [traces] = (tmp / "out").glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert all(e["ok"] and not e["errors"] for e in episodes), [e["errors"] for e in episodes]
    return {"tmp": tmp, "provider": provider, "traces": [t for e in episodes for t in e["traces"]]}


def test_vf_eval_writes_cworlds_reward_and_metrics_for_every_task(evaluated):
    traces = evaluated["traces"]
    assert len(traces) == 3
    for trace in traces:
        assert not trace.get("errors"), trace.get("errors")
        outcome = trace["info"]["cworld"]
        assert trace["rewards"]["reward"]["score"] == outcome["reward"] and outcome["status"] == "completed"
        assert trace["metrics"]["tool_calls"] == 1.0 and "overall" in trace["metrics"]
        assert trace["metrics"]["reward_known"] == float(outcome["reward_known"])


def test_the_trajectories_go_to_the_workspace_run_folder(evaluated):
    runs = list((evaluated["tmp"] / "ws" / "runs").glob("verifiers-*"))
    assert len(runs) == 1
    stored = list(read_trajectories(runs[0]))
    assert {t.episode_id for t in stored} == {t["info"]["cworld"]["episode_id"] for t in evaluated["traces"]}
    assert {(t.agent, t.policy, t.status) for t in stored} == {("verifiers:stand-in", "stress", "completed")}
    assert all([s.kind for s in t.steps if s.kind != "user"] == ["tool", "final"] for t in stored)
    assert all(t.final_answer == "All done." for t in stored)


def test_the_model_is_offered_the_episode_tools_with_their_schemas(evaluated):
    first = evaluated["provider"].requests[0]
    names = [t["function"]["name"] for t in first["tools"]]
    assert names[-2:] == ["search_tools", "submit"] and len(names) > 2
    assert all(t["function"]["parameters"]["type"] == "object" for t in first["tools"])
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    follow_up = next(r for r in evaluated["provider"].requests if any(m["role"] == "tool" for m in r["messages"]))
    assert [m["role"] for m in follow_up["messages"]][:4] == ["system", "user", "assistant", "tool"]


def test_load_environment_returns_a_verifiers_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    env = load_environment(tasks=str(FIXTURE), mode="live", policy="none", seed=3, out=str(tmp_path / "run"))
    assert isinstance(env, vf.Env) and isinstance(env.taskset, CworldTaskset)
    loaded = list(env.taskset)
    assert len(loaded) == len(FIXTURE.read_text().splitlines())
    assert {t.data.seed for t in loaded} == {3} and {t.data.door["mode"] for t in loaded} == {"live"}
    assert all("ground_truth" not in t.data.model_dump_json() for t in loaded)


@pytest.mark.parametrize(("kwargs", "message"), [({"mode": "dream"}, "mode must be one of"),
                                                 ({"access": "nope"}, "access"),
                                                 ({"max_turns": 0}, "max_turns must be at least 1")])
def test_bad_settings_are_one_line(tmp_path, monkeypatch, kwargs, message):
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    with pytest.raises(UsageError, match=message):
        load_environment(tasks=str(FIXTURE), **kwargs)


def test_tasks_file_path_is_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    env = load_environment(tasks=str(empty))
    with pytest.raises(UsageError, match="holds no tasks"):
        list(env.taskset)
    assert Path(empty).exists()
