"""The LLM agent on the production path (gateway -> litellm -> the `mock` provider), live on the sandbox:
all three tool access modes, planner–actor and ReAct, inaction, mid-episode user messages, token
accounting, malformed tool arguments; and once against the local SmolLM2 server (marked `local_llm`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from rollout_helpers import busy_actor, scratch_context, succeeded, without_timings

from cworld.agents import make_agent
from cworld.config import ModelConfig
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import Task, read_jsonl
from cworld.llm import Gateway, mock
from cworld.rollout import RunConfig, Runner, TrajectoryStore, build_episode, run_episode

TASKS = {t.id: t for t in read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)}
FORWARD = "sbx-mail-forward-audit"


def _field(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _results(messages: list[Any]) -> dict[str, str]:
    """Tool results so far, by the function name that produced them."""
    names, out = {}, {}
    for m in messages:
        for call in _field(m, "tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
        if _field(m, "role") == "tool":
            out[names.get(_field(m, "tool_call_id"), "?")] = _field(m, "content")
    return out


def _planner(prompt: str) -> str:
    if prompt.startswith("Task:") or "The user now says" in prompt:
        return json.dumps({"subgoals": [{"id": "g1", "description": "find the email"},
                                        {"id": "g2", "description": "find Deborah's contact"},
                                        {"id": "g3", "description": "forward it", "depends_on": ["g1", "g2"]}]})
    done = [goal for goal, call in (("g1", "search_messages("), ("g2", "search_contacts("), ("g3", "forward_message("))
            if any(call in line and "ERROR" not in line for line in prompt.splitlines())]
    return json.dumps({"complete": done, "feedback": "" if done else "find the email first"})


def forwarder(messages: list[Any], tools: list[Any] | None) -> Any:
    """A model that solves the forward task: finds tools (searching when it must), then calls them."""
    if str(_field(messages[0], "content")).startswith("You are the planner"):
        return _planner(str(_field(messages[-1], "content")))
    offered = {t["function"]["name"] for t in tools or []}
    seen = _results(messages)

    def use(function: str, arguments: dict[str, Any], query: str) -> Any:
        if function in offered:
            return {"text": f"Calling {function}.", "tool_calls": [{"name": function, "arguments": arguments}]}
        if "search_tools" in offered:
            return {"tool_calls": [{"name": "search_tools", "arguments": {"query": query, "k": 5}}]}
        return f"I have no tool for {function}."

    if "mail__search_messages" not in seen:
        return use("mail__search_messages", {"query": "Security audit findings"}, "search email messages")
    if "mail__search_contacts" not in seen:
        return use("mail__search_contacts", {"query": "Deborah Kapoor"}, "find a contact")
    if "mail__forward_message" not in seen:
        message = json.loads(seen["mail__search_messages"])["messages"][0]["message_id"]
        contact = json.loads(seen["mail__search_contacts"])["contacts"][0]["contact_id"]
        note = "Deborah, could you rotate the stale API keys this week? Thanks."
        return use("mail__forward_message", {"message_id": message, "to": [contact], "note": note}, "forward email")
    return "I forwarded the audit email to Deborah Kapoor."


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return scratch_context(tmp_path_factory.mktemp("ws"))


@pytest.fixture
def gateway():
    gw = Gateway(cache_path=None)
    yield gw
    gw.close()
    mock.clear()


async def run(ctx, gateway, model: str, *, access: str, style: str = "planner", policy: str = "none",
              task: str = FORWARD, seed: int = 0):
    agent = make_agent(model, access=access, style=style, gateway=gateway)
    episode = build_episode(TASKS[task], agent=agent.name, access=access, mode="live", policy=policy, seed=seed,
                            ctx=ctx)
    return await run_episode(agent, episode)


@pytest.mark.parametrize("style", ["planner", "react"])
@pytest.mark.parametrize("access", ["search", "full", "rag-25"])
async def test_llm_agent_solves_the_task_in_every_access_mode(ctx, gateway, access, style):
    script = mock.script("forwarder", forwarder)
    trajectory = await run(ctx, gateway, "mock/forwarder", access=access, style=style)
    assert succeeded(trajectory), (trajectory.status, trajectory.final_answer)
    assert trajectory.agent == ("mock/forwarder" + {"search": "", "full": "[full]", "rag-25": "[rag-25]"}[access]
                                if style == "planner" else
                                "mock/forwarder" + {"search": "[react]", "full": "[react,full]",
                                                    "rag-25": "[react,rag-25]"}[access])
    searches = [s for s in trajectory.steps if s.kind == "search"]
    first_tools = {t["function"]["name"] for t in script.calls[1 if style == "planner" else 0].tools or []}
    if access == "search":
        assert searches and first_tools == {"search_tools"}
        assert all(s.observation.structured_content["tools"] for s in searches)
    elif access == "full":
        assert not searches and {"mail__search_messages", "mail__forward_message"} <= first_tools
        assert len(first_tools) == len(TASKS[FORWARD].tools) + 10
    else:
        assert not searches and len(first_tools) == 25 and "search_tools" not in first_tools
    usage = trajectory.usage["agent"]
    assert usage.calls == len(script.calls) and usage.prompt_tokens > 0
    assert sum(s.tokens.calls for s in trajectory.steps) == usage.calls
    if style == "planner":
        events = [e["event"] for e in trajectory.planner_events]
        assert events[0] == "plan" and "update" in events and events[-1] == "stop"
        assert trajectory.planner_events[-2]["status"] == {"g1": "complete", "g2": "complete", "g3": "complete"}
    else:
        assert not trajectory.planner_events


async def test_rag_k_offers_exactly_the_top_k_tools(ctx, gateway):
    script = mock.script("forwarder", forwarder)
    trajectory = await run(ctx, gateway, "mock/forwarder", access="rag-5", style="react")
    offered = [t["function"]["name"].replace("__", "/", 1) for t in script.calls[0].tools]
    retrieved = [t.id for t in await ctx.search().search(TASKS[FORWARD].query, 5)]
    assert offered == retrieved
    assert "mail/search_messages" not in offered and trajectory.final_answer == "I have no tool for mail__search_messages."


async def test_planner_stops_after_repeated_inaction(ctx, gateway):
    def idle(messages: list[Any], tools: list[Any] | None) -> Any:
        if str(_field(messages[0], "content")).startswith("You are the planner"):
            return _planner(str(_field(messages[-1], "content")))
        return "Let me think about it some more."

    mock.script("idle", idle)
    trajectory = await run(ctx, gateway, "mock/idle", access="full")
    assert trajectory.status == "inaction"
    assert [s.kind for s in trajectory.steps] == ["message", "message", "final"]
    events = [e["event"] for e in trajectory.planner_events]
    assert events == ["plan", "feedback", "feedback", "stop"]
    assert trajectory.planner_events[-1]["pending"] == ["g1", "g2", "g3"]


async def test_a_user_message_mid_episode_reaches_the_model_and_the_planner_revises(ctx, gateway):
    ctx.policies["constraint-at-2"] = Policy(name="constraint-at-2", faults={
        "new_constraint": FaultRule(budget=1, turns=(2, 2), params={"variant": "deliverable"})})
    script = mock.script("forwarder", forwarder)
    trajectory = await run(ctx, gateway, "mock/forwarder", access="full", policy="constraint-at-2")
    (user_step,) = [s for s in trajectory.steps if s.kind == "user"]
    assert user_step.turn == 2 and user_step.interventions[0].kind == "new_constraint"
    later = [c.messages for c in script.calls if any(_field(m, "content") == user_step.message for m in c.messages)]
    assert later, "the user's message never reached the model"
    roles = [_field(m, "role") for m in later[0]]
    assert roles[roles.index("user", 2) - 1] == "tool"  # after the tool answer it follows, as chat formats need
    assert any(e["event"] == "replan" for e in trajectory.planner_events)
    assert trajectory.constraints_final[-1].added_at_turn == 2


async def test_malformed_tool_arguments_become_an_invalid_args_observation(ctx, gateway):
    replies = iter([{"tool_calls": [{"name": "mail__forward_message", "arguments": "{not json"}]},
                    "Sorry, I could not do it."])
    mock.script("sloppy", lambda messages, tools: next(replies))
    trajectory = await run(ctx, gateway, "mock/sloppy", access="full", style="react")
    step = trajectory.tool_steps[0]
    assert step.tool_call.arguments == {} and step.observation.is_error
    assert step.observation.error_class == "invalid_args"
    assert trajectory.status == "completed" and not succeeded(trajectory)


async def test_same_seed_and_same_model_answers_give_the_same_trajectory(ctx, gateway):
    runs = []
    for _ in range(2):
        mock.script("busy", busy_actor(calls=2))  # a fresh script: the mock numbers its tool-call ids per script
        runs.append(await run(ctx, gateway, "mock/busy", access="full", style="react", policy="default", seed=3))
    assert without_timings(runs[0]) == without_timings(runs[1])
    assert runs[0].tool_steps and runs[0].usage["agent"].calls == 3


async def test_the_runner_keeps_concurrent_llm_episodes_within_bounds(tmp_path):
    script = mock.script("slow-busy", busy_actor(calls=1), delay_s=0.05)
    ctx = scratch_context(tmp_path / "ws")
    gateway = Gateway(cache_path=None)
    config = RunConfig(agent="mock/slow-busy", access="full", style="react", policy="none", seeds=2, concurrency=3,
                       progress=False)
    try:
        report = await Runner(list(TASKS.values())[:4], config, ctx, tmp_path / "run", gateway=gateway).run()
    finally:
        gateway.close()
        mock.clear()
    assert report.ran == 8 and script.max_in_flight == 3
    for record in TrajectoryStore(tmp_path / "run"):  # one model call per action: a tool call (if any), the answer
        assert record.usage["agent"].calls == 1 + sum(s.kind == "tool" for s in record.steps)


@pytest.mark.local_llm
async def test_llm_agent_runs_once_against_smollm2(ctx, tmp_path):
    from cworld.cli import llm_local
    from cworld.errors import MissingDependency

    try:
        llm_local.ensure_installed(install=False)
    except MissingDependency as exc:
        pytest.skip(str(exc))
    port = llm_local.free_port()
    process = llm_local.start(port, tmp_path / "server.log")
    try:
        await asyncio.to_thread(llm_local.wait_ready, port, process, 180.0)
        model = ModelConfig(model=f"openai/{llm_local.MODEL_ALIAS}", api_base=llm_local.api_base(port),
                            max_tokens=200, api_key_env=None)
        gateway = Gateway(cache_path=None, timeout_s=240.0)
        from cworld.agents import LLMAgent

        agent = LLMAgent(model, gateway, style="react", name="smollm2")
        ctx.max_turns = 4
        episode = build_episode(TASKS["sbx-travel-kathmandu"], agent=agent.name, access="full", mode="live",
                                policy="none", seed=0, ctx=ctx)
        trajectory = await run_episode(agent, episode)
        gateway.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert trajectory.status in ("completed", "turn_limit")
    assert trajectory.usage["agent"].calls >= 1 and trajectory.usage["agent"].prompt_tokens > 100
    assert trajectory.steps and trajectory.steps[-1].turn <= 4
