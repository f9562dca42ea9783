"""`build_controller`: a StateController for one (task, mode, policy, agent), with the right backend.

- live: sandbox apps in process (one seeded session per episode) and real servers through a per-episode
  `ServerPool` with fresh scratch space;
- synthesized: the World Engine — the one given (`engine=`), else the LLM engine when the `engine` role
  is configured, else the deterministic schema engine over the environment's category cards;
- hybrid: live where a tool is live, the engine for schema-only tools.
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
from cworld.engine.cards import CategoryCard, load_cards
from cworld.engine.protocol import WorldEngine
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.llm import Gateway

Mode = Literal["live", "synthesized", "hybrid"]
MODES: tuple[str, ...] = ("live", "synthesized", "hybrid")


@cache
def _cards(folder: Path) -> dict[str, CategoryCard]:
    return load_cards(folder)


def default_engine(env: Environment, workspace: Workspace, tools: Iterable[ToolSpec] = (),
                   gateway: Gateway | None = None) -> WorldEngine:
    """The LLM engine when the `engine` role has a model, else the schema engine (offline, deterministic).

    `tools` are registered with the engine (it learns their id formats and can replay a session log). A run
    should build one engine and pass it to every `build_controller` (`engine=`): the LLM engine's cache and
    usage then cover the whole run, and nothing is rebuilt per episode.
    """
    from cworld.config import load_models
    from cworld.engine.schema_engine import SchemaEngine

    cards = _cards(env.category_cards)
    if gateway is not None or load_models(workspace.root).configured("engine"):
        from cworld.engine.llm_engine import LLMEngine
        from cworld.llm import Gateway

        gateway = gateway or Gateway.from_workspace(workspace)
        return LLMEngine(cards, gateway, cards_dir=env.category_cards, tools=tools)
    return SchemaEngine(cards, tools)


def _real_specs(env: Environment) -> dict[str, object]:
    from cworld.registry.manifest import load_manifest

    return {s.id: s for s in load_manifest(env) if s.kind == "real"}


def _needs_real(tools: Mapping[str, ToolSpec]) -> bool:
    return any(t.server_kind == "real" and t.availability == "live" for t in tools.values())


def build_backend(mode: str, *, env: Environment, workspace: Workspace, tools: Mapping[str, ToolSpec],
                  engine: WorldEngine | None = None, episode: str = "episode",
                  resources: LiveResources | None = None, via: Via = "direct") -> Backend:
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    if mode == "synthesized":
        return EngineBackend(engine or default_engine(env, workspace, tools.values()))
    real = None
    if _needs_real(tools):
        real = RealServerBackend(_real_specs(env), workspace, episode=episode, resources=resources)  # type: ignore[arg-type]
    live = LiveBackend(SandboxBackend(via=via), real)
    if mode == "live":
        return live
    return HybridBackend(live, EngineBackend(engine or default_engine(env, workspace, tools.values())))


def build_controller(
    task: Task,
    *,
    mode: str,
    policy: str | Policy,
    seed: int,
    agent: str,
    env: Environment,
    workspace: Workspace,
    tools: Mapping[str, ToolSpec],
    engine: WorldEngine | None = None,
    resources: LiveResources | None = None,
    middlewares: Sequence[Middleware] = (),
    via: Via = "direct",
) -> StateController:
    """A controller ready to `open()`; faults are planned for `seed` already (see `controller.plan`)."""
    chosen = policy if isinstance(policy, Policy) else load_policy(env, policy)
    episode = f"{task.id}-{agent}-{mode}-{chosen.name}"
    backend = build_backend(mode, env=env, workspace=workspace, tools=tools, engine=engine, episode=episode,
                            resources=resources, via=via)
    return StateController(backend, task=task, policy=chosen, agent=agent, tools=tools, seed=seed,
                           middlewares=middlewares)
