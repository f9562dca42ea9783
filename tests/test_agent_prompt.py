"""What the LLM agent's prompt holds (mock provider, live sandbox): the world's date and the user in the
system prompt, a conversation that stays within the model's history budget over 60 steps, and the user's
own words kept when their turn leaves the view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rollout_helpers import scratch_context

from cworld.agents import LLMAgent
from cworld.agents.history import DEFAULT_TOKENS, MAX_DEFAULT_TOKENS, NOTE_HEAD, History, history_budget
from cworld.config import ModelConfig
from cworld.data_model import Task, read_jsonl
from cworld.llm import Gateway, mock
from cworld.llm.tokens import count_tokens
from cworld.rollout import build_episode, run_episode
from cworld.sandbox.framework.session import seeded_start
from cworld.sandbox.framework.world import cast

TASKS = {t.id: t for t in read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)}
FORWARD = "sbx-mail-forward-audit"


def _content(message: Any) -> str:
    return str(message.get("content") if isinstance(message, dict) else getattr(message, "content", ""))


@pytest.fixture
def gateway():
    gw = Gateway(cache_path=None)
    yield gw
    gw.close()
    mock.clear()


async def _run(tmp_path: Path, gateway: Gateway, config: ModelConfig, task: Task, *, style: str = "react",
               max_turns: int | None = None):
    ctx = scratch_context(tmp_path / "ws", max_turns=max_turns)
    agent = LLMAgent(config, gateway, style=style, name=config.model)  # type: ignore[arg-type]
    episode = build_episode(task, agent=agent.name, access="full", mode="live", policy="none", seed=0, ctx=ctx)
    return await run_episode(agent, episode)


@pytest.mark.parametrize("style", ["react", "planner"])
async def test_the_system_prompt_holds_the_worlds_date_and_the_user(tmp_path, gateway, style):
    task = TASKS[FORWARD].model_copy(update={"initial_state_seed": 11})
    planner = '{"subgoals": [{"id": "g1", "description": "forward the email"}]}'
    script = mock.script("dated", lambda messages, tools: planner if "planner" in _content(messages[0]) else "Done.")
    trajectory = await _run(tmp_path, gateway, ModelConfig(model="mock/dated"), task, style=style)
    now, me = seeded_start(11), cast(11)["me"]
    assert trajectory.status == ("completed" if style == "react" else "inaction")  # the planner saw no step
    for call in script.calls:  # the actor's calls, and the planner's
        system = _content(call.messages[0])
        assert now.strftime("%Y-%m-%d %H:%M") + " UTC" in system and now.strftime("%A") in system
        assert me["name"] in system and me["email"] in system and me["timezone"] in system
    assert seeded_start(11).date() != seeded_start(0).date()  # the date is the task's world's, not a constant


def _noisy_reader(steps: int):
    """A model that searches the inbox `steps` times (each result about 10,000 characters), then answers."""
    issued: list[int] = []

    def reply(messages: list[Any], tools: list[Any] | None) -> Any:
        if len(issued) >= steps:
            return "I read the inbox."
        issued.append(1)
        return {"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": "a", "page_size": 50}}]}

    return reply


async def test_a_60_step_episode_stays_within_the_history_budget(tmp_path, gateway):
    budget = 4_000
    script = mock.script("reader", _noisy_reader(60))
    config = ModelConfig(model="mock/reader", history_tokens=budget)
    trajectory = await _run(tmp_path, gateway, config, TASKS[FORWARD], max_turns=80)
    assert len(trajectory.tool_steps) == 60 and trajectory.status == "completed"
    sizes = [count_tokens("mock/reader", [dict(m) for m in call.messages]) for call in script.calls]
    assert max(sizes) <= budget, sizes
    last = script.calls[-1].messages
    newest = trajectory.tool_steps[-1].observation.text
    assert len(newest) > 6000 and _content(last[-1]).startswith(newest[:6000])  # the newest result, as stored
    assert _content(last[2]).startswith(NOTE_HEAD) and "earlier call(s) not listed" in _content(last[2])
    assert _content(last[1]) == TASKS[FORWARD].query + "\n\nConstraints:\n- Use at most 15 tool calls."
    ids = {c["id"] for m in last if isinstance(m, dict) for c in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in last if isinstance(m, dict) and m.get("role") == "tool"}
    assert ids == answered  # every call in view keeps its answer, and no answer lost its call


def test_the_budget_comes_from_the_models_window_unless_configured():
    assert history_budget(ModelConfig(model="openai/gpt-4o")) == MAX_DEFAULT_TOKENS  # 128k window, capped
    assert history_budget(ModelConfig(model="mock/anything")) == DEFAULT_TOKENS  # unknown to litellm
    assert history_budget(ModelConfig(model="openai/gpt-4o", history_tokens=5_000)) == 5_000


def test_the_users_words_stay_when_their_turn_leaves_the_view():
    history = History(budget=600, count=lambda m: len(str(m.get("content") or "")) // 4 + 4)
    history.add({"role": "system", "content": "system"})
    history.add({"role": "user", "content": "the task"})
    for i in range(10):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "mail__read", "arguments": f'{{"n": {i}}}'}}
        history.add({"role": "assistant", "content": None, "tool_calls": [call]})
        history.add({"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i} " + "x" * 300})
        if i == 1:
            history.add({"role": "user", "content": "Actually, send it to Maria instead."}, user=True)
    view = history.view()
    note = _content(view[2])
    assert note.startswith(NOTE_HEAD) and "- the user said: Actually, send it to Maria instead." in note
    first_kept = int(view[3]["tool_calls"][0]["id"][1:])
    assert first_kept > 2 and f'mail__read({{"n": {first_kept - 1}}}) -> result {first_kept - 1}' in note
    assert sum(history.count(m) for m in view) <= 600
    assert view[-1]["tool_call_id"] == "c9" and view[-2]["tool_calls"][0]["id"] == "c9"


async def test_a_trimmed_conversation_is_one_a_strict_provider_accepts(tmp_path, strict_provider):
    """Dropped turns leave whole: every tool call in view keeps its answer, the order stays valid."""
    search = {"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": "a", "page_size": 50}}]}
    strict_provider.script([search] * 25 + ["I read the inbox."])
    gateway = Gateway(cache_path=None)
    try:
        trajectory = await _run(tmp_path, gateway, strict_provider.model_config("reader", history_tokens=3_000),
                                TASKS[FORWARD], max_turns=40)
    finally:
        gateway.close()
    assert strict_provider.refusals == [] and trajectory.status == "completed"
    assert len(trajectory.tool_steps) == 25
    assert any(str(m.get("content", "")).startswith(NOTE_HEAD) for m in strict_provider.requests[-1]["messages"])
