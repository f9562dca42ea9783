"""The controller's own cost per call stays under 5% of a direct in-memory sandbox call.

A quick version of `benchmarks/bench_controller.py`: the controller over a backend that answers at once
(its own cost) against the direct sandbox call, interleaved call by call, medians compared, so load from
other processes moves both sides alike.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from cworld.controller import FAULT_TYPES, StateController, load_policy
from cworld.controller.backends import SandboxBackend
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import PlanStep, Task, ToolResult, ToolSpec
from cworld.environment import Environment
from cworld.registry.tools import sandbox_tools

TOOLS = sandbox_tools()
SPEC, ARGS = TOOLS["mail/search_contacts"], {"query": "a"}
TASK = Task(id="overhead", query="q", tools=[SPEC.id, "mail/search_messages"],
            gold_plan=[PlanStep(id="s1", tool="mail/search_messages", arguments={"query": "x"})])


class Instant:
    mode = "live"

    def __init__(self, result: ToolResult) -> None:
        self.result = result

    async def open(self, seed: int) -> None:
        return None

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        return self.result

    async def end_state(self) -> dict[str, Any] | None:
        return None

    async def close(self) -> None:
        return None


async def test_controller_costs_under_five_percent_of_a_direct_call() -> None:
    sandbox = SandboxBackend()
    await sandbox.open(1)
    server = sandbox.server("mail")
    assert server is not None
    instant = Instant(await sandbox.call(SPEC, ARGS))
    armed = Policy(name="armed", faults={k: FaultRule(budget=1, turns=(10**9, 10**9)) for k in FAULT_TYPES})
    policies = {"none": Policy(name="none"), "armed": armed, "default": load_policy(Environment.resolve(), "default")}
    controllers = {n: StateController(instant, task=TASK, policy=p, agent="a", tools=TOOLS) for n, p in policies.items()}
    for turn in range(1, 40):  # the default policy's faults fire first; their lasting effects stay checked
        await controllers["default"].call(SPEC, ARGS, turn=turn)
    samples: dict[str, list[float]] = {"direct": [], "instant": [], **{n: [] for n in controllers}}
    for i in range(300):
        started = time.perf_counter()
        server.call_tool_sync(SPEC.name, ARGS)
        samples["direct"].append(time.perf_counter() - started)
        started = time.perf_counter()
        await instant.call(SPEC, ARGS)
        samples["instant"].append(time.perf_counter() - started)
        for name, c in controllers.items():
            started = time.perf_counter()
            await c.call(SPEC, ARGS, turn=100 + i)
            samples[name].append(time.perf_counter() - started)
    median = {k: statistics.median(v) for k, v in samples.items()}
    own = {n: (median[n] - median["instant"]) / median["direct"] for n in controllers}
    assert all(share < 0.05 for share in own.values()), own
