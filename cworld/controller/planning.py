"""Fault planning with the fairness guarantee (C-World appendix, "Fairness Guarantee").

Two separate random streams, neither shared with the sandbox's state:

- **what** faults an episode holds (kinds, parameters, targets, plan-time content) comes from
  `derive_rng(seed, "faults:{task}:{policy}")`: the same multiset for every agent on that task;
- **when** each fires comes from `derive_rng(seed, "fault-timing:{agent}:{fault key}")`: a turn drawn
  inside the fault's turn range, so the firing point varies per agent (or is shared, if the policy says
  `timing: shared`) while the adversity budget does not.

A fault fires at the first eligible call at or after its turn; one whose range passes without an
eligible call stays armed and fires at the next eligible call, so no agent escapes its budget by luck.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from cworld.controller.faults import FAULT_TYPES
from cworld.controller.faults.base import PlanInput
from cworld.controller.policy import Policy, sample_budget, sample_param
from cworld.data_model import PublicTask, ToolSpec
from cworld.data_model.trajectory import FaultLevel
from cworld.seeding import derive_rng

SHARED_TIMING_AGENT = "*"
"""The agent name timing is drawn for when a policy says `timing: shared`."""


class PlannedFault(BaseModel):
    """One fault of an episode's fixed multiset; `key` is stable across agents and names its streams."""

    key: str
    kind: str
    level: FaultLevel
    params: dict[str, Any] = Field(default_factory=dict)
    turns: tuple[int, int] = (1, 30)
    categories: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    target: str | None = None
    content: dict[str, Any] = Field(default_factory=dict)

    @property
    def signature(self) -> tuple[str, str]:
        """What fairness compares: the kind and its concrete parameters (and target and content)."""
        import json

        body = {"params": self.params, "target": self.target, "content": self.content}
        return self.kind, json.dumps(body, sort_keys=True, default=str)


def fault_multiset(planned: list[PlannedFault]) -> Counter[tuple[str, str]]:
    return Counter(p.signature for p in planned)


def plan_faults(
    task: PublicTask, policy: Policy, seed: int, tools: Mapping[str, ToolSpec] | None = None
) -> list[PlannedFault]:
    """The episode's fault multiset: a function of (task, policy, seed) and the environment's tools only.

    `task` is the public part (`Task.public()`): the environment never reads the answer key, so no fault
    depends on the gold plan, hints, ground truth or metadata."""
    if not isinstance(task, PublicTask):
        raise TypeError(f"plan_faults takes the public task (task.public()), not {type(task).__name__}")
    rng = derive_rng(seed, f"faults:{task.id}:{policy.name}")
    planned: list[PlannedFault] = []
    for kind in sorted(policy.faults):
        rule = policy.faults[kind]
        fault_cls = FAULT_TYPES[kind]
        for n in range(sample_budget(rule.budget, rng)):
            key = f"{task.id}:{policy.name}:{seed}:{kind}:{n}"
            plan = PlanInput(task=task, tools=tools or {}, categories=rule.categories, tool_globs=rule.tools, key=key)
            params = {name: sample_param(spec, rng) for name, spec in sorted(rule.params.items())}
            params = fault_cls.Params.model_validate(params).model_dump(mode="json")
            targeting = fault_cls.plan_target(plan, params, rng)
            if targeting is None:
                continue
            planned.append(PlannedFault(
                key=key, kind=kind, level=fault_cls.level,
                params=params, turns=rule.turns, categories=rule.categories, tools=rule.tools,
                target=targeting.target, content=targeting.content,
            ))
    return planned


@dataclass(frozen=True)
class ScheduledFault:
    planned: PlannedFault
    turn: int
    """The first turn at which it may fire for this agent."""


@dataclass
class FaultSchedule:
    """One agent's firing points for an episode's planned faults, in firing order."""

    agent: str
    faults: list[ScheduledFault] = field(default_factory=list)

    @property
    def call_faults(self) -> list[ScheduledFault]:
        """Tool- and state-level faults: they ride on tool calls."""
        return [f for f in self.faults if f.planned.level != "constraint"]

    @property
    def constraint_faults(self) -> list[ScheduledFault]:
        """Constraint-level faults: delivered as user messages between turns."""
        return [f for f in self.faults if f.planned.level == "constraint"]

    def turns(self) -> dict[str, int]:
        return {f.planned.key: f.turn for f in self.faults}


def time_faults(planned: list[PlannedFault], seed: int, agent: str) -> FaultSchedule:
    """Per-agent firing turns, each drawn from its own stream so adding a fault never moves another."""
    scheduled = []
    for fault in planned:
        rng = derive_rng(seed, f"fault-timing:{agent}:{fault.key}")
        scheduled.append(ScheduledFault(fault, rng.randint(fault.turns[0], fault.turns[1])))
    scheduled.sort(key=lambda s: (s.turn, s.planned.key))
    return FaultSchedule(agent=agent, faults=scheduled)


def timing_agent(policy: Policy, agent: str) -> str:
    return SHARED_TIMING_AGENT if policy.timing == "shared" else agent
