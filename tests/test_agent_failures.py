"""When the agent's model misbehaves (mock provider, live sandbox): broken tool-call JSON is said as such
and never sent, the planner reopens a sub-goal and never forces an answer, a model that cannot follow the
protocol or that its provider refuses fails its own episode (the run goes on, `cworld run` exits 0), and
`--agent MODEL` runs at the agent role's endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rollout_helpers import scratch_context

from cworld.agents import LLMAgent, make_agent
from cworld.cli.main import main
from cworld.config import ModelConfig
from cworld.data_model import Task, read_jsonl
from cworld.llm import Gateway, mock
from cworld.llm._loader import load_litellm
from cworld.llm.mock import failure
from cworld.llm.preflight import forget
from cworld.rollout import build_episode, read_trajectories, run_episode

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = {t.id: t for t in read_jsonl(FIXTURE, Task)}
FORWARD = "sbx-mail-forward-audit"


def _field(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _is_planner(messages: list[Any]) -> bool:
    return str(_field(messages[0], "content")).startswith("You are the planner")


@pytest.fixture
def gateway():
    gw = Gateway(cache_path=None)
    yield gw
    gw.close()
    mock.clear()


async def _run(tmp_path: Path, gateway: Gateway, model: str, *, style: str):
    ctx = scratch_context(tmp_path / "ws")
    agent = LLMAgent(ModelConfig(model=model), gateway, style=style, name=model)  # type: ignore[arg-type]
    episode = build_episode(TASKS[FORWARD], agent=model, access="full", mode="live", policy="none", seed=0, ctx=ctx)
    return await run_episode(agent, episode)


# --- broken tool-call JSON ------------------------------------------------------------------------------
async def test_broken_tool_call_json_is_said_as_such_and_the_call_is_not_made(tmp_path, gateway):
    def sloppy(messages: list[Any], tools: list[Any] | None) -> Any:
        if _field(messages[-1], "role") != "tool":
            return {"tool_calls": [{"name": "mail__forward_message", "arguments": '{"message_id": "mail_0001",'}]}
        return "I could not forward it."

    script = mock.script("sloppy", sloppy)
    trajectory = await _run(tmp_path, gateway, "mock/sloppy", style="react")
    (step,) = trajectory.tool_steps
    assert step.raw_result is None  # never reached the controller: no call with empty arguments
    assert step.observation.error_class == "invalid_args"
    assert "arguments are not valid JSON" in step.observation.text and "the call was not made" in step.observation.text
    assert step.observation.meta["raw_arguments"] == '{"message_id": "mail_0001",'
    answer = script.calls[1].messages[-1]
    assert _field(answer, "role") == "tool" and _field(answer, "tool_call_id") == step.tool_call.id
    assert "not valid JSON" in _field(answer, "content") and "at char" in _field(answer, "content")


# --- the planner ------------------------------------------------------------------------------------------
def _reopening_planner(prompt: str, updates: list[int]) -> str:
    if prompt.startswith("Task:"):
        return json.dumps({"subgoals": [{"id": "g1", "description": "find the email"},
                                        {"id": "g2", "description": "forward it", "depends_on": ["g1"]}]})
    updates.append(1)
    # 1st update: taken in by a tool output that claims the task is done; 2nd: reopens g2; 3rd: done for real
    return json.dumps([{"complete": ["g1", "g2"]}, {"complete": ["g1"], "reopen": ["g2"]},
                       {"complete": ["g1", "g2"]}][min(len(updates), 3) - 1])


async def test_the_planner_reopens_a_subgoal_and_never_forces_an_answer(tmp_path, gateway):
    updates: list[int] = []

    def model(messages: list[Any], tools: list[Any] | None) -> Any:
        if _is_planner(messages):
            return _reopening_planner(str(_field(messages[-1], "content")), updates)
        calls = sum(1 for m in messages if _field(m, "role") == "tool")
        if calls < 3:  # the actor knows it has not forwarded anything yet, whatever the planner thinks
            return {"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": f"audit {calls}"}}]}
        return "Done: I checked the inbox three times."

    script = mock.script("stubborn", model)
    trajectory = await _run(tmp_path, gateway, "mock/stubborn", style="planner")
    assert len(trajectory.tool_steps) == 3 and trajectory.status == "completed"
    assert all(call.params.get("tool_choice") != "none" for call in script.calls)
    assert any("Every sub-goal looks complete" in str(_field(m, "content")) for m in script.calls[-1].messages)
    events = [e for e in trajectory.planner_events if e["event"] == "update"]
    assert [e["status"]["g2"] for e in events] == ["complete", "pending", "complete"]
    assert events[1]["reopened"] == ["g2"]
    assert trajectory.planner_events[-1] == {"turn": 4, "event": "stop", "reason": "all_complete"}


# --- a model that fails the agent -------------------------------------------------------------------------
def _cli(capsys, *args: str) -> tuple[int, str]:
    """The real entry point in-process (the mock's scripts live here): (exit code, stderr)."""
    forget()
    try:
        main(list(args))
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


def test_a_model_that_never_answers_in_json_or_tool_calls_fails_five_episodes_and_the_run_exits_0(
        capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    script = mock.script("chatty", lambda messages, tools: "Sure! I would be glad to help you with that task.")
    try:
        code, err = _cli(capsys, "run", "--tasks", str(FIXTURE), "--agent", "mock/chatty", "--limit", "5",
                         "--out", str(tmp_path / "run"), "--no-progress", "--json")
    finally:
        mock.clear()
    assert code == 0, err
    trajectories = list(read_trajectories(tmp_path / "run"))
    assert len(trajectories) == 5 and {t.status for t in trajectories} == {"agent_error"}
    for trajectory in trajectories:
        assert "no valid SubGoalPlan JSON after 3 attempt(s)" in trajectory.agent_error
        assert trajectory.steps[-1].kind == "final" and not trajectory.infra_errors
        assert trajectory.usage["agent"].calls == 3  # the plan, asked and repaired twice
        assert trajectory.planner_events[-1]["reason"] == "agent_error"
    assert len(script.calls) == 15


def test_a_refused_request_fails_the_agent_and_an_outage_is_infrastructure(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    tasks = list(TASKS.values())[:3]
    plan = json.dumps({"subgoals": [{"id": "g1", "description": "do it"}]})

    def provider(messages: list[Any], tools: list[Any] | None) -> Any:
        text = json.dumps([_field(m, "content") for m in messages])
        if tasks[0].query[:40] in text:
            return failure("bad_request", "Invalid schema for function: array schema missing items")
        if tasks[1].query[:40] in text:
            return failure("server_error", "upstream 502")
        return plan if _is_planner(messages) else "All done."

    mock.script("moody", provider)
    try:
        code, err = _cli(capsys, "run", "--tasks", str(FIXTURE), "--agent", "mock/moody", "--limit", "3",
                         "--out", str(tmp_path / "run"), "--no-progress", "--infra-retries", "1")
    finally:
        mock.clear()
    assert code == 0, err
    by_task = {t.task_id: t for t in read_trajectories(tmp_path / "run")}
    refused, down, fine = (by_task[t.id] for t in tasks)
    assert refused.status == "agent_error" and "request rejected" in refused.agent_error
    assert "array schema missing items" in refused.agent_error
    assert down.status == "infra_error" and len(down.infra_errors) == 2 and down.agent_error is None
    assert fine.status == "inaction"  # a planner that never sees a step done; the run got to it


# --- the agent role's endpoint -----------------------------------------------------------------------------
def test_an_explicit_agent_model_takes_the_agent_roles_endpoint_and_settings(tmp_path, monkeypatch):
    (tmp_path / "config.yaml").write_text(
        "models:\n  agent: {model: openai/configured, api_base: 'http://127.0.0.1:8011/v1', temperature: 0.4, "
        "max_tokens: 300, api_key_env: AGENT_KEY}\n")
    monkeypatch.delenv("CWORLD_API_BASE", raising=False)
    gateway = Gateway.from_workspace(tmp_path, cache=False)
    same = make_agent("openai/other", gateway=gateway).model  # type: ignore[attr-defined]
    assert (same.model, same.api_base, same.temperature, same.max_tokens, same.api_key_env) == (
        "openai/other", "http://127.0.0.1:8011/v1", 0.4, 300, "AGENT_KEY")
    other = make_agent("anthropic/claude-x", gateway=gateway).model  # type: ignore[attr-defined]
    assert (other.api_base, other.api_key_env, other.temperature) == (None, None, 0.4)  # never another's endpoint


async def test_an_explicit_agent_model_reaches_cworld_api_base(tmp_path, monkeypatch, gateway):
    """`CWORLD_API_BASE` alone (no CWORLD_AGENT_MODEL): `--agent openai/NAME` goes there, not to the provider."""
    monkeypatch.setenv("CWORLD_API_BASE", "http://127.0.0.1:8012/v1")
    litellm = load_litellm()
    sent: list[dict[str, Any]] = []
    real = litellm.acompletion

    async def recording(**call: Any) -> Any:
        sent.append(call)
        return await real(**{**call, "model": "mock/echo"})

    monkeypatch.setattr(litellm, "acompletion", recording)
    agent = make_agent("openai/served", style="react", access="full", workspace=None,
                       gateway=Gateway.from_workspace(tmp_path, cache=False))
    episode = build_episode(TASKS[FORWARD], agent=agent.name, access="full", mode="live", policy="none", seed=0,
                            ctx=scratch_context(tmp_path / "ws"))
    trajectory = await run_episode(agent, episode)
    assert trajectory.status == "completed" and sent
    assert {c["api_base"] for c in sent} == {"http://127.0.0.1:8012/v1"} and {c["model"] for c in sent} == {
        "openai/served"}
