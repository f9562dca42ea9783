"""`build_controller`: a StateController for one (task, mode, policy, agent), with the right backend.

- live: sandbox apps in process (one seeded session per episode) and real servers through a per-episode
  `ServerPool` with fresh scratch space;
- synthesized: the World Engine — the one given (`engine=`), else the LLM engine on the seed's world when
  the `engine` role is configured, else the deterministic world engine (`RulesEngine`: every call an
  operation on the seed's world, which exists before any task and never reads it); every episode's session
  carries the task's public part, which only the schema engine (`--engine schema`) grounds in and the LLM
  engine shows its model;
- hybrid: live where a tool is live, the engine for schema-only tools.

`build_engine` is the one place an engine is made (runs, `cworld fidelity experiment`, `cworld.make`):
always with the environment's cards and the run's tools, so it knows their id formats and can replay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from cworld.controller.backend import Backend
from cworld.controller.backends import (
    EngineBackend,
    HybridBackend,
    LiveBackend,
    LiveResources,
    RealServerBackend,
    SandboxBackend,
)
from cworld.controller.backends.sandbox import Via
from cworld.controller.controller import StateController
from cworld.controller.middleware import Middleware
from cworld.controller.policy import Policy, load_policy
from cworld.data_model import Task, ToolSpec
from cworld.engine.cards.card import CategoryCard, load_cards
from cworld.engine.protocol import WorldEngine
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.llm import Gateway

Mode = Literal["live", "synthesized", "hybrid"]
MODES: tuple[str, ...] = ("live", "synthesized", "hybrid")
ENGINE_KINDS: tuple[str, ...] = ("auto", "world", "schema", "llm")


@cache
def _cards(folder: Path) -> dict[str, CategoryCard]:
    return load_cards(folder)


def build_engine(kind: str, env: Environment, workspace: Workspace, tools: Iterable[ToolSpec],
                 gateway: Gateway | None = None) -> WorldEngine:
    """`world`: operations on the seed's world by declared rules (offline, deterministic); `schema`: the
    schema engine alone (the earlier default, kept for comparison); `llm`: the model of the `engine` role
    writing answers on the same world (a one-line UsageError when none is configured); `auto`: `llm` when a
    model (or `gateway`) is there, else `world`.

    `tools` are registered with the engine (it learns their id formats and can replay a session log). A run
    builds one engine and passes it to every `build_controller` (`engine=`): the LLM engine's cache and
    usage then cover the whole run, and nothing is rebuilt per episode."""
    from cworld.config import load_models
    from cworld.engine.schema.engine import SchemaEngine

    if kind not in ENGINE_KINDS:
        raise UsageError(f"unknown engine {kind!r}; use one of: {', '.join(ENGINE_KINDS)}")
    cards, tools = _cards(env.category_cards), list(tools)
    configured = gateway is not None or load_models(workspace.root).configured("engine")
    if kind == "llm" and not configured:
        raise UsageError("--engine llm needs a model for the engine role; set CWORLD_ENGINE_MODEL "
                         "(or models.yaml in the workspace), or use --engine schema")
    if kind == "schema":
        return SchemaEngine(cards, tools)
    world = world_engine(env, workspace, tools, cards)
    if kind == "world" or not configured:
        return world
    from cworld.engine.llm.engine import LLMEngine
    from cworld.engine.llm.settings import load_engine_settings
    from cworld.llm import Gateway

    return LLMEngine(cards, gateway or Gateway.from_workspace(workspace), cards_dir=env.category_cards, tools=tools,
                     world=world, settings=load_engine_settings(workspace.root))


def world_engine(env: Environment, workspace: Workspace, tools: list[ToolSpec],
                 cards: dict[str, CategoryCard], *, by_server: bool = False) -> WorldEngine:
    """The rules engine over the workspace's worlds (built on first use per seed, then loaded), the
    environment's operation rules (`category_cards/_operations/`), and the schema engine for tools no rule
    covers. Each seed's world is loaded (or built and saved) one server at a time, when a call first reaches
    it (`ServerByServerWorld`: the same records as building them all, but a run over 321 harvested servers
    builds the few its episodes reach); the sandbox apps are loaded at once, since the grader reads their
    state, unless `by_server` (the harvested-pool synthesizer: its end states hold only the servers reached)."""
    from cworld.engine.rules import RulesEngine
    from cworld.engine.rules.spec import load_operations
    from cworld.engine.schema.engine import SchemaEngine
    from cworld.engine.world.base import World
    from cworld.engine.world.build import ServerByServerWorld, stateful_apps

    apps = [] if by_server else list(stateful_apps())

    def worlds(seed: int) -> World:
        return ServerByServerWorld(workspace, seed, tools, cards, preload=apps)

    return RulesEngine(cards, tools, worlds=worlds, operations=load_operations(env.category_cards / "_operations",
                                                                       workspace.root / "learned"),
                       fallback=SchemaEngine(cards, tools))


def default_engine(env: Environment, workspace: Workspace, tools: Iterable[ToolSpec] = (),
                   gateway: Gateway | None = None) -> WorldEngine:
    """The LLM engine when the `engine` role has a model, else the world engine (`build_engine("auto")`)."""
    return build_engine("auto", env, workspace, tools, gateway)


def _real_specs(env: Environment) -> dict[str, object]:
    from cworld.registry.manifest import load_manifest

    return {s.id: s for s in load_manifest(env) if s.kind == "real"}


def _needs_real(tools: Mapping[str, ToolSpec]) -> bool:
    return any(t.server_kind == "real" and t.availability == "live" for t in tools.values())


def build_backend(mode: str, *, env: Environment, workspace: Workspace, tools: Mapping[str, ToolSpec],
                  engine: WorldEngine | None = None, episode: str = "episode",
                  resources: LiveResources | None = None, via: Via = "direct", task: Task | None = None,
                  on_model_failure: str = "infra") -> Backend:
    """`task` gives the engine its public part (`task.public()`: synthesized and hybrid modes); the engine
    never gets the task itself, so it cannot read the gold plan, hints or ground truth. `on_model_failure`:
    what an engine whose model fails mid-run does (`EngineBackend`)."""
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    context = task.public() if task is not None else None
    if mode == "synthesized":
        return EngineBackend(engine or default_engine(env, workspace, tools.values()), context=context,
                             on_model_failure=on_model_failure)
    real = None
    if _needs_real(tools):
        real = RealServerBackend(_real_specs(env), workspace, episode=episode, resources=resources)  # type: ignore[arg-type]
    live = LiveBackend(SandboxBackend(via=via), real)
    if mode == "live":
        return live
    simulated = EngineBackend(engine or default_engine(env, workspace, tools.values()), context=context,
                              on_model_failure=on_model_failure)
    return HybridBackend(live, simulated)


def build_controller(
    task: Task,
    *,
    mode: str,
    policy: str | Policy,
    seed: int,
    agent: str,
    env: Environment,
    world_seed: int | None = None,
    workspace: Workspace,
    tools: Mapping[str, ToolSpec],
    engine: WorldEngine | None = None,
    resources: LiveResources | None = None,
    middlewares: Sequence[Middleware] = (),
    via: Via = "direct",
    on_model_failure: str = "infra",
) -> StateController:
    """A controller ready to `open()`; faults are planned for `seed` already (see `controller.plan`).
    `world_seed` fixes the seed the backend's world opens at (a task's world); None: the episode seed."""
    chosen = policy if isinstance(policy, Policy) else load_policy(env, policy)
    episode = f"{task.id}-{agent}-{mode}-{chosen.name}"
    backend = build_backend(mode, env=env, workspace=workspace, tools=tools, engine=engine, episode=episode,
                            resources=resources, via=via, task=task, on_model_failure=on_model_failure)
    return StateController(backend, task=task, policy=chosen, agent=agent, tools=tools, seed=seed,
                           world_seed=world_seed, middlewares=middlewares)
