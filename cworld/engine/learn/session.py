"""One learning run over a server: its traffic (explored live, or a run's trajectories), the rule the engine
already had for each tool (card family rules and inference, no per-tool file: what learning is measured
against), and the learned rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cworld.data_model import ToolSpec, Trajectory
from cworld.engine.cards.card import CategoryCard
from cworld.engine.learn.learner import Drafter, ServerLearning, learn_server
from cworld.engine.learn.traffic import Traffic, explore_sandbox, from_trajectories
from cworld.engine.rules.spec import Rule
from cworld.errors import UsageError


@dataclass
class Run:
    traffic: Traffic
    learning: ServerLearning
    how: str


def sandbox_apps() -> list[str]:
    from cworld.sandbox.catalog import stateful_apps

    return [a.name for a in stateful_apps()]


def card_rules(server: str, tools: list[ToolSpec], cards: dict[str, CategoryCard],
               seed: int = 0) -> tuple[Callable[[ToolSpec], Rule | None], dict[str, Any]]:
    """The rule the engine gives each tool without a per-tool file, and what it runs with (kinds, consts)."""
    from cworld.engine.rules import RulesEngine
    from cworld.engine.world.build import build_world

    world = build_world(seed, tools, cards, servers=[server])
    engine = RulesEngine(cards, tools, world=world, overrides=False)
    own = world.server(server)
    context: dict[str, Any] = {"kinds": dict(own.kinds), "consts": dict(own.reference)} if own is not None else {}
    return (lambda tool: engine.rule_for(tool)[0]), context


def learn_app(app: str, cards: dict[str, CategoryCard], *, calls: int = 600, seeds: Iterable[int] = (0,),
              explorer: str = "0", drafter: Drafter | None = None) -> Run:
    """Explore a sandbox app live (`calls` per seed) and learn its rules."""
    if app not in sandbox_apps():
        raise UsageError(f"no sandbox app '{app}': learn one of {', '.join(sandbox_apps())} (or --from RUN_DIR)")
    seeds = list(seeds)
    parts = [explore_sandbox(app, seed, calls, explorer) for seed in seeds]
    how = f"the explorer (rng learn:explorer:{app}:{explorer}), {calls} live calls on seed(s) {', '.join(map(str, seeds))}"
    return learned(app, parts, cards, how, drafter)


def learned(server: str, parts: list[Traffic], cards: dict[str, CategoryCard], how: str,
            drafter: Drafter | None = None) -> Run:
    """The rules learned from the traffic of every seed's exploration, against the rules the cards give."""
    traffic = Traffic(server, parts[0].tools, [o for p in parts for o in p.calls])
    base, context = card_rules(server, traffic.tools, cards)
    return Run(traffic, learn_server(traffic, base, context=context, drafter=drafter), how)


def learn_from_run(server: str, trajectories: Iterable[Trajectory], tools: list[ToolSpec],
                   cards: dict[str, CategoryCard], where: str, drafter: Drafter | None = None) -> Run:
    """Learn from a run's recorded calls on `server`, over the world of each episode's seed."""
    from cworld.engine.world.build import build_world

    own = [t for t in tools if t.server == server]
    if not own:
        raise UsageError(f"no tools of server '{server}' in this environment")

    worlds: dict[int, Any] = {}

    def world(seed: int) -> Any:
        if seed not in worlds:
            worlds[seed] = build_world(seed, own, cards, servers=[server]).server(server)
        return worlds[seed]

    def initial(seed: int) -> dict[str, Any] | None:
        found = world(seed)
        return dict(found.state) if found is not None else None

    def reference(seed: int) -> dict[str, Any]:
        found = world(seed)
        return dict(found.reference) if found is not None else {}

    traffic = from_trajectories(trajectories, server, own, initial, reference)
    if not traffic.calls:
        raise UsageError(f"{where} holds no live calls of server '{server}'")
    base, context = card_rules(server, own, cards)
    return Run(traffic, learn_server(traffic, base, context=context, drafter=drafter),
               f"{len(traffic.calls)} recorded calls in {where}")
