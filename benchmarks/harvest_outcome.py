"""Does the outcome reward rank agents by what they achieve? Harvested tasks in synthesized mode.

Run: `python benchmarks/harvest_outcome.py --tasks TASKS.jsonl --workspace WS [--seeds 0] [--policy default]
[--agents scripted:oracle heuristic:basic ... idle explorer] [--json PATH]`. The tasks come from
`cworld synth --pool harvested` with the same workspace (its worlds); the tools from the harvested catalog.

Each agent runs every task in synthesized mode (the world engine, the fault policy given), and each episode
is scored offline as `cworld judge --offline` scores it (`verifiable_scores`, `overall`): state success
(the end state is the task's ground truth), R_c, overall. Two agents beside the named ones stand for the
floor, and neither reads the task's answer key:

- `idle`: answers at once without a call (an agent that does nothing must get 0%);
- `explorer`: the seeded explorer of `world_fidelity.py` (`_explorer.py`, rng `bench:outcome:explorer:<task>`)
  over the task's tools, following no plan: reads and writes with values it saw or made up, 2x the gold
  plan's length in calls (the only thing it takes from the task's private part, as a budget), then an
  answer. It must rarely reach a task's end state (the issue's goal: <= 5%).

Printed: per agent the state success, mean R_c and mean overall; whether the heuristic agents' order by
overall is their order by state success.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _explorer import Explorer

from cworld.agents import make_agent
from cworld.agents.base import Action, Observation
from cworld.agents.resolve import is_privileged
from cworld.agents.toolbox import Toolbox
from cworld.data_model import Task, ToolSpec, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.judges.content import load_weights
from cworld.judges.overall import overall
from cworld.judges.verifiable import verifiable_scores
from cworld.registry.tools import environment_tools
from cworld.rollout import RolloutContext, build_episode, run_episode
from cworld.rollout.episode import EpisodeInfraError
from cworld.seeding import derive_rng

DEFAULT_AGENTS = ("scripted:oracle", "heuristic:basic", "heuristic:careful", "heuristic:thorough", "idle",
                  "explorer")


class IdleAgent:
    """Does nothing: answers at once."""

    name = "idle"
    privileged = False

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        return None

    async def act(self, observation: Observation) -> Action:
        return Action("final", text="I looked into it and nothing needs doing.", status="completed")


class ExplorerAgent:
    """The world-fidelity explorer as an agent: calls the task's tools following no plan."""

    name = "explorer"
    privileged = False

    def __init__(self, budget: int) -> None:
        self.budget = budget

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        self.tools = {t.id: t for t in toolbox.visible()}
        self.explorer = Explorer(list(self.tools.values()), derive_rng(seed, f"bench:outcome:explorer:{task.id}"))
        self.calls = 0
        self.last: ToolSpec | None = None

    async def act(self, observation: Observation) -> Action:
        if self.explorer.now is None and observation.context is not None:
            self.explorer.now = observation.context.now
        if self.last is not None and observation.result is not None:
            self.explorer.observe(self.last, observation.result)
        if self.calls >= self.budget or not self.tools:
            return Action("final", text="Done exploring.", status="completed")
        self.calls += 1
        tool, arguments = self.explorer.next_call()
        self.last = tool
        return Action.call(tool.id, arguments, f"call_{self.calls}")


@dataclass
class Tally:
    agent: str
    privileged: bool
    success: list[float] = field(default_factory=list)
    r_c: list[float] = field(default_factory=list)
    overall: list[float] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        def mean(xs: list[float]) -> float | None:
            return round(statistics.fmean(xs), 4) if xs else None

        return {"agent": self.agent, "privileged": self.privileged, "episodes": len(self.overall),
                "state_success": mean(self.success), "R_c": mean(self.r_c), "overall": mean(self.overall),
                "statuses": self.statuses, "infra_errors": self.errors[:5]}


def make(name: str, task: Task) -> Any:
    if name == "idle":
        return IdleAgent()
    if name == "explorer":
        return ExplorerAgent(2 * max(1, len(task.gold_plan)))
    return make_agent(name)


async def score_agent(name: str, tasks: list[Task], ctx: RolloutContext, seeds: Sequence[int], policy: str,
                      weights: Any, parallel: int) -> Tally:
    tally = Tally(name, is_privileged(name))
    gate = asyncio.Semaphore(parallel)

    async def one(task: Task, seed: int) -> None:
        async with gate:
            agent = make(name, task)
            episode = build_episode(task, agent=name, access="full", mode="synthesized", policy=policy, seed=seed,
                                    ctx=ctx)
            try:
                trajectory = await run_episode(agent, episode)
            except EpisodeInfraError as exc:  # the engine broke, not the agent: counted, scored as nothing done
                tally.statuses["infra_error"] = tally.statuses.get("infra_error", 0) + 1
                tally.errors.append(f"{task.id}: {str(exc)[:160]}")
                tally.success.append(0.0)
                tally.r_c.append(0.0)
                return
        result = verifiable_scores(trajectory, ctx.tools)
        tally.statuses[trajectory.status] = tally.statuses.get(trajectory.status, 0) + 1
        score = overall(result.metrics, {}, weights).score
        if score is not None:
            tally.overall.append(score)
        if result.metrics.get("state_success") is not None:
            tally.success.append(float(result.metrics["state_success"] or 0.0))
            tally.r_c.append(float(result.metrics.get("R_c") or 0.0))

    await asyncio.gather(*(one(t, s) for t in tasks for s in seeds))
    return tally


def order_agrees(rows: list[dict[str, Any]], prefix: str = "heuristic:") -> bool | None:
    """Whether the agents named `prefix*` rank the same by overall as by state success (ties in state
    success may come in either order); None when their state success does not order them at all."""
    chosen = [r for r in rows if r["agent"].startswith(prefix) and r["overall"] is not None]
    if len(chosen) < 2 or len({r["state_success"] for r in chosen}) < 2:
        return None  # nothing to order: one agent, or all reach the same share
    by_overall = sorted(chosen, key=lambda r: -r["overall"])
    pairs = zip(by_overall, by_overall[1:], strict=False)
    return all((a["state_success"] or 0) >= (b["state_success"] or 0) for a, b in pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--policy", default="default")
    parser.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS))
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--json", type=Path)
    opts = parser.parse_args(argv)
    env, ws = Environment.resolve(), Workspace.resolve(opts.workspace)
    tasks = read_jsonl(opts.tasks, Task)
    ctx = RolloutContext(env, ws, environment_tools(env, ws).tasks_tools(tasks))  # as `cworld run` gets them
    weights = load_weights(env.judges / "weights.yaml")
    rows = []
    for name in opts.agents:
        tally = asyncio.run(score_agent(name, tasks, ctx, opts.seeds, opts.policy, weights, opts.parallel))
        rows.append(tally.row())
        row = rows[-1]
        label = f"{name} (privileged)" if row["privileged"] else name
        print(f"{label:32} state success {row['state_success']}  R_c {row['R_c']}  overall {row['overall']}  "
              f"{row['statuses']}", flush=True)
    agrees = order_agrees(rows)
    print(f"heuristic agents ranked by overall as by state success: {agrees}")
    if opts.json:
        opts.json.write_text(json.dumps({"tasks": len(tasks), "seeds": opts.seeds, "policy": opts.policy,
                                         "rows": rows, "heuristic_order_agrees": agrees}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
