"""What the task's world offers that the seed's world does not hold: the flights a task's search finds.

A travel service answers a flight search from schedules and fares it computes; the seed's world holds routes,
not flights. The task's public scenario names the offers its world presumes (`travel/flight/EL424-20260423
{depart_at, fare, ...}`), and the schema engine answers searches from them (`world/grounding.py`, rule 1). A
booking of one of them must cost what the search quoted and start when it departs, so the rules read the same
offers: each server's scenario entities of a kind its state holds no collection of, keyed by id, read only
under `TASK` (`records_of('flight')` finds them after the world's own reference catalogs).
"""

from __future__ import annotations

from typing import Any

from cworld.data_model import PublicTask
from cworld.engine.world.base import World
from cworld.engine.world.build import collection_name

#: The constant under which a rule reads the task's offers (`TASK.flights`).
TASK = "TASK"


def offers(context: PublicTask | None, world: World) -> dict[str, dict[str, Any]]:
    """Server -> `{TASK: {<kind's collection>: {id: attributes}}}` for the scenario's entities of kinds the
    server's state holds no collection of; {} where the task has no scenario."""
    if context is None:
        return {}
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for entity in context.scenario.entities:
        base = world.server(entity.app)
        if base is None or entity.id is None or _held(entity.kind, base.state, base.kinds):
            continue
        found.setdefault(entity.app, {}).setdefault(collection_name(entity.kind), {})[entity.id] = dict(entity.attributes)
    return {server: {TASK: catalogs} for server, catalogs in found.items()}


def _held(kind: str, state: dict[str, Any], kinds: dict[str, str]) -> bool:
    """Whether the server's state keeps records of `kind` itself (then they, not the scenario, are the world)."""
    return kind in kinds or collection_name(kind) in state or kind in state
