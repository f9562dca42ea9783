"""The environment never reads the answer key: fault planning, the budget fault's cap and the turn limit
depend on the public task alone (query, stated constraints, candidate tools, scenario), never on the gold
plan, sub-goals, hints, ground truth or metadata."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from cworld.controller import StateController, load_policy, plan_faults
from cworld.controller.faults.base import PlanInput
from cworld.controller.faults.constraint_level import NewConstraintFault, call_cap
from cworld.controller.policy import FaultRule, Policy
from cworld.controller.stated import stated_call_limit, stated_deadlines, stated_limits
from cworld.data_model import Constraint, PlanStep, PublicTask, SubGoal, Task, ToolResult, ToolSpec
from cworld.environment import Environment
from cworld.registry.tools import sandbox_tools
from cworld.rollout.episode import DEFAULT_MAX_TURNS, turn_budget

ENV = Environment.resolve()
TOOLS = sandbox_tools()
CONTROLLER = Path(__file__).parent.parent / "cworld" / "controller"

BASE = Task(
    id="public-only",
    query="Log in to the shop, list my addresses, then find the newest mail about an order and star it.",
    tools=["shop/login", "shop/list_addresses", "shop/search_products", "mail/search_messages",
           "mail/list_messages", "mail/star_message"],
    constraints=[Constraint(id="c-due", type="deadline", description="Have it done by 2026-05-12.",
                            verification={"kind": "deadline", "tool": "x/y", "argument": "d", "value": "2026-05-12"})],
)


def with_answer_key(steps: int) -> Task:
    """BASE with a gold plan of `steps` steps and every other private field filled to match."""
    plan = [PlanStep(id=f"s{i}", tool=BASE.tools[i % len(BASE.tools)], arguments={"i": i}) for i in range(steps)]
    return BASE.model_copy(update={
        "gold_plan": plan,
        "subgoals": [SubGoal(id=f"g{i}", description=f"goal {i}") for i in range(steps)],
        "final_answer_hints": [f"hint {i}" for i in range(steps)],
        "rationales": {t: f"needed {steps}" for t in BASE.tools},
        "ground_truth": {"steps": steps},
        "metadata": {"constraint_updates": [{"variant": "budget", "message": f"{steps} calls",
                                             "constraint": {"id": "x", "type": "efficiency", "description": "x"}}]},
    })


SHORT, LONG = with_answer_key(2), with_answer_key(20)


class NoBackend:
    """Planning happens at construction; these tests never open the backend."""

    async def open(self, seed: int) -> None: ...
    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult: raise AssertionError
    async def end_state(self) -> dict[str, Any] | None: return None
    async def close(self) -> None: ...


def controller(task: Task, policy: Policy | str, seed: int = 3) -> StateController:
    chosen = policy if isinstance(policy, Policy) else load_policy(ENV, policy)
    return StateController(NoBackend(), task=task, policy=chosen, agent="a", tools=TOOLS, seed=seed)  # type: ignore[arg-type]


def budget_only(**params: Any) -> Policy:
    return Policy(name="budget", faults={"new_constraint": FaultRule(budget=1, turns=(1, 1),
                                                                     params={"variant": "budget", **params})})


# --- what the environment is given --------------------------------------------------------------------


def test_plan_faults_takes_the_public_task() -> None:
    assert get_type_hints(plan_faults)["task"] is PublicTask
    assert get_type_hints(PlanInput)["task"] is PublicTask
    with pytest.raises(TypeError, match="public"):
        plan_faults(SHORT, load_policy(ENV, "stress"), 1, TOOLS)  # type: ignore[arg-type]


def test_the_controller_keeps_only_the_public_task() -> None:
    c = controller(LONG, "stress")
    assert c.task == LONG.public() and isinstance(c.task, PublicTask)
    assert not any(isinstance(v, Task) for v in vars(c).values())


def test_no_controller_module_reads_the_answer_key() -> None:
    private = re.compile(r"\.(gold_plan|subgoals|final_answer_hints|ground_truth|rationales|provenance|metadata)\b")
    reads = [f"{p.relative_to(CONTROLLER)}:{n}" for p in sorted(CONTROLLER.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if private.search(line)]
    assert reads == []


# --- same public task, different answer key: same environment -----------------------------------------


@pytest.mark.parametrize("policy", ["default", "stress"])
def test_the_fault_plan_ignores_the_gold_plan(policy: str) -> None:
    for seed in range(4):
        short, long = controller(SHORT, policy, seed), controller(LONG, policy, seed)
        assert [p.model_dump() for p in short.plan] == [p.model_dump() for p in long.plan]
        assert short.schedule.turns() == long.schedule.turns()


def test_the_budget_cap_ignores_the_gold_plan() -> None:
    [short], [long] = controller(SHORT, budget_only()).plan, controller(LONG, budget_only()).plan
    assert short.content == long.content
    assert short.content["constraint"]["verification"] == {"kind": "max_calls", "value": 2 * 6 + 2}


def test_the_turn_budget_ignores_the_gold_plan() -> None:
    assert turn_budget(SHORT.public(), None) == turn_budget(LONG.public(), None) == max(DEFAULT_MAX_TURNS, 3 * 6 + 10)


def test_the_delivered_change_ignores_the_metadata() -> None:
    for task in (SHORT, LONG):
        [(text, constraint, _)] = controller(task, budget_only()).due_user_messages(1)
        assert text == "Please be economical: use at most 14 tool calls in total for this task."
        assert constraint.id.startswith("injected-")


# --- the new rules -------------------------------------------------------------------------------------


def test_call_cap_follows_the_candidate_tools() -> None:
    def public(tools: list[str]) -> PublicTask:
        return PublicTask(id="t", query="q", tools=tuple(tools))

    assert call_cap(public([])) == 12
    assert call_cap(public(["a/x"])) == 4
    assert call_cap(public(["a/x", "a/x", "b/y"])) == 6  # distinct tools
    assert call_cap(public([f"a/t{i}" for i in range(30)])) == 62


def test_a_stated_call_limit_is_tightened_instead_of_capped() -> None:
    task = BASE.model_copy(update={"constraints": [
        Constraint(id="c-calls", type="tool_count", description="Keep it efficient: no more than 14 tool calls.",
                   verification={"kind": "max_calls", "value": 14})]})
    [planned] = controller(task, budget_only(tighten=0.5)).plan
    assert planned.content["message"].endswith("is now 7 instead of 14.")
    [(_, constraint, _)] = controller(task, budget_only(tighten=0.5)).due_user_messages(1)
    assert constraint.replaces == "c-calls" and constraint.type == "tool_count"
    assert constraint.verification == {"kind": "max_calls", "value": 7}


def test_the_graders_form_gets_the_number_the_user_was_told() -> None:
    spend = Constraint(id="c-spend", type="budget", description="Don't spend more than 350 on this.",
                       verification={"kind": "budget", "tool": "shop/checkout", "field": "total", "value": 350.0})
    task = BASE.model_copy(update={"constraints": [spend]})
    [(text, constraint, _)] = controller(task, budget_only(tighten=0.75)).due_user_messages(1)
    assert text.endswith("is now 262 instead of 350.")
    assert constraint.verification == {"kind": "budget", "tool": "shop/checkout", "field": "total", "value": 262.0}


def test_a_stated_deadline_moves_and_the_tasks_form_moves_with_it() -> None:
    policy = Policy(name="due", faults={"new_constraint": FaultRule(
        budget=1, turns=(1, 1), params={"variant": "deadline", "shift_days": -2})})
    [(text, constraint, _)] = controller(BASE, policy).due_user_messages(1)
    assert "now means by 2026-05-10 instead of 2026-05-12" in text
    assert constraint.replaces == "c-due"
    assert constraint.verification == {"kind": "deadline", "tool": "x/y", "argument": "d", "value": "2026-05-10"}


def test_a_deadline_written_in_words_moves_by_days() -> None:
    task = PublicTask(id="t", query="q", constraints=(
        "The follow-up card must be due no later than 17:00 UTC on Monday 13 July.",))
    plan = PlanInput(task, {}, key="t:p:0:new_constraint:0")
    target = NewConstraintFault.plan_target(plan, {"variant": "deadline", "shift_days": -1}, random.Random(0))
    assert target is not None and target.content["message"].endswith("is now 1 day earlier than that.")


def test_what_the_user_states() -> None:
    task = PublicTask(id="t", query="q", constraints=(
        "Keep the flight under 1,000.00 in total.",
        "Send exactly 309.69, not a cent more.",
        "Be efficient: use no more than 21 tool calls in total.",
        "Don't spend more than 350 on this.",
        "The meeting has to be over by 17:00 UTC on Thursday 23 July.",
        "The review has to happen before Thursday 2026-08-27.",
        "Pull this together from at least three different services.",
    ))
    limits = stated_limits(task)
    assert [(x.value, x.counts_calls) for x in limits] == [(1000.0, False), (21, True), (350, False)]
    assert limits[0].write(750.0) == "750.00"
    assert stated_call_limit(task) == 21
    assert [d.iso for d in stated_deadlines(task)] == [None, "2026-08-27"]


def test_turn_budget_rules() -> None:
    few = PublicTask(id="t", query="q", tools=("a/x", "a/y"))
    many = PublicTask(id="t", query="q", tools=tuple(f"a/t{i}" for i in range(30)))
    limited = PublicTask(id="t", query="q", tools=("a/x",), constraints=("Use at most 60 tool calls.",))
    assert turn_budget(few, None) == DEFAULT_MAX_TURNS
    assert turn_budget(many, None) == 100
    assert turn_budget(limited, None) == 70
    assert turn_budget(many, 5) == 5
