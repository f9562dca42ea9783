"""How close the World Engine's simulated answers are to live ones, per category card.

Run: `python benchmarks/engine_fidelity.py [--seed N] [--rounds N] [--no-real] [--llm-limit N]`.

1. Record live calls. Sandbox apps run in memory in a seeded session; each tool is called in dependency
   order (producers first) with arguments generated from its schema and from values earlier answers
   returned (the registry's probe generator), `--rounds` times. Real MCP servers run too when they are
   installed in the workspace (`cworld servers install`), launched against scratch targets like a registry
   build; servers that need credentials that are not set, or are not installed, are skipped with a message.
2. Replay the same calls, in the same order, through each engine with its own session log: the schema
   engine always; the LLM engine only when CWORLD_ENGINE_MODEL is set (a mock model would measure nothing).
3. Print per card: output-schema validity of the engine's successes (against the card pattern when the tool
   has no output schema), error/non-error agreement with live, and the overlap of JSON key paths (Jaccard)
   and of value types on shared paths, for calls where both succeeded.
4. Speed: the same recorded sandbox calls, live in memory and answered by a fresh schema engine, each
   timed `--repeats` times in this run (best of, so a busy machine slows both alike); calls per second
   and the engine/live ratio. The engine should be at least as fast as the live call it replaces.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.preview import check_result
from cworld.environment import Environment, Workspace
from cworld.mcp.normalize import from_call_result
from cworld.registry.probe_args import ValueBank, planned_args, probe_order
from cworld.schemas.walk import key_paths


@dataclass
class Recorded:
    tool: ToolSpec
    arguments: dict[str, Any]
    live: ToolResult


# --- 1. recording live calls -----------------------------------------------------------------------------
def record_sandbox(seed: int, rounds: int) -> tuple[list[Recorded], float]:
    """Every sandbox tool, `rounds` times, live in memory; returns the calls and the live seconds spent."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import app_prerequisites, build_server, tool_specs
    from cworld.sandbox.framework.session import SandboxSession

    session = SandboxSession(seed=seed, apps=all_apps())
    out: list[Recorded] = []
    for app in all_apps():
        server, specs = build_server(session, app.name), tool_specs(app)
        bank = ValueBank(now=session.clock.now())
        bank.seed(session.state.get(app.name, {}))
        edges = [(e.before.split("/", 1)[1], e.after.split("/", 1)[1]) for e in app_prerequisites(app)
                 if e.before.startswith(f"{app.name}/") and e.after.startswith(f"{app.name}/")]
        for _ in range(rounds):
            for spec in probe_order(specs, edges):
                args, _ = planned_args(spec, {}, bank)
                live = from_call_result(server.call_tool_sync(spec.name, args), 0.0)
                bank.learn(live)
                out.append(Recorded(spec, args, live))
    return out, time_live(out, seed)


def time_live(calls: list[Recorded], seed: int) -> float:
    """The same calls again on a fresh session, timed without the recording overhead."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import build_all
    from cworld.sandbox.framework.session import SandboxSession

    servers = build_all(SandboxSession(seed=seed, apps=all_apps()))
    started = time.perf_counter()
    for call in calls:
        servers[call.tool.server].call_tool_sync(call.tool.name, call.arguments)
    return time.perf_counter() - started


async def record_real(env: Environment, ws: Workspace) -> tuple[list[Recorded], list[str]]:
    from cworld.mcp import Connection
    from cworld.registry.install import entry_path
    from cworld.registry.launch import LaunchContext, resolve
    from cworld.registry.manifest import load_manifest

    out: list[Recorded] = []
    notes: list[str] = []
    scratch = Path(tempfile.mkdtemp(prefix="cworld-fidelity-"))
    ctx = LaunchContext(ws.root, ws.servers, scratch)
    try:
        for spec in [s for s in load_manifest(env) if s.kind == "real"]:
            missing = [c for c in spec.credentials if not os.environ.get(c)]
            if missing:
                notes.append(f"{spec.id}: skipped, needs {', '.join(missing)}")
                continue
            entry = entry_path(spec, ws.servers)
            if spec.command is None and (entry is None or not entry.exists()):
                notes.append(f"{spec.id}: skipped, not installed in {ws.servers} (run `cworld servers install`)")
                continue
            try:
                resolved = await asyncio.to_thread(resolve, spec, ctx)
                async with Connection.from_spec(resolved, default_timeout_s=20.0, max_restarts=1) as conn:
                    bank = ValueBank()
                    for tool in probe_order(await conn.list_tools()):
                        args, _ = planned_args(tool, resolved.probe_args, bank)
                        live = await conn.call(tool.name, args)
                        bank.learn(live)
                        out.append(Recorded(tool, args, live))
            except Exception as exc:  # one server that cannot run here does not stop the benchmark
                notes.append(f"{spec.id}: skipped, {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
    finally:
        ctx.close()
    return out, notes


# --- 2. replaying through an engine --------------------------------------------------------------------
async def replay(engine: Any, calls: list[Recorded], seed: int) -> tuple[list[ToolResult], float]:
    """Each server's calls in one session, in recorded order; the engine's own answers go in its log."""
    sessions: dict[str, SessionLog] = defaultdict(lambda: SessionLog(seed=seed))
    out = []
    started = time.perf_counter()
    for call in calls:
        session = sessions[call.tool.server]
        result = await engine.respond(call.tool, call.arguments, session)
        session.record(call.tool.id, call.arguments, result)
        out.append(result)
    return out, time.perf_counter() - started


# --- 3. comparing ------------------------------------------------------------------------------------------
def shape(result: ToolResult) -> dict[str, str]:
    """Key paths and types of an answer: its structured content, else its text parsed as JSON, else text."""
    data: Any = result.structured_content
    if data is None:
        try:
            data = json.loads(result.text)
        except (json.JSONDecodeError, TypeError):
            data = result.text
    return key_paths(data)


@dataclass
class Tally:
    calls: int = 0
    engine_ok: int = 0
    valid: int = 0
    agree: int = 0
    both_ok: int = 0
    overlap: float = 0.0
    types: float = 0.0

    def add(self, tool: ToolSpec, card: Any, live: ToolResult, sim: ToolResult) -> None:
        self.calls += 1
        self.agree += live.is_error == sim.is_error
        if sim.is_error:
            return
        self.engine_ok += 1
        self.valid += check_result(tool, card, sim)[0]
        if live.is_error:
            return
        a, b = shape(live), shape(sim)
        shared = set(a) & set(b)
        self.both_ok += 1
        self.overlap += len(shared) / max(1, len(set(a) | set(b)))
        self.types += sum(a[p] == b[p] for p in shared) / max(1, len(shared))

    def row(self, name: str) -> str:
        pct = lambda n, d: f"{100 * n / d:5.1f}%" if d else "    -"  # noqa: E731
        return (f"{name:<18}{self.calls:>6}  {pct(self.valid, self.engine_ok)}  {pct(self.agree, self.calls)}  "
                f"{pct(self.overlap, self.both_ok)}  {pct(self.types, self.both_ok)}  {self.both_ok:>6}")


def report(title: str, calls: list[Recorded], results: list[ToolResult], index: CardIndex) -> None:
    per_card: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    for call, sim in zip(calls, results, strict=True):
        card = index.card_for(call.tool)
        per_card[card.name].add(call.tool, card, call.live, sim)
        total.add(call.tool, card, call.live, sim)
    print(f"\n{title}")
    print(f"{'card':<18}{'calls':>6}  {'valid':>6}  {'errors':>6}  {'keys':>6}  {'types':>6}  {'both ok':>7}")
    for name in sorted(per_card):
        print(per_card[name].row(name))
    print(total.row("ALL"))


# --- 4. speed ----------------------------------------------------------------------------------------------
@dataclass
class Speed:
    calls: int
    live_s: float
    engine_s: float

    @property
    def ratio(self) -> float:
        """Engine calls per second over live calls per second: >= 1 when the engine keeps up."""
        return self.live_s / self.engine_s


def measure_speed(cards: dict[str, Any], sandbox: list[Recorded], seed: int, repeats: int) -> Speed:
    """Best of `repeats` for each side; every engine run starts from a fresh engine and fresh sessions,
    as an episode does (its worlds are seeded inside the timed replay)."""
    tools = [c.tool for c in sandbox]
    live = min(time_live(sandbox, seed) for _ in range(repeats))
    engine = min(asyncio.run(replay(SchemaEngine(cards, tools), sandbox, seed))[1] for _ in range(repeats))
    return Speed(len(sandbox), live, engine)


def speed(cards: dict[str, Any], sandbox: list[Recorded], seed: int, repeats: int) -> Speed:
    found = measure_speed(cards, sandbox, seed, repeats)
    print(f"\nspeed on {found.calls} sandbox calls (best of {repeats}): "
          f"live in-memory sandbox {found.calls / found.live_s:,.0f} calls/s, "
          f"schema engine {found.calls / found.engine_s:,.0f} calls/s, engine/live {found.ratio:.2f}x")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2, help="calls per sandbox tool")
    parser.add_argument("--no-real", action="store_true", help="skip real MCP servers")
    parser.add_argument("--llm-limit", type=int, default=60, help="calls replayed through the LLM engine")
    parser.add_argument("--repeats", type=int, default=5, help="timings per side in the speed section (best of)")
    opts = parser.parse_args()
    env, ws = Environment.resolve(), Workspace.resolve()
    cards = load_cards(env.category_cards)
    index = CardIndex(cards)

    sandbox, live_s = record_sandbox(opts.seed, opts.rounds)
    real, notes = ([], ["real servers: skipped (--no-real)"]) if opts.no_real else asyncio.run(record_real(env, ws))
    calls = sandbox + real
    print(f"recorded {len(sandbox)} sandbox calls and {len(real)} real-server calls (seed {opts.seed})")
    for note in notes:
        print(f"  {note}")
    print("columns: valid = engine successes that fit the output schema (or card pattern); errors = error/non-error "
          "agreement with live; keys / types = JSON key-path overlap and type agreement where both succeeded")

    schema = SchemaEngine(cards, [c.tool for c in calls])
    results, _ = asyncio.run(replay(schema, calls, opts.seed))
    report("schema engine", calls, results, index)

    speed(cards, sandbox, opts.seed, opts.repeats)

    if os.environ.get("CWORLD_ENGINE_MODEL"):
        from cworld.engine.llm.engine import LLMEngine
        from cworld.llm import Gateway

        sample = calls[: opts.llm_limit]
        llm = LLMEngine(cards, Gateway.from_workspace(ws), cards_dir=env.category_cards, tools=[c.tool for c in calls])
        llm_results, llm_s = asyncio.run(replay(llm, sample, opts.seed))
        report(f"llm engine ({llm.model.model}, first {len(sample)} calls, {llm_s:.0f} s)", sample, llm_results, index)
        print(f"llm engine stats: {json.dumps(llm.stats.as_dict())}")
    else:
        print("\nllm engine: skipped (set CWORLD_ENGINE_MODEL to measure it; the mock provider would measure nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
