"""Does a synthesized world behave like the live one off the gold path? Verdicts and end states, per app.

Run: `python benchmarks/world_fidelity.py [--engine schema world world-cards] [--seeds 0 1 2]
[--calls-per-app 40] [--apps mail shop ...] [--repeats 3] [--scale-budget 5] [--no-briefing] [--json PATH]`.
About a minute with the defaults (3 seeds x 9 stateful apps x 40 calls, every engine that can be built).

1. Explore live. A seeded explorer that follows no plan (`_explorer.py`, rng `bench:explorer:<app>`)
   calls one sandbox app's tools, reads and writes, with references it saw in earlier answers or made up,
   in a fresh `SandboxSession(seed, all_apps())` per (seed, app), through the app's server the way the
   sandbox backend calls it (`call_tool_sync`, then `to_tool_result`). It knows the user's credentials, as
   a task would state them (`told`; `--no-briefing`: it does not, and every login fails). Recorded: each
   call's tool, arguments and result (verdict, error class), and the app's state before and after.
2. Replay the same calls, in order, through an engine, in one `SessionLog` per (seed, app), recording each
   answer as the synthesized backend does. Values are translated (`Translation`): what each side answered
   that was new to it is paired, answer key by answer key; when live answered X (a created id, a token)
   and the engine Y, later arguments equal to X are given as Y, as an explorer in synthesized mode would
   have passed what the engine showed it, and live's end state is read with the engine's ids. Engines
   (`--engine`):
   - `schema`: today's default, `build_engine("schema", ...)`, each session's public task carrying a
     scenario of the whole seeded state (`synth.scenario.state_scenario`); its end state is its change
     set (`world_changes` -> `change_set`) overlaid on the initial state (`overlay.actual_state`);
   - `world`, `world-cards`: `engine.rules.RulesEngine(cards, tools, world=build_world(seed, tools, cards),
     operations=category_cards/_operations, overrides=True|False, fallback=SchemaEngine)` as
     `controller.factory.world_engine` builds it (`world-cards`: without the per-tool rules, card rules
     only); end state `engine.end_state(session)[app]`;
   - `world-learned`: the same engine with each app's rules learned from its own traffic (`cworld world learn`:
     the learner's explorer, rng `learn:explorer:<app>:0`, `--learn-calls` live calls on each of
     `--learn-seeds`, 0 and 1), loaded as `SERVER.learned.yaml` files are. Measure it on other seeds (2): on
     the seeds it learned from, agreement would hold by construction, and the run says so.
3. Per app and ALL, per engine: verdict agreement (is_error as live), error-class agreement where both
   erred, full agreement (same verdict and, for an error, same class); end state: the leaves
   (`collection/key/field...`) that differ from the initial state, ignoring the app's `volatile_paths`
   and the state diff's volatile keys (timestamps, tokens); R_c = share of live's changed leaves the
   engine reproduced with the same value (after id translation); unwanted = changed leaves the engine
   made that live did not, as a share of live's changed leaves; equal end states per (seed, app).
4. Speed: CPU time (`time.process_time`, best of `--repeats`) of the same calls live and through the
   engine (its answers and log entries, the translated arguments). For the first world engine also the
   first seed's calls in a world of 100 records per collection against 10,000 (records cloned under new
   keys of the same shape; empty collections stay empty), the ratio of per-call time; the large world's
   replay runs once per app under `--scale-budget` CPU seconds, and a replay cut there gives a lower bound.
   Each timed replay starts after a full garbage collection (`collected`), so the collection owed for
   building the world is not charged to its calls. `--live-scale` times the live apps the same way, three
   figures (`live_scale`): a world's first session (its calls build the indexes), a session of a world
   loaded by six sessions of other calls (its indexes shared, `SandboxWorld`), and the world's load (the
   CPU of its index builds); the 3x target is read on the second (docs/world-engine.md, "Worlds of real
   size").
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import fnmatch
import gc
import json
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from _explorer import Call, Explorer, briefing

from cworld.controller.backends.sandbox import to_tool_result
from cworld.data_model import PublicTask, Scenario, ToolResult, ToolSpec
from cworld.engine.protocol import SessionLog, WorldEngine, canonical_json
from cworld.sandbox.framework.app import SandboxApp
from cworld.sandbox.statediff.models import DEFAULT_VOLATILE_KEYS, GENERATED_ID_PATTERN
from cworld.sandbox.statediff.tree import glob_to_regex
from cworld.schemas.walk import result_value
from cworld.seeding import derive_rng

ENGINES = ("schema", "world", "world-cards", "world-learned")
DEFAULT_ENGINES = ("schema", "world", "world-cards")
SCALES = (100, 10_000)
ABSENT = "<absent>"
_ID_KEY = re.compile(r"(^|[._])([a-z]+_)?(id|token)$")
_GENERATED_ID = re.compile(GENERATED_ID_PATTERN)
_VOLATILE_KEY = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in DEFAULT_VOLATILE_KEYS), re.IGNORECASE)


# --- 1. live ---------------------------------------------------------------------------------------------
@dataclass
class Episode:
    """One (seed, app): the explorer's calls as live answered them, and the app's state before and after."""

    seed: int
    app: type[SandboxApp]
    calls: list[Call]
    initial: dict[str, Any]
    end: dict[str, Any]
    live_s: float = 0.0

    @property
    def name(self) -> str:
        return self.app.name


def explore_live(seed: int, app: type[SandboxApp], calls: int, *, brief: bool = True, session: Any = None,
                 stream: str = "bench:explorer") -> Episode:
    """`calls` explorer calls on a fresh session (or `session`), through the app's server as the sandbox
    backend calls it; with `brief`, the explorer knows the user's own credentials, as a task would state them
    (`told`). `stream` names the explorer's RNG stream (another one draws other calls)."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import build_server, tool_specs
    from cworld.sandbox.framework.session import SandboxSession, plain_copy

    session = session or SandboxSession(seed, all_apps())
    server = build_server(session, app.name)
    initial = plain_copy(session.state[app.name])
    explorer = Explorer(tool_specs(app), derive_rng(seed, f"{stream}:{app.name}"), session.clock.now(),
                        briefing=told(initial) if brief else None)
    out: list[Call] = []
    for _ in range(calls):
        tool, arguments = explorer.next_call()
        started = time.perf_counter()
        raw = server.call_tool_sync(tool.name, copy.deepcopy(arguments))
        result = to_tool_result(raw, (time.perf_counter() - started) * 1000.0)
        explorer.observe(tool, result)
        out.append(Call(tool, arguments, result))
    return Episode(seed, app, out, initial, plain_copy(session.state[app.name]))


def told(state: dict[str, Any]) -> dict[str, Any]:
    """What a task tells its agent about the account (`bank customer CU-646655, PIN 4154`, a shop login, an
    account password, a chat handle), so the explorer reaches what lies behind a login as an agent with a
    task does (`_explorer.briefing`)."""
    return briefing(state)


def live_seconds(episode: Episode, repeats: int) -> float:
    """CPU time of the episode's calls on a fresh session (built outside the timing), best of `repeats`."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import build_server
    from cworld.sandbox.framework.session import SandboxSession

    best = float("inf")
    for _ in range(repeats):
        server = build_server(SandboxSession(episode.seed, all_apps()), episode.name)
        started = time.process_time()
        for call in episode.calls:
            to_tool_result(server.call_tool_sync(call.tool.name, copy.deepcopy(call.arguments)), 0.0)
        best = min(best, time.process_time() - started)
    return best


# --- 2. engines --------------------------------------------------------------------------------------------
class Subject(Protocol):
    """An engine under test: how it is built for a seed, how its sessions open, what its end state is."""

    name: str

    def engine(self, seed: int) -> WorldEngine: ...

    def session(self, seed: int) -> SessionLog: ...

    def end_state(self, engine: WorldEngine, session: SessionLog, episode: Episode) -> dict[str, Any]: ...


@dataclass
class Env:
    """What every subject is built from: the environment's cards and every sandbox tool."""

    cards: dict[str, Any]
    tools: list[ToolSpec]
    env: Any
    workspace: Any

    @classmethod
    def resolve(cls) -> Env:
        from cworld.engine.cards.card import load_cards
        from cworld.environment import Environment, Workspace
        from cworld.sandbox.catalog import all_apps
        from cworld.sandbox.framework.server import tool_specs

        env, ws = Environment.resolve(), Workspace.resolve()
        return cls(load_cards(env.category_cards), [t for a in all_apps() for t in tool_specs(a)], env, ws)


@dataclass
class SchemaSubject:
    """Today's default engine, grounded in a scenario of the whole seeded state."""

    setup: Env
    name: str = "schema"
    _engine: Any = None
    _scenarios: dict[int, Scenario] = field(default_factory=dict)

    def engine(self, seed: int) -> WorldEngine:
        from cworld.controller.factory import build_engine

        if self._engine is None:
            self._engine = build_engine("schema", self.setup.env, self.setup.workspace, self.setup.tools)
        return self._engine

    def session(self, seed: int) -> SessionLog:
        task = PublicTask(id="world-fidelity", query="", scenario=self.scenario(seed))
        return SessionLog(seed=seed, context=task)

    def scenario(self, seed: int) -> Scenario:
        from cworld.sandbox.catalog import all_apps
        from cworld.sandbox.framework.session import SandboxSession
        from cworld.synth.scenario import sandbox_kinds, state_scenario

        if seed not in self._scenarios:
            live = SandboxSession(seed, all_apps())
            self._scenarios[seed] = state_scenario(live.snapshot(), sandbox_kinds(), today=live.clock.now().isoformat())
        return self._scenarios[seed]

    def end_state(self, engine: WorldEngine, session: SessionLog, episode: Episode) -> dict[str, Any]:
        from cworld.controller.backends.endstate import change_set
        from cworld.sandbox.statediff.overlay import actual_state

        changes = change_set(engine.world_changes(session))  # type: ignore[attr-defined]
        return actual_state({episode.name: episode.initial}, changes).get(episode.name, {})


@dataclass
class WorldSubject:
    """The rules engine over the seed's world (`overrides`: with the per-tool overrides, else card rules)."""

    setup: Env
    overrides: bool
    name: str = "world"
    _engines: dict[int, Any] = field(default_factory=dict)
    _worlds: dict[int, Any] = field(default_factory=dict)
    _parts: tuple[Any, Any] | None = None
    """the operation rules and the fallback schema engine, loaded once"""

    def world(self, seed: int) -> Any:
        from cworld.engine.world.build import build_world

        if seed not in self._worlds:
            self._worlds[seed] = build_world(seed, self.setup.tools, self.setup.cards)
        return self._worlds[seed]

    def engine(self, seed: int, world: Any = None) -> WorldEngine:
        from cworld.engine.rules import RulesEngine
        from cworld.engine.rules.spec import load_operations
        from cworld.engine.schema.engine import SchemaEngine

        if world is not None:  # as `controller.factory.world_engine` builds it, over this world
            if self._parts is None:
                self._parts = (load_operations(self.setup.env.category_cards / "_operations"),
                               SchemaEngine(self.setup.cards, self.setup.tools))
            operations, fallback = self._parts
            return RulesEngine(self.setup.cards, self.setup.tools, world=world, overrides=self.overrides,
                               operations=operations, fallback=fallback)
        if seed not in self._engines:
            self._engines[seed] = self.engine(seed, self.world(seed))
        return self._engines[seed]

    def session(self, seed: int) -> SessionLog:
        return SessionLog(seed=seed)

    def end_state(self, engine: WorldEngine, session: SessionLog, episode: Episode) -> dict[str, Any]:
        return engine.end_state(session).get(episode.name, {})  # type: ignore[attr-defined]


@dataclass
class LearnedSubject(WorldSubject):
    """The rules engine with per-tool rules learned from each app's traffic on other seeds (`cworld world
    learn`), loaded from the files learning writes; tools it proposes nothing for keep the card rules."""

    apps: list[str] = field(default_factory=list)
    learn_seeds: list[int] = field(default_factory=lambda: [0, 1])
    learn_calls: int = 600
    learn_s: dict[str, float] = field(default_factory=dict)
    _operations: Any = None

    def engine(self, seed: int, world: Any = None) -> WorldEngine:
        from cworld.engine.rules import RulesEngine
        from cworld.engine.schema.engine import SchemaEngine

        if world is None:
            if seed not in self._engines:
                self._engines[seed] = self.engine(seed, self.world(seed))
            return self._engines[seed]
        return RulesEngine(self.setup.cards, self.setup.tools, world=world, overrides=True,
                           operations=self.operations(), fallback=SchemaEngine(self.setup.cards, self.setup.tools))

    def operations(self) -> Any:
        """Learn every app once (timed), write the files, load them as a run does."""
        import tempfile

        from cworld.engine.learn.files import document, write
        from cworld.engine.learn.session import learn_app
        from cworld.engine.rules.spec import load_operations

        if self._operations is None:
            folder = Path(tempfile.mkdtemp(prefix="learned-"))
            for app in self.apps:
                started = time.perf_counter()
                run = learn_app(app, self.setup.cards, calls=self.learn_calls, seeds=self.learn_seeds, explorer="0")
                self.learn_s[app] = time.perf_counter() - started
                write(document(run.learning, run.how), folder / f"{app}.learned.yaml")
            self._operations = load_operations(folder / "none", folder)
            print(f"learned in {folder}: " + ", ".join(f"{a} {t:.1f} s" for a, t in self.learn_s.items()))
        return self._operations


def subjects(names: Iterable[str], setup: Env, apps: list[str] | None = None, learn_seeds: list[int] | None = None,
             learn_calls: int = 600) -> tuple[list[Subject], list[str]]:
    """The engines asked for that can be built here, and a note for each that cannot."""
    out: list[Subject] = []
    notes: list[str] = []
    for name in names:
        if name == "schema":
            out.append(SchemaSubject(setup))
            continue
        if name == "world-learned":
            out.append(LearnedSubject(setup, overrides=True, name=name, apps=list(apps or []),
                                      learn_seeds=list(learn_seeds or [0, 1]), learn_calls=learn_calls))
            continue
        why = world_engine_missing()
        if why:
            notes.append(f"{name}: not measured, {why}")
        else:
            out.append(WorldSubject(setup, overrides=name == "world", name=name))
    return out, notes


def world_engine_missing() -> str | None:
    """Why the world engines cannot be built yet (their modules are being written), else None."""
    try:
        from cworld.engine.rules import RulesEngine  # noqa: F401
        from cworld.engine.world.build import build_world  # noqa: F401
    except ImportError as exc:
        return (f"the world engine is not importable yet ({exc}); it needs cworld.engine.rules.RulesEngine"
                "(cards, tools, world=, overrides=) with end_state(session) and "
                "cworld.engine.world.build.build_world(seed, tools, cards)")
    return None


# --- 2b. replay and value translation ----------------------------------------------------------------------
@dataclass
class Replay:
    """An episode through an engine: its answers, the (translated) arguments it was given, its end state."""

    results: list[ToolResult]
    arguments: list[dict[str, Any]]
    end: dict[str, Any]
    ids: dict[str, str]
    """live value -> the engine's, for arguments"""
    created: dict[str, str]
    """live id -> the engine's, for end states (`ids` and the ids of records made but never named again)"""
    engine_s: float = 0.0


async def replay(subject: Subject, episode: Episode) -> Replay:
    """The episode's calls in order through the subject's engine, in one session, translating values."""
    engine, session = subject.engine(episode.seed), subject.session(episode.seed)
    later = later_strings([c.arguments for c in episode.calls])
    values = Translation(known=strings_in(episode.initial))
    results, arguments = [], []
    for i, call in enumerate(episode.calls):
        args = translated(call.arguments, values.ids)
        result = await engine.respond(call.tool, args, session)
        session.record(call.tool.id, args, result)
        values.learn(call.result, result, later[i])
        results.append(result)
        arguments.append(args)
    end = subject.end_state(engine, session, episode)
    return Replay(results, arguments, end, values.ids, {**values.created, **values.ids})


async def engine_seconds(engine: WorldEngine, opened: Callable[[], SessionLog], episode: Episode,
                         arguments: list[dict[str, Any]], repeats: int, limit: int | None = None) -> float:
    """CPU time of the engine answering the replayed calls (the first `limit`) in a fresh session (and
    logging them), best of `repeats`."""
    times = [(await timed_replay(engine, opened(), episode.calls[:limit], arguments))[0] for _ in range(repeats)]
    return min(times)


class OverBudget(BaseException):
    """A timed replay used up its CPU budget (a BaseException: code that catches every Exception lets it through)."""


@contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """Raise `OverBudget` in the block once it has used `seconds` of CPU time (None: no limit)."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


async def timed_replay(engine: WorldEngine, session: SessionLog, calls: list[Call], arguments: list[dict[str, Any]],
                       budget: float | None = None) -> tuple[float, int, bool]:
    """(CPU seconds, calls answered, all answered) of the calls in `session`, stopped at `budget` seconds."""
    started, done = time.process_time(), 0
    try:
        with cpu_budget(budget):
            for call, args in zip(calls, arguments, strict=False):
                result = await engine.respond(call.tool, args, session)
                session.record(call.tool.id, args, result)
                done += 1
    except OverBudget:
        return time.process_time() - started, done, False
    return time.process_time() - started, done, True


def strings_in(value: Any) -> set[str]:
    """Every string a JSON value holds, keys included."""
    out: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, dict):
            out.update(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def later_strings(arguments: list[dict[str, Any]]) -> list[set[str]]:
    """For each call, the strings the calls after it pass."""
    out: list[set[str]] = []
    seen: set[str] = set()
    for args in reversed(arguments):
        out.append(set(seen))
        seen |= strings_in(args)
    return out[::-1]


def translated(value: Any, ids: dict[str, str]) -> Any:
    """`value` with every string (and key) that `ids` maps replaced."""
    if not ids:
        return value
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {ids.get(k, k): translated(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [translated(v, ids) for v in value]
    return value


def answer_leaves(value: Any, path: str = "$") -> dict[str, Any]:
    """JSON path -> scalar of an answer."""
    if isinstance(value, dict):
        return {p: v for k, sub in value.items() for p, v in answer_leaves(sub, f"{path}.{k}").items()}
    if isinstance(value, list):
        return {p: v for i, sub in enumerate(value) for p, v in answer_leaves(sub, f"{path}[{i}]").items()}
    return {path: value}


@dataclass
class Translation:
    """Live values -> the engine's: what each side answered that was new to it (not in the initial state,
    not in an earlier answer of its own) is paired in order, answer key by answer key (list positions
    left out, so a page that also shows older records still pairs the new one)."""

    known: set[str]
    ids: dict[str, str] = field(default_factory=dict)
    """for arguments: the live values a later call passes (a created id, a token)"""
    created: dict[str, str] = field(default_factory=dict)
    """for end states: every new id under an id key (a record nobody named again too)"""
    _live: set[str] = field(default_factory=set)
    _engine: set[str] = field(default_factory=set)

    def learn(self, live: ToolResult, synthesized: ToolResult, wanted: set[str]) -> None:
        if not live.is_error and not synthesized.is_error:
            theirs = new_strings(result_value(synthesized), self.known | self._engine)
            for path, values in new_strings(result_value(live), self.known | self._live).items():
                for value, other in zip(values, theirs.get(path, []), strict=False):
                    self._pair(path, value, other, wanted)
        self._live |= strings_in(result_value(live))
        self._engine |= strings_in(result_value(synthesized))

    def _pair(self, path: str, value: str, other: str, wanted: set[str]) -> None:
        if value == other:
            return
        id_key, id_like = _ID_KEY.search(path) is not None, _GENERATED_ID.search(value) is not None
        if value in wanted and (id_key or id_like):
            self.ids.setdefault(value, other)
        if id_key and id_like:
            self.created.setdefault(value, other)


def new_strings(value: Any, seen: set[str]) -> dict[str, list[str]]:
    """Answer key path (list positions as `[]`) -> the strings there not in `seen`, in order, once each."""
    out: dict[str, list[str]] = {}
    for path, leaf in answer_leaves(value).items():
        if isinstance(leaf, str) and leaf not in seen:
            bucket = out.setdefault(re.sub(r"\[\d+\]", "[]", path), [])
            if leaf not in bucket:
                bucket.append(leaf)
    return out


# --- 3. end states -----------------------------------------------------------------------------------------
def volatile_pattern(app: type[SandboxApp]) -> re.Pattern[str] | None:
    """The app's `volatile_paths` globs (relative to its state) as one regex over dotted paths."""
    globs = getattr(app, "volatile_paths", ())
    return re.compile("|".join(f"(?:{glob_to_regex(g).pattern})" for g in globs)) if globs else None


def state_leaves(state: Any, skip: re.Pattern[str] | None) -> dict[str, str]:
    """`collection/key/field...` -> canonical JSON of the value; lists of records with ids by id, other lists
    as one (order-free) value; volatile keys and paths, and empty maps, left out."""
    out: dict[str, str] = {}

    def walk(value: Any, path: tuple[str, ...]) -> None:
        if isinstance(value, dict):  # an empty map is no leaf: filling it must not read as a removal
            for key, sub in value.items():
                at = (*path, str(key))
                if not _VOLATILE_KEY.fullmatch(str(key)) and not (skip and skip.fullmatch(".".join(at))):
                    walk(sub, at)
        elif isinstance(value, list) and value and all(isinstance(v, dict) and "id" in v for v in value):
            for sub in value:
                walk(sub, (*path, str(sub["id"])))
        elif isinstance(value, list):
            out["/".join(path)] = json.dumps(sorted(canonical_json(v) for v in value))
        else:
            out["/".join(path)] = canonical_json(value)

    walk(state, ())
    return out


def changed_leaves(initial: dict[str, Any], end: dict[str, Any], skip: re.Pattern[str] | None) -> dict[str, str]:
    """Leaves whose value at the end differs from the initial one (`<absent>` for removed ones)."""
    before, after = state_leaves(initial, skip), state_leaves(end, skip)
    out = {path: value for path, value in after.items() if before.get(path) != value}
    out.update({path: ABSENT for path in before if path not in after})
    return out


# --- 3b. figures -------------------------------------------------------------------------------------------
@dataclass
class Tally:
    """Counts for a set of episodes; `figures` makes the shares."""

    calls: int = 0
    live_errors: int = 0
    verdict: int = 0
    both_erred: int = 0
    same_class: int = 0
    agree: int = 0
    live_changed: int = 0
    reproduced: int = 0
    unwanted: int = 0
    equal: int = 0
    episodes: int = 0
    live_s: float = 0.0
    engine_s: float = 0.0

    def add(self, other: Tally) -> Tally:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def __add__(self, other: Tally) -> Tally:
        return Tally().add(self).add(other)

    def figures(self) -> dict[str, Any]:
        share = lambda n, d: None if d == 0 else n / d  # noqa: E731
        return {
            "calls": self.calls, "live_error_share": share(self.live_errors, self.calls),
            "verdict": share(self.verdict, self.calls), "error_class": share(self.same_class, self.both_erred),
            "agreement": share(self.agree, self.calls), "r_c": share(self.reproduced, self.live_changed),
            "unwanted": share(self.unwanted, self.live_changed), "equal_end_states": self.equal,
            "episodes": self.episodes, "live_changed_leaves": self.live_changed, "reproduced_leaves": self.reproduced,
            "unwanted_leaves": self.unwanted, "both_erred": self.both_erred,
            "live_calls_per_s": share(self.calls, self.live_s) if self.live_s else None,
            "engine_calls_per_s": share(self.calls, self.engine_s) if self.engine_s else None,
        }


def count_verdicts(counts: Any, pairs: Iterable[tuple[ToolResult, ToolResult]]) -> None:
    """Add (live, engine) answers to `counts`' live_errors, verdict (same is_error), both_erred, same_class (the
    same error class where both erred) and agree (same verdict and, for errors, the same class)."""
    for live, sim in pairs:
        counts.live_errors += live.is_error
        counts.verdict += live.is_error == sim.is_error
        both = live.is_error and sim.is_error
        counts.both_erred += both
        counts.same_class += both and live.error_class == sim.error_class
        counts.agree += live.is_error == sim.is_error and (not live.is_error or live.error_class == sim.error_class)


def score(episode: Episode, rep: Replay) -> Tally:
    """One episode's counts: verdicts call by call, end states leaf by leaf (live's translated to the engine's ids)."""
    tally = Tally(calls=len(episode.calls), episodes=1, live_s=episode.live_s, engine_s=rep.engine_s)
    count_verdicts(tally, [(call.result, sim) for call, sim in zip(episode.calls, rep.results, strict=True)])
    skip = volatile_pattern(episode.app)
    wanted = changed_leaves(episode.initial, translated(episode.end, rep.created), skip)
    made = changed_leaves(episode.initial, rep.end, skip)
    count_end_state(tally, wanted, made)
    return tally


def count_end_state(tally: Tally, wanted: dict[str, str], made: dict[str, str]) -> None:
    """Live's changed leaves (`wanted`) against the engine's (`made`): how many it reproduced with the same
    value, how many it changed that live did not, and whether the two end states are equal."""
    tally.live_changed = len(wanted)
    tally.reproduced = sum(1 for path, value in wanted.items() if made.get(path) == value)
    tally.unwanted = len(set(made) - set(wanted))
    tally.equal = int(wanted == made)


# --- 4. scale --------------------------------------------------------------------------------------------
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def scaled_state(state: dict[str, Any], size: int) -> dict[str, Any]:
    """Every collection of records (a top-level `{key: record}` map) grown to `size` records by cloning its
    records under new keys of the same shape (`ord_0003` -> `ord_0004`, ...); larger ones are kept."""
    out = dict(state)
    for name, records in state.items():
        if isinstance(records, dict) and records and all(isinstance(r, dict) for r in records.values()):
            out[name] = grown(records, size)
    return out


def grown(records: dict[str, Any], size: int) -> dict[str, Any]:
    out = dict(records)
    keys = list(records)
    new_keys = fresh_keys(keys, size - len(keys))
    for i, key in enumerate(new_keys):
        source = keys[i % len(keys)]
        out[key] = {f: key if v == source else copy.deepcopy(v) for f, v in records[source].items()}
    return out


def fresh_keys(keys: list[str], count: int) -> list[str]:
    """`count` keys like `keys[0]` that none of `keys` uses: the number after the highest, same width (or
    wider when it runs out); a key without digits gets `-n`."""
    if count <= 0:
        return []
    match = _NUMBERED.match(keys[0])
    if match is None:
        return [f"{keys[0]}-{n}" for n in range(1, count + 1)]
    prefix, digits = match.groups()
    used = [int(m.group(2)) for k in keys if (m := _NUMBERED.match(k)) and m.group(1) == prefix]
    start = max(used, default=0) + 1
    return [f"{prefix}{n:0{len(digits)}d}" for n in range(start, start + count)]


def scaled_world(world: Any, app: str, size: int) -> Any:
    """A copy of the seed's world whose `app` server holds `size` records per collection (the rest shared)."""
    import dataclasses

    server = world.servers[app]
    bigger = dataclasses.replace(server, state=scaled_state(server.state, size), ids=dict(server.ids))
    for key in (k for records in bigger.state.values() if isinstance(records, dict) for k in records):
        match = _NUMBERED.match(str(key))
        if match and match.group(1).rstrip("_-") in bigger.ids:
            prefix = match.group(1).rstrip("_-")
            bigger.ids[prefix] = max(bigger.ids[prefix], int(match.group(2)))
    return dataclasses.replace(world, servers={**world.servers, app: bigger})


def collected() -> None:
    """A full garbage collection before a timed replay: building a world of 10,000 records per collection
    allocates about a million objects, and the full collection they are owed (about 90 ms at that size)
    would otherwise fall inside whichever replay comes next. Collections that the replay's own allocations
    cause are still timed."""
    gc.collect()


@dataclass
class Scale:
    """CPU time of the same calls in a small and a large world (the large one possibly cut at its budget)."""

    small_s: float = 0.0
    large_s: float = 0.0
    calls: int = 0
    done: int = 0
    complete: bool = True

    def add(self, other: Scale) -> None:
        self.small_s += other.small_s
        self.large_s += other.large_s
        self.calls += other.calls
        self.done += other.done
        self.complete = self.complete and other.complete

    def as_dict(self) -> dict[str, Any]:
        ratio = self.large_s / self.small_s if self.small_s else None
        return {"ratio": ratio, "ratio_is_lower_bound": not self.complete, "calls": self.calls,
                "large_world_calls_answered": self.done, "small_s": self.small_s, "large_s": self.large_s}


async def scale_ratio(subject: WorldSubject, episodes: list[Episode], replays: list[Replay], repeats: int,
                      budget: float | None) -> dict[str, Scale]:
    """Per app (and ALL): CPU time of the replayed calls in a world of 10,000 records per collection over
    one of 100. The large world's replay runs once, under `budget` CPU seconds; the small one's (best of
    `repeats`) covers the same calls, the one cut short included (so a cut ratio is a lower bound)."""
    out: dict[str, Scale] = {}
    for episode, rep in zip(episodes, replays, strict=True):
        small, large = (subject.engine(episode.seed, scaled_world(subject.world(episode.seed), episode.name, n))
                        for n in SCALES)
        collected()
        large_s, done, complete = await timed_replay(large, subject.session(episode.seed), episode.calls,
                                                     rep.arguments, budget)
        covered = done if complete else done + 1
        collected()
        small_s = await engine_seconds(small, lambda e=episode: subject.session(e.seed), episode, rep.arguments,
                                       repeats, covered)
        one = Scale(small_s, large_s, len(episode.calls), done, complete)
        for key in (episode.name, "ALL"):
            out.setdefault(key, Scale()).add(one)
    return out


@dataclass
class LiveScale:
    """The live apps' scale figures: a world's first session (its answers pay the index builds), a session of
    a loaded world (whose indexes an earlier session of other calls built), and the world's load (the index
    builds, CPU seconds, small and large), each reported, none hidden in another."""

    first: dict[str, Scale] = field(default_factory=dict)
    loaded: dict[str, Scale] = field(default_factory=dict)
    load: dict[str, Scale] = field(default_factory=dict)

    def add(self, app: str, first: Scale, loaded: Scale, load: Scale) -> None:
        for key in (app, "ALL"):
            for into, one in ((self.first, first), (self.loaded, loaded), (self.load, load)):
                into.setdefault(key, Scale()).add(one)

    def as_dict(self) -> dict[str, Any]:
        return {part: {a: s.as_dict() for a, s in getattr(self, part).items()} for part in ("first", "loaded", "load")}


def live_scale(episodes: list[Episode], budget: float) -> LiveScale:
    """The same ratio for the live apps: the explorer's calls on a session whose app holds 10,000 records
    per collection (grown as for the engine, id counters moved past them) over one of 100, the large one
    cut at `budget` CPU seconds. What the service itself pays as its world grows, beside the engine's. An
    untimed replay in the small world comes first, so neither timed one pays the process's first-use costs
    (caches that do not grow with the world: travel's first small replay took 36 ms of CPU, its next 27).

    Timed twice per size: as a world's first session (on a world just made, so its calls build the indexes
    they ask), and as a session of a loaded world, after sessions of OTHER calls (`loaded_world`) built the
    indexes those asked; what the timed session still builds is in its time. The world's load, every index build of its sessions (`WorldIndexes.built_s`), is its own figure."""
    out = LiveScale()
    for episode in episodes:
        live_replay_seconds(episode, live_world(episode, SCALES[0]).session(), float("inf"))  # warms caches, untimed
        cold = live_world(episode, SCALES[1])
        large_s, done, complete = live_replay_seconds(episode, cold.session(), budget)
        covered = done if complete else done + 1
        small_s, _, _ = live_replay_seconds(episode, live_world(episode, SCALES[0]).session(), float("inf"), covered)
        first = Scale(small_s, large_s, len(episode.calls), done, complete)
        worlds = [loaded_world(episode, size) for size in SCALES]
        large_s, done, complete = live_replay_seconds(episode, worlds[1].session(), budget)
        covered = done if complete else done + 1
        small_s, _, _ = live_replay_seconds(episode, worlds[0].session(), float("inf"), covered)
        loaded = Scale(small_s, large_s, len(episode.calls), done, complete)
        load = Scale(worlds[0].indexes.built_s(), worlds[1].indexes.built_s(), len(episode.calls), done, complete)
        out.add(episode.name, first, loaded, load)
    return out


#: Sessions of other calls that load a world (`loaded_world`).
LOAD_SESSIONS = 6


def loaded_world(episode: Episode, size: int) -> Any:
    """`live_world`, loaded as a service's world is by the sessions before yours: `LOAD_SESSIONS` explorer
    sessions of other calls than the episode's (each its own RNG stream), untimed. (Stopping at the first
    session that built nothing new stopped too early: in shop the second and fourth built nothing, the fifth
    and sixth the catalog's sorts.)"""
    world = live_world(episode, size)
    for n in range(LOAD_SESSIONS):
        explore_live(episode.seed, episode.app, len(episode.calls), session=world.session(),
                     stream=f"bench:explorer:load:{n}")
    return world


def live_world(episode: Episode, size: int) -> Any:
    """The episode's seeded world (a `SandboxWorld`) whose app holds `size` records per collection, its id
    counters moved past the new keys."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.session import SandboxSession, SandboxWorld

    session = SandboxSession(episode.seed, all_apps())
    session.state[episode.name] = scaled_state(session.state[episode.name], size)
    for records in session.state[episode.name].values():
        for key in records if isinstance(records, dict) else ():
            match = _NUMBERED.match(str(key))
            if match and match.group(1).endswith("_"):
                prefix = match.group(1)[:-1]
                session._id_counters[prefix] = max(session._id_counters.get(prefix, 0), int(match.group(2)))
    return SandboxWorld(session)


def live_replay_seconds(episode: Episode, session: Any, budget: float,
                        limit: int | None = None) -> tuple[float, int, bool]:
    """CPU seconds of the episode's first `limit` calls live on `session`, calls answered, and whether all
    were answered within `budget`."""
    from cworld.sandbox.framework.server import build_server

    server = build_server(session, episode.name)
    calls = episode.calls[:limit] if limit is not None else episode.calls
    collected()
    started, done = time.process_time(), 0
    for call in calls:
        to_tool_result(server.call_tool_sync(call.tool.name, copy.deepcopy(call.arguments)), 0.0)
        done += 1
        if time.process_time() - started > budget and done < len(calls):
            return time.process_time() - started, done, False
    return time.process_time() - started, done, True


# --- running and printing ---------------------------------------------------------------------------------
@dataclass
class Result:
    """What one engine scored: tallies per app (ALL too), speed, scale."""

    engine: str
    apps: dict[str, Tally]
    scale: dict[str, Scale] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "apps": {a: t.figures() for a, t in self.apps.items()},
                "scale": {a: s.as_dict() for a, s in self.scale.items()}}


async def measure(subject: Subject, episodes: list[Episode], repeats: int, scale: float | None,
                  show: bool = False) -> Result:
    """Replay every episode through the subject, score it, time it (`scale`: the large world's CPU budget
    per app, None to skip that timing); with `show`, print what differs."""
    apps: dict[str, Tally] = {}
    replays = []
    for episode in episodes:
        rep = await replay(subject, episode)
        if show:
            show_diffs(subject.name, episode, rep)
        if repeats:
            rep.engine_s = await engine_seconds(subject.engine(episode.seed), lambda e=episode: subject.session(e.seed),
                                                episode, rep.arguments, repeats)
        replays.append(rep)
        tally = score(episode, rep)
        apps.setdefault(episode.name, Tally()).add(tally)
    apps["ALL"] = sum(apps.values(), Tally())
    result = Result(subject.name, apps)
    if scale is not None and repeats and isinstance(subject, WorldSubject):
        first = [i for i, e in enumerate(episodes) if e.seed == episodes[0].seed]
        result.scale = await scale_ratio(subject, [episodes[i] for i in first], [replays[i] for i in first], repeats,
                                         scale)
    return result


def record(seeds: list[int], apps: list[type[SandboxApp]], calls: int, repeats: int,
           brief: bool = True) -> list[Episode]:
    episodes = [explore_live(seed, app, calls, brief=brief) for seed in seeds for app in apps]
    if repeats:
        for episode in episodes:
            episode.live_s = live_seconds(episode, repeats)
    return episodes


def verdicts_differ(live: ToolResult, sim: ToolResult) -> bool:
    """One erred and the other did not, or both erred with another error class."""
    return live.is_error != sim.is_error or (live.is_error and live.error_class != sim.error_class)


def print_call_diff(tag: str, tool: str, args: dict[str, Any], live: ToolResult, sim: ToolResult,
                    note: str = "") -> None:
    print(f"{tag} {tool} {json.dumps(args, default=str)[:220]}\n"
          f"    live:  {live.error_class} {live.text[:200]!r}\n"
          f"    world: {sim.error_class} {note}{sim.text[:200]!r}")


def show_diffs(engine: str, episode: Episode, rep: Replay) -> None:
    """Every call whose verdict or error class differs, and every end-state leaf missed or added: what a
    person (or the learner's author) reads to see where an engine's rules fall short."""
    tag = f"[{engine} {episode.seed} {episode.name}"
    for i, (call, sim, args) in enumerate(zip(episode.calls, rep.results, rep.arguments, strict=True)):
        if verdicts_differ(call.result, sim):
            print_call_diff(f"{tag} #{i}]", call.tool.name, args, call.result, sim)
    skip = volatile_pattern(episode.app)
    wanted = changed_leaves(episode.initial, translated(episode.end, rep.created), skip)
    made = changed_leaves(episode.initial, rep.end, skip)
    for path, value in wanted.items():
        if made.get(path) != value:
            print(f"{tag}] MISSING {path} live={value[:120]} world={str(made.get(path))[:120]}")
    for path in sorted(set(made) - set(wanted)):
        print(f"{tag}] EXTRA {path} world={made[path][:120]}")


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def table(result: Result) -> list[str]:
    lines = [f"{'app':<10} {'calls':>6} {'live err':>9} {'verdict':>8} {'class':>7} {'agree':>7} "
             f"{'R_c':>7} {'unwanted':>9} {'equal end':>10}"]
    for app, tally in result.apps.items():
        f = tally.figures()
        lines.append(f"{app:<10} {f['calls']:>6} {pct(f['live_error_share']):>9} {pct(f['verdict']):>8} "
                     f"{pct(f['error_class']):>7} {pct(f['agreement']):>7} {pct(f['r_c']):>7} "
                     f"{pct(f['unwanted']):>9} {f'{tally.equal}/{tally.episodes}':>10}")
    return lines


def speed_line(result: Result) -> str | None:
    total = result.apps["ALL"]
    if not total.engine_s or not total.live_s:
        return None
    live, engine = total.calls / total.live_s, total.calls / total.engine_s
    return f"speed: live {live:,.0f} calls/s, {result.engine} engine {engine:,.0f} calls/s (engine/live {engine / live:.2f}x)"


def scale_line(result: Result) -> str | None:
    if not result.scale:
        return None
    return (f"per-call time, {SCALES[1]:,} records per collection over {SCALES[0]} (seed of the first episode): "
            f"{scale_text(result.scale)}")


def scale_text(scale: dict[str, Scale]) -> str:
    def shown(s: Scale) -> str:
        ratio = s.as_dict()["ratio"]
        text = "-" if ratio is None else f"{'>=' if not s.complete else ''}{ratio:.1f}x"
        return text if s.complete else f"{text} (cut at call {s.done + 1}/{s.calls})"

    per_app = ", ".join(f"{a} {shown(s)}" for a, s in scale.items() if a != "ALL")
    return f"ALL {shown(scale['ALL'])}; {per_app}"


def load_text(load: dict[str, Scale]) -> str:
    """Each world's index builds, large and small, in ms of CPU."""
    return "; ".join(f"{a} {s.large_s * 1000:.0f} ms ({s.small_s * 1000:.1f} ms)" for a, s in load.items())


def report(result: Result) -> None:
    print(f"\nengine {result.engine}")
    for line in table(result):
        print(line)
    for line in (speed_line(result), scale_line(result)):
        if line:
            print(line)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", nargs="+", choices=ENGINES, default=list(DEFAULT_ENGINES),
                        help="engines to measure (default: all but world-learned, which learns every app first)")
    parser.add_argument("--learn-seeds", nargs="+", type=int, default=[0, 1],
                        help="world-learned: the seeds whose live traffic the rules are learned from")
    parser.add_argument("--learn-calls", type=int, default=600, help="world-learned: live calls per app and seed")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--calls-per-app", type=int, default=40)
    parser.add_argument("--apps", nargs="+", help="sandbox apps (default: every stateful app)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per side (best of); 0 skips speed")
    parser.add_argument("--scale-budget", type=float, default=5.0,
                        help="CPU seconds per app for the 10,000-record world's replay (0 skips the scale timing)")
    parser.add_argument("--live-scale", action="store_true",
                        help="also time the live apps at 10,000 records per collection against 100 (same budget)")
    parser.add_argument("--no-briefing", action="store_true",
                        help="the explorer is not told the user's credentials (logins then always fail)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--show-diffs", action="store_true", help="print every call and end-state leaf that differs")
    return parser.parse_args(argv)


def chosen_apps(names: list[str] | None) -> list[type[SandboxApp]]:
    from cworld.sandbox.catalog import app_by_name, stateful_apps

    return [app_by_name(n) for n in names] if names else stateful_apps()


def main(argv: list[str] | None = None) -> int:
    opts = parse(argv)
    apps = chosen_apps(opts.apps)
    started = time.perf_counter()
    episodes = record(opts.seeds, apps, opts.calls_per_app, opts.repeats, brief=not opts.no_briefing)
    live = sum((Tally(calls=len(e.calls), live_errors=sum(c.result.is_error for c in e.calls)) for e in episodes), Tally())
    print(f"live: {live.calls} explorer calls over {len(apps)} apps x {len(opts.seeds)} seeds "
          f"({pct(live.figures()['live_error_share'])} errors)")
    measured, notes = subjects(opts.engine, Env.resolve(), [a.name for a in apps], opts.learn_seeds, opts.learn_calls)
    if "world-learned" in opts.engine and set(opts.learn_seeds) & set(opts.seeds):
        notes.append(f"world-learned: seeds {sorted(set(opts.learn_seeds) & set(opts.seeds))} are also learned from: "
                     "their figures hold partly by construction")
    for note in notes:
        print(note)
    print("columns: live err = live calls that erred; verdict = is_error as live; class = same error class where "
          "both erred; agree = same verdict and class; R_c = live's changed state leaves reproduced with the same "
          "value; unwanted = leaves the engine changed that live did not (share of live's); equal end = (seed, app) "
          "end states equal")
    results = []
    for subject in measured:
        scaled = opts.scale_budget > 0 and subject.name == next((s.name for s in measured if s.name != "schema"), None)
        result = asyncio.run(measure(subject, episodes, opts.repeats, opts.scale_budget if scaled else None,
                                     opts.show_diffs))
        report(result)
        results.append(result)
    live_scaled = None
    if opts.live_scale and opts.scale_budget > 0:
        first = [e for e in episodes if e.seed == episodes[0].seed]
        live_scaled = live_scale(first, opts.scale_budget)
        print(f"\nlive apps, per-call time, {SCALES[1]:,} records per collection over {SCALES[0]}:\n"
              f"  a world's first session (its calls build the indexes): {scale_text(live_scaled.first)}\n"
              f"  a session of a loaded world (indexes built by an earlier session of other calls): "
              f"{scale_text(live_scaled.loaded)}\n"
              f"  the world's load, index builds of its sessions, {SCALES[1]:,} over {SCALES[0]}: "
              f"{load_text(live_scaled.load)}")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if opts.json:
        opts.json.write_text(json.dumps({"seeds": opts.seeds, "calls_per_app": opts.calls_per_app,
                                         "apps": [a.name for a in apps], "notes": notes,
                                         "engines": [r.as_dict() for r in results],
                                         "live_scale": live_scaled.as_dict() if live_scaled else {}},
                                        indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
