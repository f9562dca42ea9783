"""Fairness: one (task, policy, seed) gives every agent the same faults; only the firing turn varies.

Also: the fault stream is independent of the sandbox's state and of what the backend answers, and the
same seed with the same calls gives the same outcomes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from cworld.controller import (
    StateController,
    build_controller,
    fault_multiset,
    load_policy,
    plan_faults,
    time_faults,
)
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import PlanStep, Task, ToolResult, ToolSpec
from cworld.environment import Environment, Workspace
from cworld.registry.tools import sandbox_tools
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession

ENV = Environment.resolve()
TOOLS = sandbox_tools()

TASK = Task(
    id="fair-shop-mail",
    query="Log in to the shop, look at my addresses, then find the newest mail about an order and star it.",
    tools=["shop/login", "shop/list_addresses", "shop/search_products", "mail/search_messages",
           "mail/list_messages", "mail/star_message"],
    gold_plan=[
        PlanStep(id="s1", tool="shop/login", arguments={"email": "x", "password": "y"}),
        PlanStep(id="s2", tool="shop/list_addresses", arguments={"token": "{{s1.token}}"}),
        PlanStep(id="s3", tool="mail/search_messages", arguments={"query": "order"}),
        PlanStep(id="s4", tool="mail/star_message", arguments={"message_id": "{{s3.messages.0.message_id}}"}),
    ],
)

#: One fault of every kind, early: both simulated agents below meet all of them.
EVERY_KIND = Policy(name="every-kind", faults={
    kind: FaultRule(budget=1, turns=(1, 6), params=params) for kind, params in {
        "timeout": {"delay_s": [5, 50]}, "rate_limit": {"retry_after_turns": [1, 2]}, "unavailable": {},
        "network_error": {"flavor": {"choice": [0, 1, 2]}}, "deprecated": {}, "delayed": {"calls": 1},
        "corrupted": {"fields": [1, 3]}, "truncated": {"max_chars": 400, "min_chars": 100}, "stale": {},
        "session_expired": {}, "new_constraint": {},
    }.items()
})


def controller(tmp_path: Path, agent: str, policy: Policy | str = EVERY_KIND, seed: int = 7) -> StateController:
    return build_controller(TASK, mode="live", policy=policy, seed=seed, agent=agent, env=ENV,
                            workspace=Workspace(tmp_path / "ws"), tools=TOOLS)


def fired_multiset(c: StateController) -> Counter[str]:
    return Counter(i.kind for i in c.log if i.params.get("phase") == "fire")


async def run_agent(c: StateController, calls: list[tuple[str, dict[str, Any]]], turns: int) -> list[Any]:
    """A simple scripted agent: cycles through `calls`, logs in when told, polls pending results."""
    await c.open()
    account = c.backend.sandbox.session.state["shop"]["account"]  # type: ignore[attr-defined]
    token, trace = "", []
    for turn in range(1, turns + 1):
        c.due_user_messages(turn)
        tool, args = calls[turn % len(calls)]
        if tool == "shop/login":
            args = {"email": account["email"], "password": account["password"]}
        args = {k: (token if v == "TOKEN" else v) for k, v in args.items()}
        out = await c.call(TOOLS[tool], args, turn=turn)
        if tool == "shop/login" and not out.observation.is_error:
            token = out.observation.structured_content["token"]
        trace.append((tool, out.observation.model_dump(), [i.model_dump() for i in out.interventions]))
    return trace


CALLS_A = [("shop/login", {}), ("shop/list_addresses", {"token": "TOKEN"}), ("mail/search_messages", {"query": "order"}),
           ("mail/list_messages", {"page_size": 25}), ("mail/star_message", {"message_id": "mail_0003", "starred": True}),
           ("mail/list_messages", {"page_size": 25}),
           ("mail/star_message", {"message_id": "mail_0003", "starred": False})]
CALLS_B = [("mail/list_messages", {"page_size": 20}), ("mail/star_message", {"message_id": "mail_0001", "starred": True}),
           ("shop/login", {}), ("mail/search_messages", {"query": "the"}), ("shop/list_addresses", {"token": "TOKEN"}),
           ("mail/list_messages", {"page_size": 20}), ("shop/search_products", {"query": "pen"}),
           ("mail/star_message", {"message_id": "mail_0001", "starred": False})]


def test_every_agent_gets_the_same_planned_multiset_but_its_own_timing(tmp_path: Path) -> None:
    agents = ["scripted:oracle", "scripted:no-retry", "openai/gpt-4o", "mock/x"]
    controllers = [controller(tmp_path, a, policy="stress") for a in agents]
    plans = [[p.model_dump() for p in c.plan] for c in controllers]
    assert all(plan == plans[0] for plan in plans) and len(plans[0]) >= 8
    assert len({fault_multiset(c.plan) == fault_multiset(controllers[0].plan) for c in controllers}) == 1
    timings = [c.schedule.turns() for c in controllers]
    assert len({tuple(sorted(t.items())) for t in timings}) > 1  # firing points differ between agents
    assert all(set(t) == set(timings[0]) for t in timings)


def test_shared_timing_gives_every_agent_the_same_turns() -> None:
    policy = load_policy(ENV, "stress").model_copy(update={"timing": "shared", "name": "stress-shared"})
    plan = plan_faults(TASK.public(), policy, 3, TOOLS)
    a = controller_schedule(plan, policy, "a")
    b = controller_schedule(plan, policy, "b")
    assert a == b


def controller_schedule(plan: list[Any], policy: Policy, agent: str) -> dict[str, int]:
    from cworld.controller.planning import timing_agent

    return time_faults(plan, 3, timing_agent(policy, agent)).turns()


def test_plan_depends_on_task_policy_and_seed_only() -> None:
    default = load_policy(ENV, "stress")
    base = fault_multiset(plan_faults(TASK.public(), default, 1, TOOLS))
    assert base == fault_multiset(plan_faults(TASK.public(), default, 1, TOOLS))
    other_seeds = [fault_multiset(plan_faults(TASK.public(), default, s, TOOLS)) for s in range(2, 6)]
    other_task = fault_multiset(plan_faults(TASK.model_copy(update={"id": "other"}).public(), default, 1, TOOLS))
    assert any(m != base for m in other_seeds) and other_task != base


async def test_two_different_agents_face_exactly_the_planned_faults(tmp_path: Path) -> None:
    a, b = controller(tmp_path, "agent-a"), controller(tmp_path, "agent-b")
    await run_agent(a, CALLS_A, 40)
    await run_agent(b, CALLS_B, 40)
    planned = Counter(p.kind for p in a.plan)
    assert set(planned) == {"timeout", "rate_limit", "unavailable", "network_error", "deprecated", "delayed",
                            "corrupted", "truncated", "stale", "session_expired", "new_constraint"}
    assert fired_multiset(a) == planned == fired_multiset(b)
    assert a.fault_report().unfired == [] and b.fault_report().unfired == []
    assert fired_signatures(a) == fired_signatures(b) == sorted(p.signature for p in a.plan)
    assert a.schedule.turns() != b.schedule.turns()


def fired_signatures(c: StateController) -> list[tuple[str, str]]:
    """The planned (kind, parameters) of every fault that fired; each record carries its plan's params."""
    by_key = {p.key: p for p in c.plan}
    records = [i for i in c.log if i.params.get("phase") == "fire"]
    for record in records:
        planned = by_key[record.params["fault"]]
        assert {k: record.params[k] for k in planned.params} == planned.params
    return sorted(by_key[r.params["fault"]].signature for r in records)


async def test_same_seed_same_calls_same_outcomes(tmp_path: Path) -> None:
    first = await run_agent(controller(tmp_path, "agent-a"), CALLS_A, 25)
    second = await run_agent(controller(tmp_path, "agent-a"), CALLS_A, 25)
    strip = lambda trace: [(t, {k: v for k, v in o.items() if k != "meta"}, i) for t, o, i in trace]  # noqa: E731
    assert strip(first) == strip(second)


async def test_faults_do_not_touch_the_sandbox_streams(tmp_path: Path) -> None:
    calm, stormy = controller(tmp_path, "a", policy="none"), controller(tmp_path, "a", policy="stress")
    await calm.open()
    await stormy.open()
    assert await calm.end_state() == await stormy.end_state() == SandboxSession(7, all_apps()).snapshot()


class ScrambledBackend:
    """Answers every call with content unrelated to the sandbox: a different world, the same calls."""

    mode = "live"

    def __init__(self, salt: str) -> None:
        self.salt = salt

    async def open(self, seed: int) -> None:
        self.n = 0

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        self.n += 1
        return ToolResult.ok({"items": [{"id": f"{self.salt}-{i}", "v": i * self.n} for i in range(60)]})

    async def end_state(self) -> dict[str, Any] | None:
        return None

    async def close(self) -> None:
        return None


async def test_when_faults_fire_does_not_depend_on_what_the_world_answers() -> None:
    policy = Policy(name="tool-and-state", faults={
        k: FaultRule(budget=1, turns=(1, 8)) for k in ("timeout", "rate_limit", "unavailable", "network_error",
                                                     "corrupted", "truncated")})
    firings = []
    for salt in ("left", "right"):
        c = StateController(ScrambledBackend(salt), task=TASK, policy=policy, agent="a", tools=TOOLS, seed=5)
        await c.open()
        for turn in range(1, 20):
            await c.call(TOOLS["mail/list_messages"], {}, turn=turn)
        firings.append([(i.kind, i.turn, i.params.get("phase")) for i in c.log])
    assert firings[0] == firings[1] and len([f for f in firings[0] if f[2] == "fire"]) == 6
