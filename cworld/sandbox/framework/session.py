"""A sandbox session: one isolated, seeded world (state of every app + one virtual clock).

One session per episode. Same seed ⇒ same state and same responses. `reset()` returns to the seeded
start. `snapshot()` gives the nested state the state-diff evaluator compares.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cworld.sandbox.framework.app import SandboxApp
from cworld.sandbox.framework.index import Indexes, WorldIndexes
from cworld.sandbox.framework.journal import CallJournal, copied
from cworld.seeding import derive_rng

#: Seconds of virtual time each tool call takes; tokens and deadlines expire against this clock.
SECONDS_PER_CALL = 20


class VirtualClock:
    """The one time every app sees. It starts at a seeded moment and moves only when told."""

    def __init__(self, start: datetime) -> None:
        self._start = start
        self._now = start

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        self._now = self._now + timedelta(seconds=seconds)
        return self._now

    def set(self, moment: datetime) -> None:
        self._now = moment

    def reset(self) -> None:
        self._now = self._start


def plain_copy(value: Any) -> Any:
    """A deep copy of JSON-like state (dicts, lists, scalars), ~8x faster than `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {k: plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [plain_copy(v) for v in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def seeded_start(seed: int) -> datetime:
    rng = derive_rng(seed, "sandbox:clock")
    day = datetime(2026, 3, 2, 9, 0, tzinfo=UTC) + timedelta(days=rng.randrange(0, 180))
    return day.replace(hour=rng.choice([8, 9, 10, 13, 14]), minute=rng.choice([0, 15, 30, 45]))


@dataclass(frozen=True)
class CallCheckpoint:
    """What undoing one write call needs: the app's journal, and the session's counters, time and calls."""

    app: str
    journal: CallJournal
    counters: dict[str, int]
    now: datetime
    calls: int


class SandboxSession:
    """One seeded world over the app classes it is given (callers pass `catalog.all_apps()` for all of them:
    the framework never reaches up to discovery)."""

    def __init__(self, seed: int, apps: Sequence[type[SandboxApp]], world: SandboxWorld | None = None) -> None:
        self.seed = seed
        self.world = world
        """the world this session starts from (`SandboxWorld.session`): its state copied, its indexes shared"""
        self.clock = VirtualClock(seeded_start(seed))
        self.app_types: list[type[SandboxApp]] = list(apps)
        self.apps: dict[str, SandboxApp] = {t.name: t(self) for t in self.app_types}
        self.state: dict[str, dict[str, Any]] = {}
        self._id_counters: dict[str, int] = {}
        self.journals: dict[str, CallJournal] = {}
        """app -> the journal of the write call running on it (its tools then see the state through it)"""
        self.calls = 0
        self.indexes = Indexes()
        """look-ups over the apps' collections (`index.py`), kept true by the write calls' journals"""
        self.reset()

    def reset(self) -> None:
        """Back to the seeded start state: same seed, same world."""
        self.clock.reset()
        self._id_counters = {}
        self.calls = 0
        self.state = {}
        self.indexes = Indexes()
        if self.world is not None:
            self.state = {name: copied(self.world.state[name]) for name in self.apps}
            self._id_counters = dict(self.world.counters)
            maps = {(app, name): raw for app, st in self.state.items() for name, raw in st.items() if type(raw) is dict}
            self.indexes = Indexes(world=self.world.indexes, pristine=maps)
            return
        for name, app in self.apps.items():
            self.state[name] = app.initial_state(derive_rng(self.seed, f"sandbox:state:{name}"))

    def id_counters(self) -> dict[str, int]:
        """Id prefix -> the last number used (a copy): where the session's id sequences continue."""
        return dict(self._id_counters)

    def new_id(self, prefix: str) -> str:
        n = self._id_counters.get(prefix, 0) + 1
        self._id_counters[prefix] = n
        return f"{prefix}_{n:04d}"

    def tick(self) -> None:
        """Called once per tool call by the server adapter: time passes as the agent works."""
        self.calls += 1
        self.clock.advance(SECONDS_PER_CALL)

    def app(self, name: str) -> SandboxApp:
        try:
            return self.apps[name]
        except KeyError:
            raise KeyError(f"no app '{name}' in this session; have {sorted(self.apps)}") from None

    def snapshot(self) -> dict[str, Any]:
        """A deep copy of every stateful app's state (stateless servers hold none)."""
        return {name: copy.deepcopy(st) for name, st in self.state.items() if self.apps[name].stateful}

    def checkpoint(self, app: str | None = None) -> tuple[dict[str, Any], dict[str, int], datetime, int]:
        """What `restore` needs to undo a call. `app` limits the copy to that app's state: a tool call
        writes only its own app's state, and copying one app is several times cheaper than all."""
        state = self.state if app is None else {app: self.state[app]}
        return plain_copy(state), dict(self._id_counters), self.clock.now(), self.calls

    def begin_write(self, app: str) -> CallCheckpoint:
        """Start a write call on `app`: its tools see the state through a journal that keeps what they touch,
        so `undo_write` can put it back; `end_write` closes it either way. Costs what the call touches,
        where `checkpoint` copies the whole app."""
        journal = self.journals[app] = CallJournal(self.state[app])
        return CallCheckpoint(app, journal, dict(self._id_counters), self.clock.now(), self.calls)

    def undo_write(self, cp: CallCheckpoint) -> None:
        """Undo a failed write call: its state changes, id counters and clock."""
        cp.journal.undo()
        self._id_counters = cp.counters
        self.clock.set(cp.now)
        self.calls = cp.calls

    def end_write(self, cp: CallCheckpoint) -> None:
        if self.journals.get(cp.app) is cp.journal:
            del self.journals[cp.app]
        self.indexes.after_write(cp.app, cp.journal)

    def restore(self, cp: tuple[dict[str, Any], dict[str, int], datetime, int]) -> None:
        """Undo a failed call: business errors change nothing, not even the id counters."""
        state, counters, now, calls = cp
        self.state.update(state)
        self._id_counters = counters
        self.clock.set(now)
        self.calls = calls


class SandboxWorld:
    """One world that many sessions start from (one per episode), as a service's database is loaded once:
    its start state and id counters, taken from a session, and its indexes (`WorldIndexes`), each built once,
    on its first use by a session, and shared by all of them. A session that writes a map forks that map's
    indexes (copy on write), so no session sees another's changes. The world's sessions change their state
    only through tool calls (a map changed behind the journals' backs is not theirs to share)."""

    def __init__(self, session: SandboxSession) -> None:
        self.seed = session.seed
        self.app_types = list(session.app_types)
        self.state: dict[str, dict[str, Any]] = {name: copied(st) for name, st in session.state.items()}
        self.counters = session.id_counters()
        self.indexes = WorldIndexes(self.state)

    @classmethod
    def load(cls, seed: int, apps: Sequence[type[SandboxApp]]) -> SandboxWorld:
        """The seeded world of `seed` over `apps` (what `SandboxSession(seed, apps)` starts from)."""
        return cls(SandboxSession(seed, apps))

    def session(self) -> SandboxSession:
        """A new session of this world: its own copy of the state, the world's indexes."""
        return SandboxSession(self.seed, self.app_types, world=self)
