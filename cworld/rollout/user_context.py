"""What the agent is told of its user: the world's date and time, and who the user is.

Both come from the world of the task's seed, never from the task's answer key. The clock is the one the
episode's servers see: the seed's clock start (the sandbox apps' and the world engine's); with the schema
engine alone (synthesized mode, `--engine schema`) the day the public task states, as that engine reads
it. The user is the world's "you": the person the sandbox apps' mail, calendar and chat belong to.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from cworld.agents.base import UserContext
from cworld.data_model import Task
from cworld.engine.protocol import WorldEngine
from cworld.engine.world.task import TaskText
from cworld.sandbox.framework.session import seeded_start
from cworld.sandbox.framework.world import cast
from cworld.schemas.plausible import EPOCH

USER_FIELDS = ("name", "email", "title", "department", "company", "city", "country", "timezone")
"""The user's profile as the agent is told it (the world's person record holds more: ids, a phone)."""


def user_context(task: Task, mode: str, engine: WorldEngine | None) -> UserContext:
    return UserContext(now=world_clock(task, mode, engine), user=dict(_user(task.initial_state_seed)))


@lru_cache(maxsize=256)
def _user(seed: int) -> dict[str, str]:
    """The world's "you" for a seed, once: the cast is copied whole to read it (a server's every reset)."""
    me = cast(seed)["me"]
    return {k: str(me[k]) for k in USER_FIELDS if me.get(k)}


def world_clock(task: Task, mode: str, engine: WorldEngine | None) -> datetime:
    """The moment the episode's world starts at."""
    if mode == "synthesized" and engine is not None and getattr(engine, "name", "") == "schema":
        return TaskText(task.public()).clock() or EPOCH
    return seeded_start(task.initial_state_seed)
