"""Rollout throughput and concurrency (issue 6, "Done when").

Run: `python benchmarks/bench_rollout.py [--quick]`. Prints, in one run:

1. episodes per second, one at a time, for `scripted:oracle` (no LLM) over the hand-made sandbox tasks
   (tests/fixtures/tasks_sandbox.jsonl), policy `none`, through the whole runner (controller, trajectory
   written and fsynced): `live` (sandbox apps in process, the default), `live/mcp` (each app behind an
   in-memory MCP client: the protocol path) and `synthesized` (the schema World Engine);
2. the speed-up of the runner at concurrency 1, 8, 32 and 64 when the agent's model takes 200 ms per turn,
   two ways:
   - `mock LLM`: an LLM agent (ReAct, full access) on the production path, gateway -> litellm -> the
     `mock` provider with `delay_s=0.2` (two tool calls and an answer: three 200 ms turns per episode);
   - `sleepy oracle`: the scripted oracle thinking 200 ms before each action (no litellm): the runner alone.
   Each level runs max(8, 3 x C) episodes (4 at C = 1) in synthesized mode, after a warm-up run; speed-up = throughput(C) / throughput(1);
   ideal = C; the goal is speed-up >= 0.8 x ideal. Also printed: the CPU time per episode, which bounds the
   speed-up from above (Amdahl: a level cannot beat seconds-per-episode / CPU-seconds-per-episode).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from cworld.agents import Action, Observation, ScriptedAgent, Toolbox, scripted_skills
from cworld.data_model import Task, read_jsonl
from cworld.llm import Gateway, mock
from cworld.rollout import RolloutContext, RunConfig, Runner

TESTS = Path(__file__).resolve().parent.parent / "tests"
FIXTURE = TESTS / "fixtures" / "tasks_sandbox.jsonl"
sys.path.insert(0, str(TESTS))
from rollout_helpers import busy_actor, scratch_context  # noqa: E402  (the tests' helpers, found above)

TURN_S = 0.2
LEVELS = (1, 8, 32, 64)


@dataclass
class Timing:
    episodes: int
    wall_s: float
    cpu_s: float

    @property
    def per_s(self) -> float:
        return self.episodes / self.wall_s

    @property
    def cpu_ms(self) -> float:
        return 1000.0 * self.cpu_s / self.episodes


class SleepyOracle(ScriptedAgent):
    """The oracle, thinking `TURN_S` before every action: a model's latency without a model."""

    def __init__(self) -> None:
        super().__init__("scripted:oracle", scripted_skills("scripted:oracle"))

    async def act(self, observation: Observation) -> Action:
        await asyncio.sleep(TURN_S)
        return await super().act(observation)

    async def reset(self, task: Task, toolbox: Toolbox, *, seed: int) -> None:
        await super().reset(task, toolbox, seed=seed)


async def timed(tasks: list[Task], config: RunConfig, ctx: RolloutContext, **kwargs: object) -> Timing:
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as out:
        wall, cpu = time.perf_counter(), time.process_time()
        report = await Runner(tasks, config, ctx, Path(out), **kwargs).run()  # type: ignore[arg-type]
        return Timing(report.ran, time.perf_counter() - wall, time.process_time() - cpu)


def context(**kwargs: object) -> RolloutContext:
    """A context over a throwaway workspace (removed at exit)."""
    folder = tempfile.TemporaryDirectory(prefix="bench-rollout-ws-")
    _KEEP.append(folder)
    return scratch_context(Path(folder.name), **kwargs)  # type: ignore[arg-type]


_KEEP: list[tempfile.TemporaryDirectory[str]] = []


def episodes_for(tasks: list[Task], n: int) -> tuple[list[Task], int]:
    """Tasks and seeds giving at least n episodes (all tasks, enough seeds; or the first n tasks)."""
    if n <= len(tasks):
        return tasks[:n], 1
    return tasks, -(-n // len(tasks))


async def throughput(tasks: list[Task], seeds: int) -> None:
    print(f"\n1. episodes/s, one at a time: scripted:oracle, policy none, {len(tasks)} tasks x {seeds} seeds")
    print(f"   {'mode':<12} {'episodes/s':>10} {'ms/episode':>11} {'cpu ms/ep':>10}")
    for label, mode, via in (("live", "live", "direct"), ("live/mcp", "live", "mcp"),
                             ("synthesized", "synthesized", "direct")):
        ctx = context(via=via)
        config = RunConfig(agent="scripted:oracle", mode=mode, policy="none", seeds=seeds, concurrency=1, progress=False,
                           summarize=False)
        await timed(tasks[:1], RunConfig(agent="scripted:oracle", mode=mode, policy="none", progress=False), ctx)
        t = await timed(tasks, config, ctx)
        print(f"   {label:<12} {t.per_s:>10.1f} {1000 / t.per_s:>11.1f} {t.cpu_ms:>10.1f}")


async def speedups(tasks: list[Task], levels: tuple[int, ...], variant: str) -> None:
    print(f"\n2. speed-up with {TURN_S * 1000:.0f} ms per turn ({variant}), synthesized mode, policy none")
    print(f"   {'C':>3} {'episodes':>8} {'wall s':>7} {'ep/s':>6} {'speed-up':>8} {'ideal':>5} {'ratio':>6} "
          f"{'cpu ms/ep':>9} {'ceiling':>7}")
    mock.script("slow-agent", busy_actor(calls=2), delay_s=TURN_S)
    base: Timing | None = None
    try:
        for level in levels:
            t = await one_level(tasks, level, variant, warm=base is None)
            base = base or t
            speed = t.per_s / base.per_s
            ceiling = (base.wall_s / base.episodes) / (t.cpu_s / t.episodes)
            print(f"   {level:>3} {t.episodes:>8} {t.wall_s:>7.2f} {t.per_s:>6.1f} {speed:>8.1f} {level:>5} "
                  f"{speed / level:>6.2f} {t.cpu_ms:>9.1f} {ceiling:>7.1f}")
    finally:
        mock.clear()


async def one_level(tasks: list[Task], level: int, variant: str, warm: bool) -> Timing:
    chosen, seeds = episodes_for(tasks, max(8, 3 * level) if level > 1 else 4)
    ctx = context()
    config = RunConfig(agent="scripted:oracle", mode="synthesized", policy="none", seeds=seeds, concurrency=level,
                       progress=False, summarize=False)
    # A gateway per level: its per-model concurrency limit is set by the first call it serves.
    gateway = Gateway(cache_path=None)
    kwargs: dict[str, object] = {"agent_factory": SleepyOracle}
    if variant == "mock LLM":
        config = replace(config, agent="mock/slow-agent", access="full", style="react")
        kwargs = {"gateway": gateway}
    try:
        if warm:  # imports, the engine, the first model call: not part of the measurement
            await timed(chosen[:1], replace(config, seeds=1, concurrency=1), ctx, **kwargs)
        return await timed(chosen, config, ctx, **kwargs)
    finally:
        gateway.close()


async def main(quick: bool) -> None:
    tasks = read_jsonl(FIXTURE, Task)
    await throughput(tasks, 1 if quick else 3)
    levels = (1, 8) if quick else LEVELS
    await speedups(tasks, levels, "mock LLM")
    await speedups(tasks, levels, "sleepy oracle")


if __name__ == "__main__":
    asyncio.run(main("--quick" in sys.argv[1:]))
