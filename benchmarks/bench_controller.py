"""Controller overhead per call against a direct in-memory sandbox call (goal: under 5%).

Run: `python benchmarks/bench_controller.py [calls] [rounds]`. The same read-only sandbox call is made:

- `direct`: `SandboxServer.call_tool_sync` — the in-memory sandbox call itself, nothing around it;
- `backend`: `SandboxBackend.call` — the same, returned as a `ToolResult` (what any path must produce);
- `controller/none`: `StateController.call` with policy `none` (the chain without faults);
- `controller/armed`: every fault kind planned but not yet due (the injector checks each call);
- `controller/default`: the `default` policy after its faults have fired (lasting effects still checked).

Variants run interleaved call by call for several rounds and the median round is reported, so a busy
machine slows all of them alike. Overhead = (variant - direct) / direct.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from cworld.controller import StateController, build_controller, sandbox_tools
from cworld.controller.backends import SandboxBackend
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import PlanStep, Task
from cworld.environment import Environment, Workspace

TOOL, ARGS = "mail/search_contacts", {"query": "a"}
TASK = Task(id="bench", query="bench", tools=[TOOL, "mail/search_messages", "mail/list_messages"],
            gold_plan=[PlanStep(id="s1", tool="mail/search_messages", arguments={"query": "x"})])
FAR = 10**9


def armed_policy() -> Policy:
    from cworld.controller import FAULT_TYPES

    return Policy(name="armed", faults={k: FaultRule(budget=1, turns=(FAR, FAR)) for k in FAULT_TYPES})


async def _controller(policy: str | Policy, ws: Path) -> StateController:
    c = build_controller(TASK, mode="live", policy=policy, seed=1, agent="bench", env=Environment.resolve(),
                         workspace=Workspace(ws), tools=sandbox_tools())
    await c.open()
    return c


async def _round(variants: dict[str, Callable[[int], Awaitable[Any]]], calls: int, offset: int) -> dict[str, float]:
    """One round, variants interleaved call by call, so load from elsewhere hits each of them alike."""
    spent = dict.fromkeys(variants, 0.0)
    clock = time.perf_counter
    for i in range(calls):
        for name, fn in variants.items():
            started = clock()
            await fn(offset + i)
            spent[name] += clock() - started
    return {name: total / calls * 1e6 for name, total in spent.items()}


async def _variants(ws: Path) -> dict[str, Callable[[int], Awaitable[Any]]]:
    tools = sandbox_tools()
    spec = tools[TOOL]
    backend = SandboxBackend()
    await backend.open(1)
    server = backend.server("mail")
    assert server is not None
    none, armed, default = [await _controller(p, ws) for p in ("none", armed_policy(), "default")]
    for turn in range(1, 40):  # let the default policy's faults fire first
        await default.call(spec, ARGS, turn=turn)

    async def direct(i: int) -> Any:
        return server.call_tool_sync(spec.name, ARGS)

    return {
        "direct": direct,
        "backend": lambda i: backend.call(spec, ARGS),
        "controller/none": lambda i: none.call(spec, ARGS, turn=i + 1),
        "controller/armed": lambda i: armed.call(spec, ARGS, turn=i + 1),
        "controller/default": lambda i: default.call(spec, ARGS, turn=100 + i),
    }


async def measure(calls: int, rounds: int, ws: Path) -> dict[str, Any]:
    variants = await _variants(ws)
    await _round(variants, max(10, calls // 10), 0)  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for r in range(rounds):
        for name, us in (await _round(variants, calls, (r + 1) * calls)).items():
            samples[name].append(us)
    per_call = {name: statistics.median(values) for name, values in samples.items()}
    direct = per_call["direct"]
    return {
        "tool": TOOL,
        "calls_per_round": calls,
        "rounds": rounds,
        "per_call_us": {k: round(v, 2) for k, v in per_call.items()},
        "overhead_vs_direct_pct": {k: round((v - direct) / direct * 100, 2) for k, v in per_call.items() if k != "direct"},
        "controller_layer_us": round(per_call["controller/none"] - per_call["backend"], 2),
    }


def main(argv: list[str]) -> None:
    import tempfile

    calls = int(argv[1]) if len(argv) > 1 else 300
    rounds = int(argv[2]) if len(argv) > 2 else 7
    with tempfile.TemporaryDirectory() as ws:
        report = asyncio.run(measure(calls, rounds, Path(ws)))
    print(json.dumps(report, indent=2))
    direct = report["per_call_us"]["direct"]
    print(f"\n{'variant':<20} {'us/call':>10} {'overhead':>10}")
    for name, us in report["per_call_us"].items():
        overhead = "" if name == "direct" else f"{report['overhead_vs_direct_pct'][name]:+.2f}%"
        print(f"{name:<20} {us:>10.2f} {overhead:>10}")
    worst = max(v for k, v in report["overhead_vs_direct_pct"].items() if k.startswith("controller"))
    verdict = "meets" if worst < 5 else "misses"
    print(f"\ncontroller overhead vs a direct in-memory call: worst {worst:+.2f}% ({verdict} the goal of < 5%; "
          f"direct {direct:.1f} us/call)")


if __name__ == "__main__":
    main(sys.argv)
