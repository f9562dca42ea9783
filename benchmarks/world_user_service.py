"""Does the world engine stand in for a user's own service? Issue 33's "a user's service" figures.

Run: `python benchmarks/world_user_service.py [--sessions 3] [--calls 60] [--root DIR] [--show-diffs]
[--json PATH]`. Offline, under a minute.

The service is `tests/fixtures/user_service/bikeshop.py` (a bike workshop's front desk: clients, staff,
services, appointments; 13 tools, a login whose token every other tool needs), written for this test: not
a sandbox app, not a transcription of one, not from a benchmark.

1. Register it as docs/world-engine.md ("Simulate your own service") tells a user to, each step a `cworld`
   command whose exit code is kept: `cworld init ENV`; a `real` entry with its command appended to
   `ENV/registry/servers.yaml`; `cworld registry build --only bikeshop --no-index`; `cworld world load
   bikeshop state.json` (seed 0).
2. Explore live. Per session, the service is launched as a live run launches it (`RealServerBackend` with
   the manifest entry) and a seeded explorer (`DeskExplorer`, rng `bench:user-service:<session>`) calls
   its tools: it knows the desk's credentials (a task would say them), reuses ids and tokens it saw, and
   errs on purpose (made-up ids and tokens, a mistyped password, times in the past, a taken email, a
   garbled cursor).
3. Replay each session's calls through the engine a synthesized run uses (`controller.factory.
   world_engine` over the workspace: the loaded world, card rules only, as no rule file names the
   service), live's created ids and tokens given as the engine answered them.
4. Figures: verdict agreement (is_error as live), error-class agreement where both erred, full agreement;
   read-after-write: each value a live read showed that an earlier live write had set (a record's field,
   new or changed), matched when the engine's answer to the same read shows that record with that value;
   the engine's answers by origin (override, family, inferred, simulated).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _explorer import Call, Explorer, Rates, is_reference  # noqa: E402

from cworld.data_model import ToolResult, ToolSpec  # noqa: E402
from cworld.schemas.walk import resolve_ref, result_value  # noqa: E402
from cworld.seeding import derive_rng  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "user_service"
SERVICE, STATE = FIXTURE / "bikeshop.py", FIXTURE / "state.json"
SERVER = "bikeshop"
NOW = "2026-08-21T09:45:00Z"
"""The service's clock start: the world's `now` for seed 0, so "in the past" means the same on both sides."""
CREDENTIALS = {"username": "desk", "password": "chain-ring-42"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_LEFT_OUT = object()
"""An optional argument the explorer decided not to give after all (a cursor it has not seen)."""


# --- 1. register, as the docs say ------------------------------------------------------------------------
def server_entry(python: str = sys.executable) -> str:
    """The manifest entry a user appends to `registry/servers.yaml` (docs/world-engine.md)."""
    return (f"\n  - id: {SERVER}\n    kind: real\n    transport: stdio\n"
            "    description: Spoke & Chain, a bike workshop's front desk (clients, staff, services, appointments)\n"
            f"    command: {python}\n    args: [{SERVICE}, --state, {STATE}, --now, '{NOW}']\n"
            "    probe_args:\n"
            f"      login: {{username: {CREDENTIALS['username']}, password: {CREDENTIALS['password']}}}\n")


@dataclass
class Step:
    command: list[str]
    code: int
    output: str


@dataclass
class Registered:
    env: Path
    workspace: Path
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(step.code == 0 for step in self.steps)


def cworld(args: list[str], cwd: Path) -> Step:
    """One `cworld` command, as a user types it; its exit code and its output."""
    command = [sys.executable, "-m", "cworld", *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    return Step(["cworld", *args], done.returncode, (done.stdout + done.stderr).strip())


def register(root: Path) -> Registered:
    """init, the manifest entry, registry build, world load: each step only after the last one worked."""
    reg = Registered(root / "env", root / "ws")
    ws = ["--env", str(reg.env), "--workspace", str(reg.workspace)]
    reg.steps.append(cworld(["init", str(reg.env)], root))
    if reg.ok:
        with (reg.env / "registry" / "servers.yaml").open("a", encoding="utf-8") as out:
            out.write(server_entry())
        reg.steps.append(cworld([*ws, "registry", "build", "--only", SERVER, "--no-index", "--no-progress"], root))
    if reg.ok:
        reg.steps.append(cworld([*ws, "world", "load", SERVER, str(STATE)], root))
    return reg


# --- 2. explore live ----------------------------------------------------------------------------------------
def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


class DeskExplorer(Explorer):
    """`Explorer` for camelCase arguments (`clientId` is a reference, looked up as `client_id`), with the
    values a desk's schemas leave open: the credentials a task states, appointment times near the clock
    (some in the past), emails (some taken, some malformed), search words, cursors it saw or garbled."""

    def __init__(self, tools: list[ToolSpec], rng: random.Random, now: datetime, state: dict[str, Any]) -> None:
        super().__init__(tools, rng, now, Rates(seen=0.8), briefing=CREDENTIALS)
        self.clock = now
        self._retry = next((t for t in tools if t.name == "login"), None)  # a desk's first call: the task said how
        self.emails = [c["email"] for c in state["clients"]]
        self.words = sorted({w.lower() for s in state["services"] for w in f"{s['name']} {s['category']}".split()})
        self.names = [c["name"] for c in state["clients"]]

    def observe(self, tool: ToolSpec, result: ToolResult) -> None:
        super().observe(tool, result)
        value = result_value(result)
        if not result.is_error and isinstance(value, dict) and value.get("nextCursor"):
            self.bank.seed({"cursor": value["nextCursor"]})

    def arguments(self, tool: ToolSpec, *, careful: bool = False) -> dict[str, Any]:
        self.clock += timedelta(seconds=20)
        root = tool.input_schema or {}
        required = set(root.get("required") or [])
        args: dict[str, Any] = {}
        for name, raw in (root.get("properties") or {}).items():
            if name not in required and self.rng.random() >= self.rates.optional:
                continue
            value = self.value(tool, name, resolve_ref(raw, root), root, careful)
            if value is not _LEFT_OUT:
                args[name] = value
        return args

    def value(self, tool: ToolSpec, name: str, prop: dict[str, Any], root: dict[str, Any], careful: bool) -> Any:
        plain, roll = snake(name), self.rng.random()
        if plain in CREDENTIALS:
            told = CREDENTIALS[plain]
            return told if careful or roll < 0.85 else told + "x"
        if plain == "start":
            return self.start(careful)
        if plain == "email":
            taken = self.rng.choice(self.emails)
            return taken if roll < 0.15 else "not-an-email" if roll < 0.2 else f"rider{self.rng.randint(1, 999)}@example.com"
        if plain in ("query", "name_contains"):
            pool = self.words if plain == "query" else [n.split()[roll < 0.5].lower()[:4] for n in self.names]
            return self.rng.choice(pool) if careful or roll < 0.8 else "zzqx"
        if plain == "cursor":
            seen = self.bank.candidates("cursor")
            if seen and roll < 0.8:
                return self.rng.choice(seen)
            return "after:9x" if roll > 0.9 else _LEFT_OUT
        if plain == "token":
            seen = self.bank.candidates("token")
            return seen[0] if seen and (careful or roll < 0.9) else self.wrong(plain, prop, root)
        if is_reference(tool, plain):
            return self.reference(plain, prop, root, careful=careful)
        return self.generated(plain, prop, root, careful=careful)

    def start(self, careful: bool) -> str:
        """A half-hour slot in working hours: mostly in the coming week, sometimes already past."""
        days = self.rng.randint(1, 7) if careful or self.rng.random() < 0.8 else -self.rng.randint(0, 5)
        day = (self.clock + timedelta(days=days)).replace(hour=self.rng.randint(8, 16), minute=self.rng.choice([0, 30]),
                                                          second=0, microsecond=0)
        return day.strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest_specs(env: Path) -> dict[str, Any]:
    from cworld.environment import Environment
    from cworld.registry.manifest import load_manifest

    return {s.id: s for s in load_manifest(Environment.resolve(env)) if s.id == SERVER}


def service_tools(reg: Registered) -> list[ToolSpec]:
    from cworld.environment import Environment, Workspace
    from cworld.registry.tools import environment_tools

    listed = environment_tools(Environment.resolve(reg.env), Workspace.resolve(reg.workspace))
    return [t for t in listed.tools if t.server == SERVER]


async def explore(reg: Registered, tools: list[ToolSpec], session: int, calls: int) -> list[Call]:
    """`calls` explorer calls on a fresh launch of the service."""
    from cworld.controller.backends.real import RealServerBackend
    from cworld.environment import Workspace

    backend = RealServerBackend(manifest_specs(reg.env), Workspace.resolve(reg.workspace), episode=f"user-service-{session}")
    await backend.open(0)
    explorer = DeskExplorer(tools, derive_rng(session, "bench:user-service"), at(NOW),
                            json.loads(STATE.read_text(encoding="utf-8")))
    out: list[Call] = []
    try:
        for _ in range(calls):
            tool, arguments = explorer.next_call()
            result = await backend.call(tool, json.loads(json.dumps(arguments)))
            if result.is_infra_error:
                raise RuntimeError(f"{SERVER}: {result.error_class}: {result.text[:300]}")
            explorer.observe(tool, result)
            out.append(Call(tool, arguments, result))
    finally:
        await backend.close()
    return out


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --- 3. replay ------------------------------------------------------------------------------------------------
@dataclass
class Replay:
    results: list[ToolResult]
    arguments: list[dict[str, Any]]
    ids: dict[str, Any]


def engine_for(reg: Registered, tools: list[ToolSpec]) -> Any:
    """The engine a synthesized run over this workspace uses (`world_engine`), with the loaded world."""
    from cworld.controller.factory import world_engine
    from cworld.engine.cards.card import load_cards
    from cworld.environment import Environment, Workspace

    env = Environment.resolve(reg.env)
    return world_engine(env, Workspace.resolve(reg.workspace), tools, load_cards(env.category_cards), by_server=True)


async def replay(engine: Any, calls: list[Call]) -> Replay:
    """The calls in order in one session; a live created id or token is given as the engine answered it."""
    from cworld.engine.protocol import SessionLog

    session = SessionLog(seed=0)
    ids: dict[str, Any] = {}
    results, arguments = [], []
    for call in calls:
        args = {k: ids.get(_key(v), v) for k, v in call.arguments.items()}
        result = await engine.respond(call.tool, args, session)
        session.record(call.tool.id, args, result)
        learn_ids(ids, call.result, result)
        results.append(result)
        arguments.append(args)
    return Replay(results, arguments, ids)


def _key(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def learn_ids(ids: dict[str, Any], live: ToolResult, sim: ToolResult) -> None:
    """Live's new `id` or `token` -> the engine's, when both answered and the value has the same type."""
    mine, theirs = result_value(live), result_value(sim)
    if live.is_error or sim.is_error or not isinstance(mine, dict) or not isinstance(theirs, dict):
        return
    for name in ("id", "token"):
        a, b = mine.get(name), theirs.get(name)
        if a is not None and b is not None and a != b and type(a) is type(b):
            ids.setdefault(_key(a), b)


# --- 4. figures ------------------------------------------------------------------------------------------------
@dataclass
class Figures:
    calls: int = 0
    live_errors: int = 0
    verdict: int = 0
    both_erred: int = 0
    same_class: int = 0
    agree: int = 0
    raw_cases: int = 0
    raw_matched: int = 0
    set_cases: int = 0
    set_matched: int = 0
    origins: Counter[str] = field(default_factory=Counter)

    def add(self, other: Figures) -> None:
        for name in ("calls", "live_errors", "verdict", "both_erred", "same_class", "agree", "raw_cases", "raw_matched", "set_cases",
                     "set_matched"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.origins.update(other.origins)

    def shares(self) -> dict[str, Any]:
        total = sum(self.origins.values())
        return {"calls": self.calls, "live_errors": _share(self.live_errors, self.calls),
                "verdict": _share(self.verdict, self.calls), "error_class": _share(self.same_class, self.both_erred),
                "agreement": _share(self.agree, self.calls), "read_after_write": _share(self.raw_matched, self.raw_cases),
                "read_after_write_cases": self.raw_cases, "service_set": _share(self.set_matched, self.set_cases),
                "service_set_cases": self.set_cases,
                "origins": {o: _share(n, total) for o, n in sorted(self.origins.items())}}


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def verdicts(calls: list[Call], rep: Replay) -> Figures:
    from world_fidelity import count_verdicts

    from cworld.engine.origin import answer_origin

    out = Figures(calls=len(calls))
    count_verdicts(out, [(call.result, sim) for call, sim in zip(calls, rep.results, strict=True)])
    out.origins.update(answer_origin(sim) or "none" for sim in rep.results)
    return out


def records(value: Any) -> list[dict[str, Any]]:
    """Every object in an answer that has an `id`."""
    if isinstance(value, dict):
        found = [value] if "id" in value else []
        return found + [r for sub in value.values() for r in records(sub)]
    if isinstance(value, list):
        return [r for sub in value for r in records(sub)]
    return []


@dataclass
class RawCase:
    index: int
    record: str
    field: str
    value: Any
    matched: bool
    by_call: bool
    """the write's arguments gave the value (else the service set it: a status, a stamp, a default)"""


def read_after_write(calls: list[Call], rep: Replay, initial: dict[str, Any]) -> list[RawCase]:
    """Each value a live read showed that an earlier live write set (a new record's fields, a changed field),
    and whether the engine's answer to that read shows the record (by its engine id) with the same value."""
    known = {str(r["id"]): dict(r) for kind in initial.values() for r in kind}
    written: dict[str, dict[str, tuple[Any, bool]]] = {}
    cases: list[RawCase] = []
    for i, (call, sim) in enumerate(zip(calls, rep.results, strict=True)):
        if call.result.is_error:
            continue
        shown = records(result_value(call.result))
        if call.tool.annotations.read_only_hint:
            theirs = {str(r["id"]): r for r in records(result_value(sim))} if not sim.is_error else {}
            for rec in shown:
                for name, (value, by_call) in written.get(str(rec["id"]), {}).items():
                    if rec.get(name) == value:
                        other = theirs.get(str(rep.ids.get(_key(rec["id"]), rec["id"])), {})
                        cases.append(RawCase(i, str(rec["id"]), name, value, other.get(name) == value, by_call))
        else:
            given = {snake(k): v for k, v in call.arguments.items()}
            for rec in shown:
                before = known.get(str(rec["id"]))
                written.setdefault(str(rec["id"]), {}).update(
                    {k: (v, k in given and given[k] == v) for k, v in rec.items()
                     if k != "id" and (before is None or before.get(k) != v)})
        for rec in shown:
            known.setdefault(str(rec["id"]), {}).update(rec)
    return cases


# --- running ----------------------------------------------------------------------------------------------------
@dataclass
class Measured:
    figures: Figures
    sessions: list[tuple[list[Call], Replay, list[RawCase]]]


async def measure(reg: Registered, sessions: int, calls: int) -> Measured:
    tools = service_tools(reg)
    if not tools:
        raise SystemExit(f"{SERVER}: no tools in {reg.workspace}/registry: did `cworld registry build` list it?")
    initial = json.loads(STATE.read_text(encoding="utf-8"))
    total, out = Figures(), []
    for session in range(sessions):
        live = await explore(reg, tools, session, calls)
        rep = await replay(engine_for(reg, tools), live)
        cases = read_after_write(live, rep, initial)
        figures = verdicts(live, rep)
        figures.raw_cases = sum(c.by_call for c in cases)
        figures.raw_matched = sum(c.matched for c in cases if c.by_call)
        figures.set_cases = sum(not c.by_call for c in cases)
        figures.set_matched = sum(c.matched for c in cases if not c.by_call)
        total.add(figures)
        out.append((live, rep, cases))
    return Measured(total, out)


def show_diffs(measured: Measured) -> None:
    for s, (calls, rep, cases) in enumerate(measured.sessions):
        for i, (call, sim, args) in enumerate(zip(calls, rep.results, rep.arguments, strict=True)):
            live = call.result
            if live.is_error != sim.is_error or (live.is_error and live.error_class != sim.error_class):
                print(f"[{s} #{i}] {call.tool.name} {json.dumps(args)[:200]}\n"
                      f"    live:  {live.error_class} {live.text[:160]!r}\n"
                      f"    world: {sim.error_class} {sim.meta.get('rule') or sim.meta.get('simulated')} {sim.text[:160]!r}")
        for case in cases:
            if not case.matched:
                print(f"[{s} #{case.index}] READ-AFTER-WRITE{'' if case.by_call else ' (service-set)'} {calls[case.index].tool.name} {case.record}.{case.field}"
                      f"={case.value!r}: world {rep.results[case.index].text[:200]!r}")


def report(measured: Measured) -> list[str]:
    f = measured.figures.shares()
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    origins = ", ".join(f"{o} {pct(v)}" for o, v in f["origins"].items())
    return [f"{SERVER}: {f['calls']} calls over {len(measured.sessions)} sessions, {pct(f['live_errors'])} erred live",
            f"verdict {pct(f['verdict'])} · error class {pct(f['error_class'])} · agreement {pct(f['agreement'])}",
            f"read-after-write {pct(f['read_after_write'])} of {f['read_after_write_cases']} values a write gave that "
            f"live's reads showed (values the service set on a write: {pct(f['service_set'])} of {f['service_set_cases']})",
            f"engine answers by origin: {origins}"]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--calls", type=int, default=60, help="explorer calls per session")
    parser.add_argument("--root", type=Path, help="register into this empty folder and keep it (default: a temporary one)")
    parser.add_argument("--show-diffs", action="store_true", help="print every call and read-after-write value that differs")
    parser.add_argument("--json", type=Path, help="write the figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cworld-user-service-") as tmp:
        root = opts.root or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        reg = register(root)
        for step in reg.steps:
            shown = [a for a, b in zip(step.command, ["", *step.command], strict=False) if not a.startswith("--") and b not in ("--env", "--workspace")]
            print(f"$ {' '.join(shown)} -> exit {step.code}: {step.output.splitlines()[-1] if step.output else ''}")
        if not reg.ok:
            print(reg.steps[-1].output, file=sys.stderr)
            return 1
        measured = asyncio.run(measure(reg, opts.sessions, opts.calls))
    if opts.show_diffs:
        show_diffs(measured)
    for line in report(measured):
        print(line)
    print(f"({time.perf_counter() - started:.0f} s)")
    if opts.json:
        opts.json.write_text(json.dumps(measured.figures.shares(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
