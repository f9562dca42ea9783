"""`synthesize`: the whole of `cworld synth` behind one call (the CLI only parses options and prints).

With a `synth` model (from `--model`, `CWORLD_SYNTH_MODEL` or the workspace config) the LLM drafter is
used, and the model is checked first: a wrong name or an unreachable server fails in one line before any
work. Without one, the offline synthesizer runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cworld.config import ModelConfig, load_models
from cworld.environment import Environment, Workspace
from cworld.synth.dedupe import DuplicateGuard
from cworld.synth.harvest_pool import Theme, load_themes
from cworld.synth.offline import OfflineDrafter
from cworld.synth.offline.templates import Templates
from cworld.synth.options import SynthOptions
from cworld.synth.pipeline import Synthesis
from cworld.synth.samples import SampleAnswers
from cworld.synth.scheduler import Hooks, RunResult, run_synthesis
from cworld.synth.summary import SynthSummary, summarize
from cworld.synth.taxonomy import load_taxonomy
from cworld.synth.toolset import ToolUniverse, load_universe


@dataclass
class Prepared:
    """Everything a run needs, built before the first attempt (so setup errors come first)."""

    synthesis: Synthesis
    guard: DuplicateGuard
    out: Path
    gateway: object | None = None


def synth_model(workspace: Workspace, model: str | None) -> ModelConfig | None:
    """`--model` (with the configured synth entry's or CWORLD_API_BASE's api_base), else the configured
    one.
    """
    configured = load_models(workspace.root).synth
    if model is None:
        return configured
    if configured is not None and configured.model == model:
        return configured
    api_base = (configured.api_base if configured else None) or os.environ.get("CWORLD_API_BASE") or None
    return ModelConfig(
        model=model, api_base=api_base, api_key_env=configured.api_key_env if configured else None
    )


def check_synth_model(cfg: ModelConfig) -> None:
    """A malformed or unknown model string, a missing key, or a model that does not answer: one-line
    errors.
    """
    from cworld.llm import check_model

    check_model(cfg, ping=True, role="synth")


def prepare(
    env: Environment,
    workspace: Workspace,
    options: SynthOptions,
    *,
    model: str | None = None,
    out: Path | None = None,
    check: bool = True,
) -> Prepared:
    cfg = synth_model(workspace, model)
    if cfg is not None and check:
        check_synth_model(cfg)
    taxonomy = load_taxonomy(env.task_synth)
    harvested = options.pool == "harvested"
    universe = load_universe(env, workspace, need_search=not harvested, harvested=harvested)
    engine = _engine(env, workspace, universe) if harvested else None
    if harvested:
        _attach_embedder(universe, workspace)
    if cfg is None and harvested:
        synthesis = _shape_synthesis(env, universe, taxonomy, options, engine)
        gateway = None
    elif cfg is None:
        from cworld.synth.leak import LeakChecker

        offline = OfflineDrafter(universe, options, LeakChecker(universe), Templates.of(env))
        synthesis = Synthesis(universe, taxonomy, options, offline=offline)
        gateway = None
    else:
        from cworld.llm import Gateway
        from cworld.synth.llm_drafter import LLMDrafter, load_prompts

        gateway = Gateway.from_workspace(workspace)
        samples = _samples(env, workspace, universe, options, engine)
        drafter = LLMDrafter(gateway, cfg, taxonomy, load_prompts(env.task_synth), universe.tools, options, samples)
        synthesis = Synthesis(universe, taxonomy, options, llm=drafter, engine=engine,
                              themes=_themes(env) if harvested else None,
                              sampler=_shape_sampler(env, universe, options, engine)[1] if harvested else None)
    guard = DuplicateGuard(
        universe.embedder, cosine=options.duplicate_cosine, jaccard=options.duplicate_jaccard
    )
    if universe.embedder is None:
        guard.fallback_reason = "near-duplicates judged by token Jaccard: no embedding model was available"
    target = out if out is not None else workspace.new_tasks_file()
    if out is not None:
        _prime(guard, out)
        workspace.mark_latest("tasks", out)
    return Prepared(synthesis, guard, target, gateway)


def _shape_synthesis(env: Environment, universe: ToolUniverse, taxonomy: Any, options: SynthOptions,
                     engine: object) -> Synthesis:
    """The offline drafter of the harvested pool: goal shapes (`goal_shapes.py`) over what every harvested
    tool does on the world engine's world (`offline/action_space.py`)."""
    from cworld.synth.leak import LeakChecker
    from cworld.synth.offline.shape_chain import ShapeDrafter

    book, sampler = _shape_sampler(env, universe, options, engine)
    shaper = ShapeDrafter(universe, options, LeakChecker(universe), engine, book)
    return Synthesis(universe, taxonomy, options, shaper=shaper, sampler=sampler, engine=engine)


def _shape_sampler(env: Environment, universe: ToolUniverse, options: SynthOptions, engine: object) -> tuple[Any, Any]:
    """The shapes' phrasebook and the sampler that draws a shape and its tools per attempt (both drafters
    on the harvested pool draw their candidates from it)."""
    from cworld.synth.goal_shapes import ShapeSampler, load_nouns, load_shapes
    from cworld.synth.offline.action_space import ActionSpace
    from cworld.synth.offline.goal_roles import Roles
    from cworld.synth.offline.shape_chain import BOOK
    from cworld.synth.offline.shape_compose import decides

    book = Templates.of(env).book(BOOK)
    tools = [t for t in universe.tools.values() if t.server in universe.harvested]
    space = ActionSpace(engine, tools, Roles(engine))
    affinity: dict[str, set[str]] = {}
    for theme in _themes(env).values():  # cards a person uses together: those of one theme
        for card in theme.cards:
            affinity.setdefault(card, set()).update(theme.cards)
    return book, ShapeSampler(space, load_shapes(book), options.n, load_nouns(book), affinity, decides)


def _themes(env: Environment) -> dict[str, Theme]:
    """The harvested pool's themes: content (`task_synth/templates/harvested.yaml`)."""
    return load_themes(Templates.of(env).book("harvested"))


def _engine(env: Environment, workspace: Workspace, universe: ToolUniverse) -> object:
    """The world engine over the harvested tools, built as a run builds it (`controller.factory.world_engine`:
    the workspace's worlds, the environment's operation rules, the schema engine for tools no rule covers):
    a harvested-pool task is drawn over the world of its seed - the probe composes on it and the gold plan is
    verified on it - so the ids and records its plan names are the ones a synthesized run of it finds
    (deterministic and offline, also when an LLM drafts)."""
    from cworld.controller.factory import world_engine
    from cworld.engine import load_cards

    tools = [t for t in universe.tools.values() if t.server in universe.harvested]
    return world_engine(env, workspace, tools, load_cards(env.category_cards), by_server=True)


def _samples(
    env: Environment, workspace: Workspace, universe: ToolUniverse, options: SynthOptions, engine: object | None
) -> SampleAnswers:
    """Sample answers for the candidates that declare no output schema: the sandbox runs its own tools, the
    run's World Engine (built only if a sample needs it) the rest."""
    from cworld.seeding import derive_seed

    def world() -> object:
        if engine is not None:
            return engine
        from cworld.controller.factory import world_engine
        from cworld.engine import load_cards

        return world_engine(env, workspace, list(universe.tools.values()), load_cards(env.category_cards))

    return SampleAnswers(derive_seed(options.seed, "synth:samples") % 1_000_000, world, universe.executable)


def _attach_embedder(universe: ToolUniverse, workspace: Workspace) -> None:
    """The harvested pool needs no retrieval index (themes and the graph pick bundles); its near-duplicate
    check still wants the embedder, when one loads."""
    from cworld.errors import CworldError

    try:
        from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache
        from cworld.registry.index.embedder import resolve_embedder

        embedder = CachedEmbedder(resolve_embedder(), EmbeddingCache(workspace.cache / "synth_embed.sqlite"))
    except (CworldError, ImportError, OSError, RuntimeError, ValueError) as exc:
        universe.notes.append(f"near-duplicates: no embedder ({str(exc).splitlines()[0][:120]})")
        return
    universe.embedder = embedder


def _prime(guard: DuplicateGuard, out: Path) -> None:
    """Appending to a file that holds tasks already: new tasks must not nearly duplicate those either."""
    from cworld.data_model import Task, read_jsonl

    if out.is_file():
        for task in read_jsonl(out, Task):
            guard.add(task.id, task.query)


async def run_prepared(prepared: Prepared, hooks: Hooks | None = None) -> tuple[RunResult, SynthSummary]:
    try:
        result = await run_synthesis(prepared.synthesis, prepared.out, prepared.guard, hooks)
    finally:
        if prepared.gateway is not None:
            prepared.gateway.close()  # type: ignore[attr-defined]
    return result, summarize(result, prepared.synthesis, prepared.guard, str(prepared.out))


async def synthesize(
    env: Environment,
    workspace: Workspace,
    options: SynthOptions,
    *,
    model: str | None = None,
    out: Path | None = None,
    hooks: Hooks | None = None,
) -> tuple[RunResult, SynthSummary]:
    """Prepare, then run until `options.n` tasks are accepted (or the attempt budget is spent)."""
    return await run_prepared(prepare(env, workspace, options, model=model, out=out), hooks)
