"""The graded scripted agents, run live on the sandbox tasks under the `default` policy, come out in
their designed order (docs/agents-and-runs.md): oracle > noisy-0.1 > no-replan > no-look > no-retry.

Success = completed, the end state matches the task's ground truth, and every checkable constraint (as
changed mid-episode) holds. 10 tasks x 5 seeds = 50 episodes per agent; everything is seeded, so the
numbers are reproducible, and the margins (0.94 / 0.82 / 0.74 / 0.30 below a perfect oracle) are
wide enough that the order is the design, not luck.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rollout_helpers import fired, scratch_context, success_rate

from cworld.agents import make_agent
from cworld.data_model import Task, read_jsonl
from cworld.rollout import build_episode, run_episode

TASKS = read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)
DESIGNED_ORDER = ["scripted:oracle", "scripted:noisy-0.1", "scripted:no-replan", "scripted:no-look",
                  "scripted:no-retry"]
SEEDS = 5


@pytest.mark.slow
async def test_graded_scripted_agents_come_out_in_their_designed_order(tmp_path):
    ctx = scratch_context(tmp_path)
    rates, faults = {}, {}
    for agent in DESIGNED_ORDER:
        runs = []
        for task in TASKS:
            for seed in range(SEEDS):
                episode = build_episode(task, agent=agent, access="full", mode="live", policy="default", seed=seed,
                                        ctx=ctx)
                runs.append(await run_episode(make_agent(agent), episode))
        rates[agent] = success_rate(runs)
        faults[agent] = sum(len(fired(t)) for t in runs)
    ordered = [rates[a] for a in DESIGNED_ORDER]
    assert ordered == sorted(ordered, reverse=True) and len(set(ordered)) == len(ordered), rates
    assert rates["scripted:oracle"] >= 0.95, rates
    assert rates["scripted:no-retry"] <= 0.5, rates
    assert faults["scripted:oracle"] >= 2 * len(TASKS) * SEEDS, faults  # the default policy bites
