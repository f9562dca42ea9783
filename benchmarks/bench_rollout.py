"""Rollout throughput and concurrency (issue 6, "Done when").

Run: `python benchmarks/bench_rollout.py [--quick] [--memory-episodes N] [--memory-policy P]
[--synth-tasks FILE] [--only-storage]`. Prints, in one run:

1. episodes per second, one at a time, for `scripted:oracle` (no LLM) over the hand-made sandbox tasks
   (tests/fixtures/tasks_sandbox.jsonl), policy `none`, through the whole runner (controller, trajectory
   written and fsynced): `live` (sandbox apps in process, the default), `live/mcp` (each app behind an
   in-memory MCP client: the protocol path) and `synthesized` (the schema World Engine);
2. the speed-up at concurrency 1, 8, 32 and 64 when the agent's model takes 200 ms per turn, for the
   `local` executor (one event loop) and the `ray` executor (a local Ray cluster on this machine's cores,
   one actor per core, warm), two ways each:
   - `sleepy oracle`: the scripted oracle thinking 200 ms before each action (no litellm): the runner alone;
   - `mock LLM`: an LLM agent (ReAct, full access) on the production path, gateway -> litellm -> the
     `mock` provider with `delay_s=0.2` (two tool calls and an answer: three 200 ms turns per episode).
   Each level runs 3 x C episodes of one task (4 at C = 1) in synthesized mode, after a warm-up run; speed-up =
   throughput(C) / throughput(1); ideal = C; the goal is speed-up >= 0.8 x ideal. Beside each: the CPU
   time per episode (for Ray: every process of the cluster) and the CPU bound on the speed-up (Amdahl:
   cores x seconds-per-episode / CPU-seconds-per-episode, with one core for the local event loop); a level
   whose bound is under the goal is marked `cpu-bound`.
3. bytes per trajectory line (median, p99) of a synthesized run of the oracle (policy `default`, 3 seeds)
   over 10 offline-synthesized tasks (`cworld synth`'s offline synthesizer, hashing embedder; or
   `--synth-tasks FILE`): before = the old line (the whole `Trajectory`: task, end state), measured by
   serializing the very trajectories read back from the run; after = the compact line on disk (issue 16);
4. the driver's RSS (VmRSS) after 1,000 and after N episodes (`--memory-episodes`, default 10,000; 2,000 with
   `--quick`) of one synthesized run of the oracle over those tasks (policy `default`, or `--memory-policy`), sampled as episodes end, and after the
   run's summary (which reads the whole run back).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psutil

from cworld.agents import Agent, make_agent
from cworld.data_model import Task, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.llm import Gateway, mock
from cworld.rollout import TRAJECTORIES_FILE, RolloutContext, RunConfig, Runner, read_trajectories

TESTS = Path(__file__).resolve().parent.parent / "tests"
FIXTURE = TESTS / "fixtures" / "tasks_sandbox.jsonl"
sys.path.insert(0, str(TESTS))
import rollout_helpers  # noqa: E402  (the tests' helpers, found above)
from rollout_helpers import SleepyOracle, busy_actor, scratch_context  # noqa: E402

MOCK_AGENT = "mock/slow-agent"

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


class MockAgent:
    """The LLM agent (ReAct, full access) on the mock model: gateway -> litellm -> `mock` with 200 ms a call.
    Picklable, and it registers the mock script where it runs (a Ray worker has its own registry)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self.gateway: Gateway | None = None

    def __call__(self) -> Agent:
        if self.gateway is None:
            mock.script("slow-agent", busy_actor(calls=2), delay_s=TURN_S)
            self.gateway = Gateway(cache_path=None)
        return make_agent(MOCK_AGENT, access="full", style="react", gateway=self.gateway, concurrency=self.concurrency)


async def timed(tasks: list[Task], config: RunConfig, ctx: RolloutContext, *, cluster: bool = False,
                **kwargs: Any) -> Timing:
    """Wall and CPU time of one run; `cluster`: the CPU of every process of the local Ray cluster too."""
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as out:
        wall, cpu = time.perf_counter(), cpu_seconds(cluster)
        report = await Runner(tasks, config, ctx, Path(out), **kwargs).run()
        return Timing(report.ran, time.perf_counter() - wall, cpu_seconds(cluster) - cpu)


def cpu_seconds(cluster: bool) -> float:
    """This process's CPU, plus its descendants' (the Ray cluster it started: raylet, GCS, workers)."""
    total = time.process_time()
    if cluster:
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                times = child.cpu_times()
                total += times.user + times.system
    return total


def context(**kwargs: object) -> RolloutContext:
    """A context over a throwaway workspace (removed at exit)."""
    folder = tempfile.TemporaryDirectory(prefix="bench-rollout-ws-")
    _KEEP.append(folder)
    return scratch_context(Path(folder.name), **kwargs)  # type: ignore[arg-type]


_KEEP: list[tempfile.TemporaryDirectory[str]] = []


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


async def speedups(tasks: list[Task], levels: tuple[int, ...], variant: str, executor: str) -> None:
    print(f"\n2. speed-up with {TURN_S * 1000:.0f} ms per turn: {variant}, {executor} executor, synthesized, policy none")
    print(f"   {'C':>3} {'episodes':>8} {'wall s':>7} {'ep/s':>6} {'speed-up':>8} {'ideal':>5} {'ratio':>6} "
          f"{'cpu ms/ep':>9} {'cpu bound':>9}  verdict")
    base: Timing | None = None
    cores = 1 if executor == "local" else (os.cpu_count() or 1)
    for level in levels:
        t = await one_level(tasks, level, variant, executor)
        base = base or t
        speed = t.per_s / base.per_s
        # Amdahl: CPU is the only shared resource left; `cores` CPUs serve the episodes (one event loop, or
        # every process of the Ray cluster), so C at once cannot beat cores x episode time / CPU per episode.
        bound = min(level, cores * (base.wall_s / base.episodes) / (t.cpu_s / t.episodes))
        verdict = "ok" if speed >= 0.8 * level else ("cpu-bound" if bound < 0.8 * level else "below goal")
        print(f"   {level:>3} {t.episodes:>8} {t.wall_s:>7.2f} {t.per_s:>6.1f} {speed:>8.1f} {level:>5} "
              f"{speed / level:>6.2f} {t.cpu_ms:>9.1f} {bound:>9.1f}  {verdict}")


async def one_level(tasks: list[Task], level: int, variant: str, executor: str) -> Timing:
    # One task, 3 x C seeds: every slot runs three episodes of one length, so the ideal is reachable; a mix
    # of task lengths would cap the ratio by its own makespan (the last, partly filled wave), not the runner.
    chosen, seeds = tasks[:1], (3 * level if level > 1 else 4)
    ctx = context()
    config = RunConfig(agent="scripted:oracle", mode="synthesized", policy="none", seeds=seeds, concurrency=level,
                       progress=False, summarize=False)
    factory: Any = functools.partial(SleepyOracle, TURN_S)
    if variant == "mock LLM":
        config = replace(config, agent=MOCK_AGENT, access="full", style="react")
        factory = MockAgent(level)
    # Warm every Ray actor (each imports litellm and builds its engine on its first episode), one episode locally.
    warm = replace(config, seeds=2 * (os.cpu_count() or 1), concurrency=level) if executor == "ray" else \
        replace(config, seeds=1, concurrency=1)
    kwargs: dict[str, Any] = {"agent_factory": factory}
    pool = None
    if executor == "ray":
        from cworld.rollout.executors.ray import RayExecutor, WorkerSpec

        pool = RayExecutor(WorkerSpec.of(ctx, config, factory), level, keep=True)
        kwargs["executor"] = pool
    try:  # the warm-up: imports, the engine, the first model call, the Ray actors: not part of the measurement
        await timed(chosen[:1], warm, ctx, **kwargs)
        return await timed(chosen, config, ctx, cluster=executor == "ray", **kwargs)
    finally:
        if pool is not None:
            pool.close()


def start_ray() -> None:
    """A local Ray cluster on this machine's cores, small enough for a shared 2-core box."""
    import ray

    ray.cloudpickle.register_pickle_by_value(rollout_helpers)  # the workers cannot import tests/
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, object_store_memory=100 * 2**20,
             log_to_driver=False, configure_logging=False)


async def synth_tasks(given: str | None) -> list[Task]:
    """The tasks of sections 3 and 4: a file, or 10 from the offline synthesizer (as `cworld synth --n 10`)."""
    if given:
        return read_jsonl(Path(given), Task)
    from cworld.synth import SynthOptions, prepare, run_prepared

    os.environ.setdefault("CWORLD_EMBED_MODEL", "hash")  # the model-free embedder: same tasks, no model load
    folder = Path(context().workspace.root)
    out = folder / "synth-tasks.jsonl"
    await run_prepared(prepare(Environment.resolve(), Workspace.resolve(folder), SynthOptions(n=10, seed=0), out=out))
    return read_jsonl(out, Task)


def percentile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def line_sizes(tasks: list[Task]) -> None:
    print(f"\n3. bytes per trajectory line: synthesized, scripted:oracle, policy default, {len(tasks)} synth tasks x 3 seeds")
    config = RunConfig(agent="scripted:oracle", mode="synthesized", policy="default", seeds=3, concurrency=4,
                       progress=False, summarize=False)
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as out:
        await Runner(tasks, config, context(), Path(out)).run()
        after = [len(line) + 1 for line in (Path(out) / TRAJECTORIES_FILE).read_bytes().splitlines()]
        before = [len(t.model_dump_json().encode()) + 1 for t in read_trajectories(Path(out))]
        folder = sum(f.stat().st_size for f in Path(out).iterdir())
    print(f"   {'format':<28} {'median':>8} {'p99':>8} {'lines':>6}")
    print(f"   {'before (full Trajectory)':<28} {statistics.median(before):>8.0f} {percentile(before, 0.99):>8} {len(before):>6}")
    print(f"   {'after (compact, schema 2)':<28} {statistics.median(after):>8.0f} {percentile(after, 0.99):>8} {len(after):>6}")
    print(f"   run folder: {folder / 1e6:.2f} MB after (tasks.jsonl included) vs {sum(before) / 1e6:.2f} MB before; "
          f"goal: median <= 25,000 bytes")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def memory(tasks: list[Task], episodes: int, policy: str) -> None:
    seeds = -(-episodes // len(tasks))
    total = seeds * len(tasks)
    print(f"\n4. driver RSS: one synthesized run, scripted:oracle, policy {policy}, {len(tasks)} tasks x {seeds} seeds "
          f"= {total} episodes, concurrency 16", flush=True)
    config = RunConfig(agent="scripted:oracle", mode="synthesized", policy=policy, seeds=seeds, concurrency=16,
                       progress=False)
    marks = sorted({*range(1000, total, 1000), min(1000, total), total})
    seen: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-rollout-") as out:
        runner = Runner(tasks, config, context(), Path(out))

        async def sample() -> None:
            while len(seen) < len(marks):
                done = sum(runner.statuses.values())
                for mark in marks:
                    if done >= mark and mark not in seen:
                        seen[mark] = rss_mb()
                        print(f"   ... {mark} episodes: RSS {seen[mark]:.1f} MB, {time.perf_counter() - wall:.0f} s",
                              flush=True)
                await asyncio.sleep(0.05)

        wall = time.perf_counter()
        sampler = asyncio.create_task(sample())
        report = await runner.run()
        await sampler
        after_summary = rss_mb()
        size = (Path(out) / TRAJECTORIES_FILE).stat().st_size
    print(f"   {'episodes done':>13} {'RSS MB':>8}")
    for mark in (marks[0], marks[-1]):
        print(f"   {mark:>13} {seen[mark]:>8.1f}")
    print(f"   {'+ summary':>13} {after_summary:>8.1f}   (the run read back for the summary table)")
    growth = seen[marks[-1]] / seen[marks[0]] - 1
    print(f"   growth {marks[0]} -> {marks[-1]}: {100 * growth:+.1f}% (goal: within 10%); {report.ran} episodes in "
          f"{time.perf_counter() - wall:.0f} s, trajectories.jsonl {size / 1e6:.1f} MB")


def option(name: str) -> str | None:
    args = sys.argv[1:]
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


async def main(quick: bool) -> None:
    tasks = read_jsonl(FIXTURE, Task)
    await throughput(tasks, 1 if quick else 3)
    levels = (1, 8) if quick else LEVELS
    start_ray()
    for executor in ("local", "ray"):
        await speedups(tasks, levels, "sleepy oracle (the runner alone)", executor)
        await speedups(tasks, levels, "mock LLM", executor)
    await storage(quick)


async def storage(quick: bool) -> None:
    synth = await synth_tasks(option("--synth-tasks"))
    await line_sizes(synth)
    await memory(synth, int(option("--memory-episodes") or (2000 if quick else 10_000)),
                 option("--memory-policy") or "default")


if __name__ == "__main__":
    if "--only-storage" in sys.argv[1:]:  # sections 3 and 4 alone
        asyncio.run(storage("--quick" in sys.argv[1:]))
    else:
        asyncio.run(main("--quick" in sys.argv[1:]))
