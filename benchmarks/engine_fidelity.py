"""How close the World Engine's simulated answers are to live ones, per category card.

Run: `python benchmarks/engine_fidelity.py [--seed N] [--rounds N] [--no-real] [--llm-limit N]`.

1. Record live calls. Sandbox apps run in memory in a seeded session; each tool is called in dependency
   order (producers first) with arguments generated from its schema and from values earlier answers
   returned (the registry's probe generator), `--rounds` times. Real MCP servers run too when they are
   installed in the workspace (`cworld servers install`), launched against scratch targets like a registry
   build; servers that need credentials that are not set, or are not installed, are skipped with a message.
2. Replay the same calls, in the same order, through each engine with its own session log per server: the
   schema engine always; the LLM engine only when CWORLD_ENGINE_MODEL is set (a mock model would measure
   nothing). Sandbox calls are replayed twice: in a bare session, and in a session whose public task carries
   a scenario of the seeded state the live calls saw (`synth.scenario.state_scenario`: every record of the
   apps' `entity_kinds` collections), as a task's scenario would give it. Real servers have no scenario
   (the engine is not told what their scratch targets hold).
3. Print per card the agreement of the engine's answers with live (`fidelity.calls.call_agreement`):
   error/non-error agreement, key-path overlap (Jaccard) and type agreement where both succeeded; then the
   output-schema validity of the engine's successes (against the card pattern when the tool has none).
4. Speed: the same recorded sandbox calls, live in memory (the sandbox backend's call: the server's call
   cycle and the ToolResult it becomes) and answered by the schema engine (its call and its session log
   entry), timed `--repeats` times in this run (best of, so a busy machine slows both alike); calls per
   second and the engine/live ratio. The engine is built once, as a run builds it for all its episodes;
   every timed replay opens fresh sessions, so its worlds are seeded inside the timing. When the engine is
   slower, a profiled replay says where its time goes. The engine should be at least as fast as the live
   call it replaces.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cworld.controller.backends.sandbox import to_tool_result
from cworld.data_model import PublicTask, Scenario, ToolResult, ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.preview import check_result
from cworld.environment import Environment, Workspace
from cworld.fidelity.calls import call_agreement
from cworld.fidelity.text import agreement_lines
from cworld.mcp.normalize import from_call_result
from cworld.registry.probe_args import ValueBank, planned_args, probe_order


@dataclass
class Recorded:
    tool: ToolSpec
    arguments: dict[str, Any]
    live: ToolResult


# --- 1. recording live calls -----------------------------------------------------------------------------
def record_sandbox(seed: int, rounds: int) -> tuple[list[Recorded], Scenario]:
    """Every sandbox tool, `rounds` times, live in memory; returns the calls and a scenario of the seeded
    state they started from."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import app_prerequisites, build_server, tool_specs
    from cworld.sandbox.framework.session import SandboxSession
    from cworld.synth.scenario import sandbox_kinds, state_scenario

    session = SandboxSession(seed=seed, apps=all_apps())
    scenario = state_scenario(session.snapshot(), sandbox_kinds(), today=session.clock.now().isoformat())
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
    return out, scenario


def time_live(calls: list[Recorded], seed: int) -> float:
    """The same calls again on a fresh session, timed as the sandbox backend makes them (the server's call
    cycle, then the ToolResult it becomes), without the recording overhead."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import build_all
    from cworld.sandbox.framework.session import SandboxSession

    servers = build_all(SandboxSession(seed=seed, apps=all_apps()))
    started = time.perf_counter()
    for call in calls:
        to_tool_result(servers[call.tool.server].call_tool_sync(call.tool.name, call.arguments), 0.0)
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
async def replay(engine: Any, calls: list[Recorded], seed: int,
                 scenario: Scenario | None = None) -> tuple[list[ToolResult], float]:
    """Each server's calls in one session, in recorded order; the engine's own answers go in its log. With
    a scenario, each session's public task carries it (a task that says nothing else)."""
    def opened() -> SessionLog:
        if scenario is None:
            return SessionLog(seed=seed)
        return SessionLog(seed=seed, context=PublicTask(id="engine-fidelity", query="", scenario=scenario))

    sessions: dict[str, SessionLog] = defaultdict(opened)
    out = []
    started = time.perf_counter()
    for call in calls:
        session = sessions[call.tool.server]
        result = await engine.respond(call.tool, call.arguments, session)
        session.record(call.tool.id, call.arguments, result)
        out.append(result)
    return out, time.perf_counter() - started


# --- 3. comparing ------------------------------------------------------------------------------------------
def report(title: str, calls: list[Recorded], results: list[ToolResult], index: CardIndex) -> list[dict[str, Any]]:
    """The agreement table per card (`call_agreement`), then the schema validity of the engine's successes."""
    cards = [index.card_for(call.tool) for call in calls]
    rows = call_agreement((card.name, call.live, sim) for card, call, sim in zip(cards, calls, results, strict=True))
    valid: dict[str, list[bool]] = defaultdict(list)
    for card, call, sim in zip(cards, calls, results, strict=True):
        if not sim.is_error:
            ok = check_result(call.tool, card, sim)[0]
            valid[card.name].append(ok)
            valid["ALL"].append(ok)
    print(f"\n{title}")
    for line in agreement_lines(rows, label="card"):
        print(line)
    share = lambda name: f"{100 * sum(valid[name]) / len(valid[name]):.1f}%" if valid[name] else "-"  # noqa: E731
    print("engine successes that fit the output schema (or card pattern): ALL " + share("ALL") + " ("
          + ", ".join(f"{r['name']} {share(r['name'])}" for r in rows if r["name"] != "ALL") + ")")
    return rows


def error_agreement(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    return {r["name"]: r["error_agreement"] for r in rows}


# --- 4. speed ----------------------------------------------------------------------------------------------
@dataclass
class Speed:
    calls: int
    live_s: float
    engine_s: float
    cold_s: float
    """the engine's first replay: what it infers once per tool (card, operation, entity, pattern) included"""

    @property
    def ratio(self) -> float:
        """Engine calls per second over live calls per second: >= 1 when the engine keeps up."""
        return self.live_s / self.engine_s


def measure_speed(cards: dict[str, Any], sandbox: list[Recorded], seed: int, repeats: int) -> Speed:
    """Best of `repeats` for each side. One engine serves every replay, as a run builds one engine for all
    its episodes; every replay opens fresh sessions, so the worlds are seeded inside the timing."""
    engine = SchemaEngine(cards, [c.tool for c in sandbox])
    cold = asyncio.run(replay(engine, sandbox, seed))[1]
    live = min(time_live(sandbox, seed) for _ in range(repeats))
    warm = min(asyncio.run(replay(engine, sandbox, seed))[1] for _ in range(repeats))
    return Speed(len(sandbox), live, min(warm, cold), cold)


#: Where an engine call spends its time: (label, function, the caller it is counted under), disjoint parts.
PHASES = (
    ("checking arguments", "_respond", "validation_error"),
    ("world lookup and seeding", "_answer", "collection"),
    ("the operation (handlers)", "_answer", "apply"),
    ("change tracking", "_answer", "before_write"),
    ("change tracking", "_answer", "note_write"),
    ("a new record's values", "_answer", "_freshened"),
    ("shaping the answer (values made up, output validated)", "_answer", "_shaped"),
    ("absorbing shown fields", "_answer", "absorb"),
    ("absorbing shown fields", "_answer", "mark_shown"),
    ("the session log entry", "replay", "record"),
)


def where_time_goes(cards: dict[str, Any], sandbox: list[Recorded], seed: int) -> list[tuple[str, float]]:
    """Shares of one profiled replay's time (warm engine, fresh sessions) by phase of a call."""
    engine = SchemaEngine(cards, [c.tool for c in sandbox])
    asyncio.run(replay(engine, sandbox, seed))
    profile = cProfile.Profile()
    profile.runcall(lambda: asyncio.run(replay(engine, sandbox, seed)))
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = next(v[3] for k, v in stats.items() if k[2] == "replay")
    shares: dict[str, float] = defaultdict(float)
    for label, caller, callee in PHASES:
        for key, (_, _, _, _, callers) in stats.items():
            if key[2] == callee:
                shares[label] += sum(v[3] for c, v in callers.items() if c[2] == caller)
    shares["other (the call's rng, dispatch, results)"] = max(0.0, total - sum(shares.values()))
    return sorted(((label, t / total) for label, t in shares.items()), key=lambda x: -x[1])


def speed(cards: dict[str, Any], sandbox: list[Recorded], seed: int, repeats: int) -> Speed:
    found = measure_speed(cards, sandbox, seed, repeats)
    per_call = lambda s: 1e6 * s / found.calls  # noqa: E731
    print(f"\nspeed on {found.calls} sandbox calls (best of {repeats}): "
          f"live in-memory sandbox {found.calls / found.live_s:,.0f} calls/s ({per_call(found.live_s):.0f} us/call), "
          f"schema engine {found.calls / found.engine_s:,.0f} calls/s ({per_call(found.engine_s):.0f} us/call), "
          f"engine/live {found.ratio:.2f}x; the engine's first replay (tool facts inferred) "
          f"{found.calls / found.cold_s:,.0f} calls/s")
    if found.ratio < 1.0:
        parts = ", ".join(f"{label} {100 * share:.0f}%" for label, share in where_time_goes(cards, sandbox, seed))
        print("  the engine is slower: the live sandbox returns the records it stores, the engine makes its answer "
              "(finds the record, makes up what the world does not hold, fits and validates it against the output "
              f"schema, tracks what writes changed). Its time per call (profiled replay): {parts}")
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

    sandbox, scenario = record_sandbox(opts.seed, opts.rounds)
    real, notes = ([], ["real servers: skipped (--no-real)"]) if opts.no_real else asyncio.run(record_real(env, ws))
    calls = sandbox + real
    print(f"recorded {len(sandbox)} sandbox calls and {len(real)} real-server calls (seed {opts.seed})")
    for note in notes:
        print(f"  {note}")
    print("columns: errors = error/non-error agreement with live; keys / types = JSON key-path overlap and type "
          "agreement where both succeeded; both ok = calls where both succeeded")

    tools = [c.tool for c in calls]
    bare, _ = asyncio.run(replay(SchemaEngine(cards, tools), calls, opts.seed))
    report("schema engine, bare sessions (no scenario: the engine does not know the seeded world)",
                       calls, bare, index)
    grounded, _ = asyncio.run(replay(SchemaEngine(cards, tools), sandbox, opts.seed, scenario))
    grounded_rows = report(f"schema engine, sandbox calls with a scenario of the seeded state "
                           f"({len(scenario.entities)} entities, {len(scenario.relations)} relations)",
                           sandbox, grounded, index)
    bare_sandbox = call_agreement((index.card_for(c.tool).name, c.live, sim) for c, sim in zip(sandbox, bare[: len(sandbox)], strict=True))
    before, after = error_agreement(bare_sandbox), error_agreement(grounded_rows)
    pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    print("error agreement on the sandbox calls, bare -> with scenario: " + ", ".join(
        f"{name} {pct(before.get(name))} -> {pct(value)}" for name, value in after.items()))
    if real:
        print(f"real servers ({', '.join(sorted({c.tool.server for c in real}))}): replayed in bare sessions only; "
              "the engine is not told what their scratch targets hold (no scenario of the files, repository or "
              "database a launch prepares), so it answers from its own seeded world")

    speed(cards, sandbox, opts.seed, opts.repeats)

    if os.environ.get("CWORLD_ENGINE_MODEL"):
        from cworld.engine.llm.engine import LLMEngine
        from cworld.llm import Gateway

        sample = calls[: opts.llm_limit]
        llm = LLMEngine(cards, Gateway.from_workspace(ws), cards_dir=env.category_cards, tools=tools)
        llm_results, llm_s = asyncio.run(replay(llm, sample, opts.seed))
        report(f"llm engine ({llm.model.model}, first {len(sample)} calls, {llm_s:.0f} s)", sample, llm_results, index)
        print(f"llm engine stats: {json.dumps(llm.stats.as_dict())}")
    else:
        print("\nllm engine: skipped (set CWORLD_ENGINE_MODEL to measure it; the mock provider would measure nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
