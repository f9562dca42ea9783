"""A model's turn has a budget (issue 37): every role's request carries an output cap and a call timeout,
whether the model was configured by environment variable or config.yaml; a reply cut at its cap is handled
(a cut tool call is an invalid call the agent sees, cut text is a turn marked truncated, the episode goes on);
and an episode that times out keeps its steps and every model call it made, and its summary says why."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from rollout_helpers import busy_actor, scratch_context

from cworld.agents import make_agent
from cworld.cli.main import cli, main
from cworld.config import DEFAULT_BUDGETS, ModelConfig, ModelsConfig, load_models
from cworld.data_model import Task, read_jsonl
from cworld.errors import ConfigError
from cworld.llm import Gateway, ModelUnavailable, RetryPolicy, mock
from cworld.rollout import build_episode, read_trajectories, run_episode
from cworld.rollout.summary import explanations, summarize

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = {t.id: t for t in read_jsonl(FIXTURE, Task)}
FORWARD = "sbx-mail-forward-audit"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("CWORLD_WORKSPACE", str(ws))
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("CWORLD_AGENT_MODEL", "CWORLD_ENGINE_MODEL", "CWORLD_SYNTH_MODEL", "CWORLD_JUDGE_MODELS",
                 "CWORLD_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    return ws


def run_args(out: Path, model: str, *extra: str) -> list[str]:
    return ["run", "--tasks", str(FIXTURE), "--limit", "1", "--agent", model, "--style", "react", "--access", "full",
            "--policy", "none", "--no-progress", "--out", str(out), *extra]


def test_a_model_set_only_by_environment_variable_sends_the_agent_budget(workspace: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CWORLD_AGENT_MODEL", "mock/env-agent")
    with mock.script("env-agent", busy_actor(calls=2)) as script:
        result = CliRunner().invoke(cli, run_args(tmp_path / "run", "mock/env-agent"))
    assert result.exit_code == 0, result.output
    assert len(script.calls) == 3
    assert {call.params.get("max_tokens") for call in script.calls} == {DEFAULT_BUDGETS["agent"].max_tokens}
    (trajectory,) = read_trajectories(tmp_path / "run")
    assert [c.max_tokens for c in trajectory.model_calls] == [1024, 1024, 1024]
    assert [c.turn for c in trajectory.model_calls] == [1, 2, 3]


def test_config_budgets_and_a_model_entry_set_the_cap(workspace: Path, tmp_path: Path) -> None:
    (workspace / "config.yaml").write_text(yaml.safe_dump({"budgets": {"agent": {"max_tokens": 77}}}))
    with mock.script("capped", busy_actor(calls=1)) as script:
        result = CliRunner().invoke(cli, run_args(tmp_path / "run", "mock/capped"))
    assert result.exit_code == 0, result.output
    assert {call.params.get("max_tokens") for call in script.calls} == {77}
    models = load_models(workspace)
    assert models.budgets["agent"].timeout_s == DEFAULT_BUDGETS["agent"].timeout_s  # the other key stays default
    own = ModelConfig(model="mock/x", max_tokens=33, timeout_s=9)
    assert Gateway(models, cache_path=None).budgeted("agent", own).max_tokens == 33


@pytest.mark.parametrize("budgets, says", [
    ({"agent": {"max_tokens": 0}}, "budgets.agent.max_tokens: Input should be greater than 0"),
    ({"agent": {"max_tokens": 10, "speed": 3}}, "must be a mapping of max_tokens and/or timeout_s"),
    ({"actor": {"max_tokens": 10}}, "unknown role 'actor'"),
    ("lots", "must map a role"),
])
def test_a_wrong_budget_is_one_clear_config_error(workspace: Path, budgets: Any, says: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (workspace / "config.yaml").write_text(yaml.safe_dump({"budgets": budgets}))
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_models(workspace)
    with pytest.raises(SystemExit) as exited:
        main(["doctor", "--no-ping"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and err.startswith("error: "), err
    assert str(workspace / "config.yaml") in err


def test_doctor_shows_each_roles_budget(workspace: Path) -> None:
    (workspace / "config.yaml").write_text(yaml.safe_dump({"budgets": {"judge": {"timeout_s": 45}}}))
    result = CliRunner().invoke(cli, ["doctor", "--no-ping", "--json"])
    assert result.exit_code == 0, result.output
    budgets = json.loads(result.output)["llm_budgets"]
    assert budgets["agent"] == {"max_tokens": 1024, "timeout_s": 120.0, "source": "default"}
    assert budgets["judge"] == {"max_tokens": 1024, "timeout_s": 45.0, "source": "config budgets"}
    table = CliRunner().invoke(cli, ["doctor", "--no-ping"])
    assert "budget agent" in table.output and "1,024 output tokens, 120 s per call" in table.output


async def test_a_slow_reply_times_out_at_the_calls_budget_and_is_tried_once_more(workspace: Path) -> None:
    gateway = Gateway(ModelsConfig(), cache_path=None, retry=RetryPolicy.immediate(attempts=5))
    slow = ModelConfig(model="mock/slow", timeout_s=0.2)
    with (mock.script("slow", ["never", "never", "never"], delay_s=5.0) as script,
          pytest.raises(ModelUnavailable, match="no reply within the call's timeout after 2 attempt")):
        await gateway.complete("agent", [{"role": "user", "content": "hi"}], model=slow)
    assert len(script.calls) == 2  # a timeout is retried once, not five times


def cut_call(messages: list[Any], tools: list[Any] | None) -> Any:
    """First a tool call whose arguments were cut mid-JSON, then (seeing the invalid_args answer) a real
    call, then an answer."""
    told = [m for m in messages if (m.get("role") if isinstance(m, dict) else m.role) == "tool"]
    if not told:
        return {"text": "", "tool_calls": [{"name": "mail__search_messages", "arguments": '{"query": "Secur'}],
                "finish_reason": "length"}
    if len(told) == 1:
        return {"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": "Security audit"}}]}
    return "Found it."


def cut_text(messages: list[Any], tools: list[Any] | None) -> Any:
    """First a long text cut at the budget, then (told it was cut) a tool call, then an answer."""
    said = " ".join(str(m.get("content") if isinstance(m, dict) else m.content) for m in messages)
    if "was cut at its output budget" not in said:
        return {"text": "Let me think about this at length " * 20, "finish_reason": "length"}
    if not any((m.get("role") if isinstance(m, dict) else m.role) == "tool" for m in messages):
        return {"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": "Security audit"}}]}
    return "Found it."


async def _episode(tmp_path: Path, name: str, responder: Any, style: str = "react") -> Any:
    ctx = scratch_context(tmp_path / "ws")
    gateway = Gateway(cache_path=None)
    agent = make_agent(f"mock/{name}", access="full", style=style, gateway=gateway)
    episode = build_episode(TASKS[FORWARD], agent=agent.name, access="full", mode="live", policy="none", seed=0,
                            ctx=ctx)
    with mock.script(name, responder):
        trajectory = await run_episode(agent, episode)
    gateway.close()
    return trajectory, agent


async def test_a_tool_call_cut_at_the_budget_is_an_invalid_call_the_agent_sees(tmp_path: Path) -> None:
    trajectory, _ = await _episode(tmp_path, "cut-call", cut_call)
    first, second = trajectory.tool_steps[:2]
    assert first.truncated and first.observation.error_class == "invalid_args"
    assert "cut at its output budget (1024 tokens)" in first.observation.text
    assert not second.truncated and not second.observation.is_error
    assert trajectory.status == "completed" and trajectory.final_answer == "Found it."
    assert [c.finish_reason for c in trajectory.model_calls][0] == "length"


async def test_text_cut_at_the_budget_is_a_truncated_turn_and_the_episode_goes_on(tmp_path: Path) -> None:
    trajectory, agent = await _episode(tmp_path, "cut-text", cut_text)
    kinds = [(s.kind, s.truncated) for s in trajectory.steps]
    assert kinds[:2] == [("message", True), ("tool", False)], kinds
    assert trajectory.status == "completed" and trajectory.final_answer == "Found it."
    assert any("was cut at its output budget of 1024 tokens" in str(m.get("content")) for m in agent.messages)
    assert any(e["event"] == "cut" for e in trajectory.planner_events)


def test_a_timed_out_episode_keeps_its_steps_and_model_calls_and_says_why(workspace: Path, tmp_path: Path) -> None:
    """Each reply takes 0.4 s and the episode has 1.5 s: some steps are made, the reply in flight is cut off."""
    out = tmp_path / "run"
    with mock.script("sluggish", busy_actor(calls=100), delay_s=0.4):
        result = CliRunner().invoke(cli, run_args(out, "mock/sluggish", "--timeout", "1.5"))
    assert result.exit_code == 0, result.output
    (trajectory,) = read_trajectories(out)
    assert trajectory.status == "timeout"
    assert len(trajectory.tool_steps) >= 2
    calls = trajectory.model_calls
    assert [c.outcome for c in calls] == ["ok"] * (len(calls) - 1) + ["cancelled"]
    assert len(calls) == len(trajectory.tool_steps) + 1 and calls[-1].seconds > 0.1
    assert trajectory.usage["agent"].calls == len(calls)  # the reply cut off in flight was asked for too
    assert "timeout (1): " in result.output and "agent model: " in result.output
    assert "the last was cut off in flight after" in result.output
    assert "agent model: " in result.output and "latency p50 0.4 s" in result.output


def test_the_summary_names_each_status_and_the_agent_latency(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with mock.script("quick", busy_actor(calls=1)):
        result = CliRunner().invoke(cli, run_args(out, "mock/quick", "--json"))
    row = json.loads(result.stdout)["rows"][0]  # stdout: a logged warning goes to stderr
    assert row["agent_latency_s"]["max"] >= row["agent_latency_s"]["p50"] >= 0
    (trajectory,) = read_trajectories(out)
    limited = trajectory.model_copy(update={"status": "turn_limit"})
    lines = explanations(summarize([limited], check_state=False))
    assert any(line.startswith("  turn_limit (1): the turn limit was reached after") for line in lines), lines


def test_a_model_calls_timeout_stays_below_the_episodes() -> None:
    """Inside an episode of 30 s a call gets at most half of what is left (never under 5 s); outside, its budget."""
    from cworld.config import ModelConfig
    from cworld.llm import Gateway
    from cworld.llm.calls import MIN_CALL_S, within

    gateway = Gateway(cache_path=None)
    assert gateway.budgeted("agent", ModelConfig(model="mock/echo")).timeout_s == 120.0
    with within(30):
        assert gateway.budgeted("agent", ModelConfig(model="mock/echo")).timeout_s <= 15.0
    with within(1):
        assert gateway.budgeted("agent", ModelConfig(model="mock/echo")).timeout_s == MIN_CALL_S


def _planner_asked(messages: list[Any]) -> bool:
    first = messages[0]
    return str(first.get("content") if isinstance(first, dict) else first.content).startswith("You are the planner")


def planner_runs_on(plans: bool) -> Any:
    """A planner-actor model whose progress updates (and, unless `plans`, its plan too) run past the output
    budget every time, as a small model's grammar-held JSON did; its actor calls one search, then answers."""
    plan = json.dumps({"subgoals": [{"id": "g1", "description": "find the audit mail"}]})

    def respond(messages: list[Any], tools: list[Any] | None) -> Any:
        if _planner_asked(messages):
            asked_for_plan = "subgoals" in str(messages[-1].get("content") if isinstance(messages[-1], dict)
                                               else messages[-1].content) and len(messages) == 2
            if plans and asked_for_plan:
                return plan
            return {"text": '{"complete": ["g1", "g1", "g1", "g1"', "finish_reason": "length"}
        if not any((m.get("role") if isinstance(m, dict) else m.role) == "tool" for m in messages):
            return {"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": "Security audit"}}]}
        return "Found it."

    return respond


async def test_a_progress_update_cut_at_every_attempt_leaves_the_plan_as_it_was_and_the_episode_goes_on(
        tmp_path: Path) -> None:
    trajectory, _ = await _episode(tmp_path, "runs-on-update", planner_runs_on(plans=True), style="planner")
    assert trajectory.status != "agent_error" and len(trajectory.tool_steps) == 1
    update = next(e for e in trajectory.planner_events if e["event"] == "update")
    assert update["cut"] and update["status"] == {"g1": "pending"}
    assert "cut at its output budget" in update["error"]


async def test_a_plan_cut_at_every_attempt_leaves_the_episode_to_the_actor(tmp_path: Path) -> None:
    trajectory, _ = await _episode(tmp_path, "runs-on-plan", planner_runs_on(plans=False), style="planner")
    assert trajectory.status == "completed" and trajectory.final_answer == "Found it."
    assert trajectory.planner_events[0]["event"] == "plan" and trajectory.planner_events[0]["cut"]
    assert [e["event"] for e in trajectory.planner_events[1:]] == []  # no planner after: the actor alone


def test_the_planners_schemas_bound_every_list_and_text() -> None:
    """What a grammar-holding provider (llama.cpp) is sent: no list or text a model can repeat without end."""
    from cworld.agents.planner import ProgressUpdate, SubGoalPlan

    update = ProgressUpdate.model_json_schema()["properties"]
    assert update["complete"]["maxItems"] and update["reopen"]["maxItems"] and update["feedback"]["maxLength"]
    plan = SubGoalPlan.model_json_schema()
    goal = plan["$defs"]["PlannedSubGoal"]["properties"]
    assert plan["properties"]["subgoals"]["maxItems"] == 12
    assert goal["id"]["maxLength"] and goal["description"]["maxLength"] and goal["depends_on"]["maxItems"]
