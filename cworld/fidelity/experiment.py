"""`cworld fidelity experiment`: run agents live and synthesized on the same tasks, seeds and fault
policy, score both runs, and compare the rankings. How a user checks a new engine, card or model.

    live, synth = await run_experiment(tasks, ExperimentConfig(), env, ws, out)
    report = build_fidelity(live=live, synth=synth, tools=tools, content=content)

The two runs go to `OUT/live` and `OUT/synthesized` (ordinary run folders, one agent after another);
re-running with the same OUT resumes them. The default agents are the graded scripted agents, whose
order is designed (oracle > noisy-0.1 > ... > no-retry), so a faithful engine must reproduce it.
Scores are the verifiable metrics (`cworld.judges`, offline): judges would add cost, not signal, for
scripted agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from cworld.data_model import Task, ToolSpec
from cworld.engine.protocol import WorldEngine
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError

DEFAULT_AGENTS: tuple[str, ...] = (
    "scripted:oracle",
    "scripted:noisy-0.1",
    "scripted:noisy-0.3",
    "scripted:no-replan",
    "scripted:no-look",
    "scripted:no-retry",
)
ENGINES = ("schema", "llm")
LIVE, SYNTH = "live", "synthesized"


@dataclass
class ExperimentConfig:
    agents: Sequence[str] = field(default_factory=lambda: list(DEFAULT_AGENTS))
    engine: str = "schema"
    seeds: int = 1
    policy: str = "default"
    concurrency: int = 4
    max_turns: int | None = None
    timeout_s: float = 600.0
    progress: bool = True

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"unknown engine {self.engine!r}; use schema or llm")
        if len(set(self.agents)) < 3:
            raise UsageError("a fidelity experiment needs at least 3 distinct agents to rank")


def make_engine(
    kind: str, env: Environment, workspace: Workspace, tools: Mapping[str, ToolSpec]
) -> WorldEngine:
    """The schema engine (offline, deterministic), or the LLM engine when the engine role has a model:
    the same construction as a run's (`controller.build_engine`)."""
    from cworld.controller.factory import build_engine

    return build_engine(kind, env, workspace, tools.values())


async def run_experiment(
    tasks: Sequence[Task],
    config: ExperimentConfig,
    env: Environment,
    workspace: Workspace,
    out: Path,
    tools: Mapping[str, ToolSpec],
    *,
    console: Console | None = None,
) -> tuple[Path, Path]:
    """Both runs (resumable) and their scores; returns the live and synthesized run folders."""
    from cworld.agents import scripted_skills
    from cworld.rollout import RolloutContext

    if not tasks:
        raise UsageError("no tasks for the experiment; give --tasks FILE or create tasks with `cworld synth`")
    for agent in config.agents:
        if agent.startswith("scripted:"):
            scripted_skills(agent)
    engine = make_engine(config.engine, env, workspace, tools)
    contexts = {
        LIVE: RolloutContext(env, workspace, dict(tools)),
        SYNTH: RolloutContext(env, workspace, dict(tools), engine=engine),
    }
    folders = {mode: out / mode for mode in contexts}
    for mode, ctx in contexts.items():
        for agent in config.agents:
            await _run(tasks, config, agent, mode, ctx, folders[mode], console)
        await _score(folders[mode], env, tools)
    return folders[LIVE], folders[SYNTH]


async def _run(
    tasks: Sequence[Task],
    config: ExperimentConfig,
    agent: str,
    mode: str,
    ctx: object,
    folder: Path,
    console: Console | None,
) -> None:
    from cworld.rollout import RunConfig, Runner

    run_config = RunConfig(
        agent=agent,
        mode=mode,
        policy=config.policy,
        seeds=config.seeds,
        concurrency=config.concurrency,
        max_turns=config.max_turns,
        timeout_s=config.timeout_s,
        resume=True,
        progress=config.progress,
    )
    await Runner(tasks, run_config, ctx, folder, console=console).run()  # type: ignore[arg-type]


async def _score(folder: Path, env: Environment, tools: Mapping[str, ToolSpec]) -> None:
    from cworld.judges import JudgeContent, JudgeSetup, judge_run

    setup = JudgeSetup(
        JudgeContent.from_environment(env),
        tools=tools,
        offline_reason="fidelity experiment: verifiable metrics only",
    )
    await judge_run(folder, setup, resume=True)
