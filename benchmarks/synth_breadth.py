"""How much of the harvested pool the goal shapes can draw on, and how much of it a task set uses (issue 34,
item 2: over 1,000 tasks >= 1,500 distinct harvested tools on >= 200 servers, no tool in > 3% of tasks).

`pool` builds the world engine and the action space as `cworld synth --pool harvested` does and counts, for
the harvested tools described in English: what the engine runs them by (family, inferred, simulated), why
each tool is no unit (`ActionSpace.left_out`, split by whether its rule checks something), the units per
use and how many play a part, the finders, and per shape slot the units that fit it (the sampler's own
tests, before caps and server choice). The union of every fitting unit and its finders is the ceiling of
distinct tools a run can reach.

`draws` runs the shape sampler alone, every draw taken as accepted: the breadth the draws allow before any
composition fails.

`finders` runs every finder of the pool once (seed 0, no arguments) and counts those whose answer the
composer can read a named record from (`outcome.answer_value`, then the lists in it), and of those that
answer one field of JSON text (`{"result": "<JSON text>"}`) how many are read (another copy of `cworld`
first on `PYTHONPATH` reads them as that copy does; it needs `agents.references.json_in_text`).

`tasks FILE` counts what a tasks file uses over its gold plans: distinct harvested tools and servers, how
many play a part (the engine runs them by a family or inferred rule whose `check` is not empty), the most
used tool's share, tools per task, shapes, and the verifiable share. `run` synthesizes a task set first (as
`cworld synth --pool harvested` does, in-process) and adds its rejections grouped by code, shape and gist,
and the servers some rejected attempt drew that no accepted task uses, with their commonest rejections
(where a run loses servers).

    python benchmarks/synth_breadth.py pool [--json]
    python benchmarks/synth_breadth.py draws --n 1000 [--json]
    python benchmarks/synth_breadth.py finders [--json]
    python benchmarks/synth_breadth.py tasks FILE [--json]
    python benchmarks/synth_breadth.py run [FILE] --n 200 --seed S [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("CWORLD_EMBED_MODEL", "hash")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _setup(workspace: Path) -> tuple[Any, Any, Any]:
    """(the tool universe, the world engine, the shape sampler) of a harvested-pool run, as `prepare` builds
    them."""
    from cworld.environment import Environment, Workspace
    from cworld.synth import api
    from cworld.synth.options import SynthOptions
    from cworld.synth.toolset import load_universe

    env, ws = Environment.resolve(), Workspace.resolve(workspace)
    universe = load_universe(env, ws, need_search=False, harvested=True)
    engine = api._engine(env, ws, universe)
    _, sampler = api._shape_sampler(env, universe, SynthOptions(n=1000, pool="harvested"), engine)
    return universe, engine, sampler


def _checks(engine: Any, tool: Any, arguments: dict[str, Any] | None = None) -> tuple[str, bool]:
    """(where the tool's rule comes from, whether it plays a part: run by a rule that checks something); with
    `arguments`, the rule a call with them runs (a multi-operation tool's `operation: get` runs the get's)."""
    rule, origin = engine.rule_for(tool, arguments)
    return origin, rule is not None and origin != "simulated" and rule.refuses


def pool(workspace: Path) -> dict[str, Any]:
    started = time.perf_counter()
    universe, engine, sampler = _setup(workspace)
    space = sampler.space
    considered = [t for t in universe.tools.values() if t.server in universe.harvested]
    origins: Counter[str] = Counter()
    playing: set[str] = set()
    for tool in considered:
        origin, plays = _checks(engine, tool)
        origins[origin] += 1
        if plays:
            playing.add(tool.id)
    left = Counter(space.left_out.values())
    left_playing = Counter(why for tid, why in space.left_out.items() if tid in playing)
    units = list(space.units.values())
    finders = {t.id: t for found in space.finders.values() for t in found}
    slots = _slots(sampler)
    excluded = _excluded(sampler)
    reach: set[str] = set()
    for info in slots.values():
        reach |= set(info.pop("_tools"))
    reach_servers = {universe.tools[t].server for t in reach}
    return {
        "harvested_tools": len(considered),
        "servers": len({t.server for t in considered}),
        "rule_origin": dict(origins.most_common()),
        "rule_checks_something": len(playing),
        "left_out": dict(left.most_common()),
        "left_out_of_those_that_check": dict(left_playing.most_common()),
        "units": dict(Counter(u.use for u in units)),
        "units_play": dict(Counter(u.use for u in units if u.plays)),
        "unit_servers": len({u.server for u in units}),
        "finders": len(finders),
        "finder_servers": len({t.server for t in finders.values()}),
        "slots": slots,
        "excluded_by": excluded,
        "reachable_tools": len(reach),
        "reachable_playing": len(reach & playing),
        "reachable_servers": len(reach_servers),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _slots(sampler: Any) -> dict[str, dict[str, Any]]:
    """Per shape slot, the units that fit it as the sampler tests them (need, meaning, finder), with the
    finder each would take; caps, affinity and server choice left aside."""
    from cworld.synth.goal_shapes import Drawn

    out: dict[str, dict[str, Any]] = {}
    for shape in sampler.shapes.values():
        before: dict[str, set[str]] = {}  # the slot before's record words -> their servers (for `alike`)
        for slot in shape.slots:
            fit: set[str] = set()
            servers: set[str] = set()
            heads: dict[str, set[str]] = {}
            test = replace(slot, needs=slot.needs - {"alike"})
            for use in slot.uses:
                for unit in sampler._by_use[use]:
                    if slot.same or not sampler._fits(unit, test, Drawn(shape, {})) or not sampler._means(unit, slot):
                        continue
                    head = sampler._head(unit)
                    if "alike" in slot.needs and (head not in sampler.nouns.get("records", ())
                                                  or not before.get(head, set()) - {unit.server}):
                        continue
                    heads.setdefault(head, set()).add(unit.server)
                    finders = sampler.finders_for(unit) if unit.use != "find" else []
                    if "finder" in slot.needs and not finders and unit.use != "find":
                        continue
                    fit.add(unit.id)
                    fit.update(t.id for t in finders)
                    servers.add(unit.server)
            out[f"{shape.name}.{slot.name}"] = {"tools": len(fit), "servers": len(servers), "_tools": sorted(fit)}
            before = heads
    return out


def _excluded(sampler: Any) -> dict[str, dict[str, int]]:
    """Per shape slot, of the units of its uses, how many each requirement alone refuses (the sampler's own
    tests, one need at a time: `cards`, each of `needs`, and `finder`): which requirement narrows a slot
    most. A unit refused by several counts under each."""
    from cworld.synth.goal_shapes import Drawn

    out: dict[str, dict[str, int]] = {}
    for shape in sampler.shapes.values():
        for slot in shape.slots:
            units = [u for use in slot.uses for u in sampler._by_use[use]]
            refused: Counter[str] = Counter({"units": len(units)})
            for need in sorted(slot.needs - {"alike"}) + ["cards"]:
                test = replace(slot, needs=frozenset({need}) if need != "cards" else frozenset(),
                               cards=slot.cards if need == "cards" else ())
                for unit in units:
                    if need == "finder":
                        refused[need] += unit.use != "find" and not sampler.finders_for(unit)
                    elif not (sampler._fits(unit, test, Drawn(shape, {})) and sampler._means(unit, test)):
                        refused[need] += 1
            out[f"{shape.name}.{slot.name}"] = dict(refused)
    return out


def draws(n: int, workspace: Path) -> dict[str, Any]:
    """The sampler alone: `n` draws (each with its own seeded RNG, `random.Random(i)`) as if every one were
    accepted, so composition failures are left aside: the breadth the draws themselves allow."""
    import random

    _, _, sampler = _setup(workspace)
    shapes: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for i in range(n):
        _, drawn = sampler.sample(random.Random(i))
        sampler.settle(drawn, accepted=True)
        shapes[drawn.shape.name] += 1
        used.update(drawn.tools())
    return {"draws": n, "distinct_tools": len(used), "servers": len({t.split("/", 1)[0] for t in used}),
            "most_used_share": round(max(used.values()) / n, 4), "shapes": dict(shapes.most_common())}


def finders(workspace: Path) -> dict[str, Any]:
    """Each finder of the action space run once with no arguments: how many answer, and how many answer a
    list holding a record a request can name, as the composer reads it (`ShapeDrafter.listing`)."""
    from cworld.agents.references import json_in_text
    from cworld.engine import SessionLog
    from cworld.synth.offline.goal_chain import _lists
    from cworld.synth.offline.shape_chain import named_records
    from cworld.synth.outcome import answer_value

    started = time.perf_counter()
    _, engine, sampler = _setup(workspace)
    tools = {t.id: t for found in sampler.space.finders.values() for t in found}
    counts: Counter[str] = Counter()
    readable: set[str] = set()
    for tool in sorted(tools.values(), key=lambda t: t.id):
        answer = engine.respond_sync(tool, {}, SessionLog(seed=0))
        body = answer.structured_content
        wrapped = isinstance(body, dict) and len(body) == 1 and json_in_text(next(iter(body.values()))) is not None
        counts["wrapped"] += wrapped
        if answer.is_error:
            counts["refused"] += 1
            continue
        if any(named_records(items) for _, items in _lists(answer_value(answer))):
            readable.add(tool.id)
            counts["wrapped_readable"] += wrapped
    return {"finders": len(tools), "finder_servers": len({t.server for t in tools.values()}),
            "refused": counts["refused"], "readable": len(readable),
            "readable_servers": len({tools[t].server for t in readable}),
            "answer_one_json_text": counts["wrapped"], "of_those_readable": counts["wrapped_readable"],
            "seconds": round(time.perf_counter() - started, 1)}


def tasks(path: Path, workspace: Path) -> dict[str, Any]:
    from cworld.data_model import Task, read_jsonl

    loaded = list(read_jsonl(path, Task))
    universe, engine, _ = _setup(workspace)
    harvested = {t.id: t for t in universe.tools.values() if t.server in universe.harvested}
    used: Counter[str] = Counter()
    for task in loaded:
        used.update({s.tool for s in task.gold_plan if s.tool in harvested})
    # a tool plays a part where a call of the plan runs a rule that checks something
    plays = {s.tool for task in loaded for s in task.gold_plan
             if s.tool in harvested and _checks(engine, harvested[s.tool], s.arguments)[1]}
    servers = {harvested[t].server for t in used}
    per_server: dict[str, set[str]] = defaultdict(set)
    for t in plays:
        per_server[harvested[t].server].add(t)
    top = used.most_common(1)[0] if used else ("", 0)
    return {
        "tasks": len(loaded),
        "verifiable": sum(t.verifiable for t in loaded),
        "shapes": dict(Counter(str(t.metadata.get("shape")) for t in loaded).most_common()),
        "distinct_tools": len(used),
        "tools_that_play": len(plays),
        "servers": len(servers),
        "servers_with_a_tool_that_plays": len(per_server),
        "most_used_tool": top[0],
        "most_used_share": round(top[1] / max(1, len(loaded)), 4),
        "tools_per_task": round(sum(len({s.tool for s in t.gold_plan if s.tool in harvested}) for t in loaded)
                                / max(1, len(loaded)), 2),
        "_servers": sorted(servers),
    }


def run(n: int, seed: int, concurrency: int, workspace: Path, out: Path) -> dict[str, Any]:
    """`cworld synth --n N --pool harvested --seed S` in-process, with every rejection's reason grouped (the
    summary keeps one example per code): which compose failure costs the most attempts."""
    import asyncio

    from cworld.environment import Environment, Workspace
    from cworld.synth import SynthOptions, prepare, run_prepared

    started = time.perf_counter()
    options = SynthOptions(n=n, seed=seed, concurrency=concurrency, pool="harvested")
    prepared = prepare(Environment.resolve(), Workspace.resolve(workspace), options, out=out)
    result, summary = asyncio.run(run_prepared(prepared))
    reasons: Counter[str] = Counter()
    lost: dict[str, Counter[str]] = defaultdict(Counter)
    for outcome in result.rejected:
        sampled = next((p for p in outcome.provenance if p.get("stage") == "sample"), {})
        shape = str(sampled.get("retrieval_query", "")).removeprefix("shape: ")
        reasons[f"{outcome.code} [{shape}]: {_gist(outcome.reason)}"] += 1
        for server in {str(t).split("/", 1)[0] for t in sampled.get("candidates") or []}:
            lost[server][f"{outcome.code} [{shape}]: {_gist(outcome.reason)}"] += 1
    counted = tasks(out, workspace)
    reached = set(counted.pop("_servers"))
    unreached = {s: dict(c.most_common(2)) for s, c in sorted(lost.items()) if s not in reached}
    return {"accepted": summary.accepted, "attempts": result.attempts,
            "minutes": round((time.perf_counter() - started) / 60, 2), "rejections": dict(reasons.most_common(25)),
            **counted, "servers_drawn_never_accepted": len(unreached), "never_accepted": unreached}


def _gist(reason: str) -> str:
    """A rejection reason without its record names and ids, so alike failures count together."""
    import re

    text = re.sub(r"'[^']*'|\{\{[^}]*\}\}|\b[\w.-]+/[\w.-]+\b|\d+", "_", reason.removeprefix("no workable draft: "))
    return text[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["pool", "draws", "finders", "tasks", "run"])
    parser.add_argument("file", nargs="?", type=Path, help="tasks: the file to count; run: where to write")
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--workspace", type=Path, help="workspace whose worlds to use (default: a fresh one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = args.workspace or Path(tmp) / "ws"
        if args.what == "tasks":
            if args.file is None:
                parser.error("tasks needs FILE")
            result = tasks(args.file, workspace)
            result.pop("_servers")
        elif args.what == "draws":
            result = draws(args.n, workspace)
        elif args.what == "finders":
            result = finders(workspace)
        elif args.what == "run":
            result = run(args.n, args.seed, args.concurrency, workspace, args.file or Path(tmp) / "tasks.jsonl")
        else:
            result = pool(workspace)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            print(f"{key}:")
            for name, info in value.items():
                print(f"  {name:<22} " + ", ".join(f"{k} {v}" for k, v in info.items()))
        else:
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
