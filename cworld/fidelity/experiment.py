"""`cworld fidelity experiment`: run agents live and synthesized on the same tasks, seeds and fault
policy, score both runs, and compare the rankings. How a user checks a new engine, card or model.

    live, synth = await run_experiment(tasks, ExperimentConfig(), RolloutContext(env, ws, tools), out)
    report = build_fidelity(live=live, synth=synth, tools=tools, content=content)

The two runs go to `OUT/live` and `OUT/synthesized` (ordinary run folders, one agent after another);
re-running with the same OUT resumes them. The default agents are the graded scripted agents, whose
order is designed (oracle > noisy-0.1 > ... > no-retry), and eight non-privileged heuristic agents that
differ in strategy, whose order nobody chose: the report's headline ranks those. Scores are the verifiable metrics (`cworld.judges`, offline): judges would add cost, not signal, for
scripted agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from cworld.data_model import Task, ToolSpec
from cworld.engine.protocol import WorldEngine
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.rollout import RolloutContext, RunConfig

MEASURED_AGENTS: tuple[str, ...] = (
    "heuristic:basic",
    "heuristic:careful",
    "heuristic:thorough",
    "heuristic:dense",
    "heuristic:hybrid",
    "heuristic:explorer",
    "heuristic:frugal",
    "heuristic:hasty",
)
"""Non-privileged agents that differ in strategy (docs/agents-and-runs.md): three skill levels, dense and hybrid
retrieval, explore-first, a six-call budget, and ids taken from the latest result with required arguments only.
Their order in either mode is measured: the headline rho of the fidelity report is over them."""
DEFAULT_AGENTS: tuple[str, ...] = (
    "scripted:oracle",
    "scripted:noisy-0.1",
    "scripted:noisy-0.3",
    "scripted:no-replan",
    "scripted:no-look",
    "scripted:no-retry",
    *MEASURED_AGENTS,
)
"""The six scripted agents (privileged: they follow the gold plan, order designed) and the eight heuristic
ones (they plan from the request alone; their order is measured, not designed). The local SmolLM2 agent is
added by `cworld fidelity experiment` when the workspace configures it (`cli/fidelity.py`)."""
ENGINES = ("world", "schema", "llm")
LIVE, SYNTH = "live", "synthesized"


@dataclass
class ExperimentConfig:
    agents: Sequence[str] = field(default_factory=lambda: list(DEFAULT_AGENTS))
    engine: str = "world"
    """`world` (the default engine of a synthesized run), `schema` (the earlier default, for comparison) or
    `llm` (needs a model for the engine role)."""
    seeds: int = 1
    policy: str = "default"
    concurrency: int = 4
    max_turns: int | None = None
    timeout_s: float = 600.0
    progress: bool = True
    executor: str = "local"
    """`local` or `ray`: where both runs' episodes run (see `cworld run --executor`)."""
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"unknown engine {self.engine!r}; use world, schema or llm")
        if len(set(self.agents)) < 3:
            raise UsageError("a fidelity experiment needs at least 3 distinct agents to rank")

    def run_config(self, agent: str, mode: str) -> RunConfig:
        """One agent's run on one side: the settings it shares with the experiment (policy, seeds,
        concurrency, limits, progress) passed through, resumable. Its summary rows are not read back: the
        experiment scores its two folders once they are whole (each run re-read the growing folder)."""
        from cworld.rollout import RunConfig

        names = {f.name for f in fields(RunConfig)}
        shared = {f.name: getattr(self, f.name) for f in fields(self) if f.name in names}
        return RunConfig(agent=agent, mode=mode, resume=True, **{"summarize": False, **shared})


def live_comparable(tasks: Sequence[Task], tools: Mapping[str, ToolSpec]) -> tuple[list[Task], list[str]]:
    """The tasks live mode can run, and the ids of those it cannot: a task naming a schema-only tool (a
    catalog's, with no server) or a tool the environment lacks. Live answers such a tool `unavailable`
    whatever the engine does, so its episodes compare nothing the engine controls; they are set aside
    (and said), not ranked."""
    kept: list[Task] = []
    aside: list[str] = []
    for task in tasks:
        if all(t in tools and tools[t].availability == "live" for t in task.public().tools):
            kept.append(task)
        else:
            aside.append(task.id)
    return kept, aside


def make_engine(
    kind: str, env: Environment, workspace: Workspace, tools: Mapping[str, ToolSpec]
) -> WorldEngine:
    """The world engine (offline, deterministic: a run's default without an engine model), the schema
    engine, or the LLM engine (the engine role's model): the same construction as a run's
    (`controller.build_engine`)."""
    from cworld.controller.factory import build_engine

    return build_engine(kind, env, workspace, tools.values())


async def run_experiment(
    tasks: Sequence[Task], config: ExperimentConfig, live: RolloutContext, out: Path, *, console: Console | None = None
) -> tuple[Path, Path]:
    """Both runs (resumable) and their scores; returns the live and synthesized run folders. `live` holds the
    environment, workspace and tools; the synthesized side is the same context with the World Engine."""
    from cworld.agents import check_agent_name
    from cworld.rollout import Runner

    if not tasks:
        raise UsageError("no tasks for the experiment; give --tasks FILE or create tasks with `cworld synth`")
    for agent in config.agents:
        check_agent_name(agent)
    engine = make_engine(config.engine, live.env, live.workspace, live.tools)
    contexts = {LIVE: live, SYNTH: replace(live, engine=engine, engine_kind=config.engine)}
    folders = {mode: out / mode for mode in contexts}
    for agent in config.agents:  # agent by agent, both modes: a run cut short still holds paired episodes
        for mode, ctx in contexts.items():
            await Runner(tasks, config.run_config(agent, mode), ctx, folders[mode], console=console).run()
    for mode in contexts:
        await _score(folders[mode], live.env, live.tools)
    return folders[LIVE], folders[SYNTH]


async def _score(folder: Path, env: Environment, tools: Mapping[str, ToolSpec]) -> None:
    from cworld.judges import JudgeContent, JudgeSetup, judge_run

    setup = JudgeSetup(
        JudgeContent.from_environment(env),
        tools=tools,
        offline_reason="fidelity experiment: verifiable metrics only",
    )
    await judge_run(folder, setup, resume=True)
