"""`cworld registry build`: validate every server in parallel and write the registry to the workspace.

```
<workspace>/registry/tools.jsonl      every tool (ToolSpec), availability live | schema-only
<workspace>/registry/validation.json  per server and per tool: stage reached, reason, timings, hashes
<workspace>/registry/index/           the retrieval index and, in it, graph.json: the tool dependency graph
                                      (built by cworld.registry.search.build_search_index)
```

Each server has its own timeout and its failure is its own result: one broken server never stops the
build. A server whose content hash (manifest entry + tool list) is unchanged keeps its previous results;
the index and graph are rebuilt only when the tool list changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from cworld.data_model import ServerSpec, ToolSpec, read_jsonl, write_jsonl_atomic
from cworld.environment import Environment, Workspace
from cworld.errors import CworldError, UsageError
from cworld.registry.launch import LaunchContext
from cworld.registry.manifest import load_manifest, select_servers
from cworld.registry.validate import ServerValidation, ToolValidation
from cworld.registry.validate_server import Check, Hooks, ServerOutcome, check_server

TOOLS_FILE, VALIDATION_FILE, GRAPH_FILE, INDEX_DIR = "tools.jsonl", "validation.json", "graph.json", "index"
DEFAULT_PARALLEL = 4
BUDGET_CALLS = 8
"""A server's whole validation may take its timeout times (this + its number of tools), then it is cut."""


class BuildReport(BaseModel):
    """What validation.json holds."""

    schema_version: str = "1"
    built_at: str = ""
    seconds: float = 0.0
    tools_hash: str = ""
    index: str = "not built"
    graph: str = "not built"
    servers: list[ServerValidation] = Field(default_factory=list)

    def server(self, server_id: str) -> ServerValidation | None:
        return next((s for s in self.servers if s.server == server_id), None)

    def tool(self, tool_id: str) -> ToolValidation | None:
        server, _, name = tool_id.partition("/")
        found = self.server(server)
        return next((t for t in found.tools if t.tool == name), None) if found else None


@dataclass
class Progress:
    """Callbacks a front end (the rich progress bar) hooks into; all optional."""

    server_started: Callable[[str], None] = lambda server: None
    server_done: Callable[[ServerValidation], None] = lambda v: None
    hooks: Hooks = field(default_factory=Hooks)
    #: (documents embedded so far, documents to embed), after each batch of the index build.
    embedded: Callable[[int, int], None] = lambda done, total: None


def registry_dir(workspace: Workspace) -> Path:
    return workspace.path("registry")


def load_report(workspace: Workspace) -> BuildReport | None:
    """The last build's report, or None when there is none (or it is from an unreadable older format)."""
    path = workspace.root / "registry" / VALIDATION_FILE
    if not path.is_file():
        return None
    try:
        return BuildReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError):
        return None


def built_tools_path(workspace: Workspace) -> Path:
    """Where `cworld registry build` writes the validated tool list."""
    return workspace.root / "registry" / TOOLS_FILE


def load_tools(workspace: Workspace) -> list[ToolSpec]:
    """The built tool list; a clear error when the registry was never built."""
    path = built_tools_path(workspace)
    if not path.is_file():
        raise UsageError(f"no registry in {workspace.root}; run `cworld registry build` first")
    return read_jsonl(path, ToolSpec)


async def _check_all(
    env: Environment,
    specs: list[ServerSpec],
    ctx: LaunchContext,
    previous: BuildReport | None,
    *,
    timeout_s: float | None,
    force: bool,
    parallel: int,
    progress: Progress,
    offline: frozenset[str] = frozenset(),
) -> list[ServerOutcome]:
    """Every server at once (up to `parallel`), each under its own budget; those in `offline` (harvested
    servers installed here) in a network namespace of their own."""
    gate = asyncio.Semaphore(max(1, parallel))

    async def one(spec: ServerSpec) -> ServerOutcome:
        async with gate:
            progress.server_started(spec.id)
            before = previous.server(spec.id) if previous else None
            timeout = timeout_s if timeout_s is not None else spec.timeout_s
            budget = timeout * (BUDGET_CALLS + (len(before.tools) if before else 30))
            check = check_server(env, spec, ctx, Check(timeout, before, force, progress.hooks, spec.id in offline))
            started = time.perf_counter()
            try:
                outcome = await asyncio.wait_for(check, budget)
            except TimeoutError:
                outcome = _cut_off(spec, budget, started)
            progress.server_done(outcome.validation)
            return outcome

    return list(await asyncio.gather(*(one(s) for s in specs)))


def _cut_off(spec: ServerSpec, budget: float, started: float) -> ServerOutcome:
    """The result for a server whose whole check outlasted its budget (each call has its own timeout too)."""
    reason = f"validation did not finish within its budget of {budget:.0f}s; cut off"
    elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
    return ServerOutcome(
        ServerValidation(server=spec.id, kind=spec.kind, started=False, reason=reason, total_ms=elapsed_ms)
    )


def _merge(
    specs: list[ServerSpec],
    outcomes: list[ServerOutcome],
    previous: BuildReport | None,
    old_tools: list[ToolSpec],
) -> tuple[list[ServerValidation], list[ToolSpec]]:
    """New results for the servers checked; the previous ones for the rest (`--only`), in manifest order."""
    fresh = {o.validation.server: o for o in outcomes}
    results: list[ServerValidation] = []
    tools: list[ToolSpec] = []
    for spec in specs:
        if spec.id in fresh:
            results.append(fresh[spec.id].validation)
            tools.extend(fresh[spec.id].tools)
        elif previous is not None and (kept := previous.server(spec.id)) is not None:
            results.append(kept)
            tools.extend(t for t in old_tools if t.server == spec.id)
    return results, tools


def tools_digest(tools: list[ToolSpec]) -> str:
    payload = json.dumps([t.model_dump(mode="json") for t in tools], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def server_descriptions(specs: list[ServerSpec]) -> dict[str, str]:
    """The manifest's description, or a sandbox app's own when the manifest gives none."""
    out: dict[str, str] = {}
    for spec in specs:
        text = spec.description
        if not text and spec.kind == "sandbox" and spec.app:
            from cworld.sandbox.catalog import app_by_name

            try:
                text = app_by_name(spec.app).description
            except KeyError:
                text = ""
        out[spec.id] = text
    return out


def build_search_for(
    env: Environment,
    tools: list[ToolSpec],
    folder: Path,
    descriptions: dict[str, str],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[str, str]:
    """The index and the dependency graph (both in `index/`, where `cworld search` and `serve` open them),
    through cworld.registry.search; a failure is reported in the build, not raised."""
    try:
        from cworld.registry.search import build_search_index
    except ImportError as exc:
        return f"skipped: the search package is not available ({exc})", "skipped"
    quality = env.registry / "eval" / "queries.jsonl"
    try:
        built = build_search_index(
            tools,
            folder,
            server_descriptions=descriptions,
            quality_set=quality if quality.is_file() else None,
            progress=progress,
        )
    except CworldError as exc:
        return f"failed: {exc}", "failed: the index did not build"
    meta, stats = built.index.meta, built.stats
    index = (
        f"built: {stats.total} tools ({stats.embedded} embedded, {stats.cached} from the cache, {stats.reused} reused), "
        f"model {meta.model}, "
        f"default ranking {meta.default_method}"
    )
    graph = f"built: {built.graph.number_of_nodes()} tools, {built.graph.number_of_edges()} edges"
    return index, graph


def _write(out: Path, report: BuildReport, tools: list[ToolSpec]) -> None:
    write_jsonl_atomic(out / TOOLS_FILE, tools)
    tmp = out / (VALIDATION_FILE + ".tmp")
    tmp.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / VALIDATION_FILE)


async def build_registry(
    env: Environment,
    workspace: Workspace,
    *,
    only: list[str] | None = None,
    timeout_s: float | None = None,
    force: bool = False,
    parallel: int = DEFAULT_PARALLEL,
    servers_dir: Path | None = None,
    progress: Progress | None = None,
    with_index: bool = True,
    harvested: bool = False,
) -> BuildReport:
    """Validate the manifest's servers and write the registry; see the module docstring.

    `harvested`: the harvested catalog (`registry/catalogs/harvested/`) is loaded too, schema-only, except
    the harvested servers installed and validated here, which run live (`harvest/live.py`).
    """
    started = time.perf_counter()
    servers_dir = servers_dir or workspace.root / "servers"
    specs = load_manifest(env, harvested=harvested)
    offline: frozenset[str] = frozenset()
    if harvested:
        from cworld.registry.harvest.live import live_specs, with_live

        specs = with_live(specs, servers_dir)  # `cworld servers install --harvested NAME` made them live
        offline = frozenset(live_specs(servers_dir))  # validated without the network, as they were harvested
    chosen = select_servers(specs, only)
    out = registry_dir(workspace)
    previous = load_report(workspace)
    old_tools = read_jsonl(out / TOOLS_FILE, ToolSpec) if (out / TOOLS_FILE).is_file() else []
    scratch_root = workspace.path("scratch") / f"build-{os.getpid()}-{int(time.time())}"
    ctx = LaunchContext(workspace.root, servers_dir, scratch_root)
    try:
        outcomes = await _check_all(
            env,
            chosen,
            ctx,
            previous,
            timeout_s=timeout_s,
            force=force,
            parallel=parallel,
            progress=progress or Progress(),
            offline=offline,
        )
    finally:
        await asyncio.to_thread(ctx.close)
        ctx.discard_scratch()
    results, tools = _merge(specs, outcomes, previous, old_tools)
    report = BuildReport(
        built_at=time.strftime("%Y-%m-%dT%H:%M:%S"), tools_hash=tools_digest(tools), servers=results
    )
    unchanged = previous is not None and previous.tools_hash == report.tools_hash and not force
    report.seconds = round(time.perf_counter() - started, 2)
    _write(out, report, tools)  # before the index: a build stopped while embedding still leaves its tools
    if with_index:
        report.index, report.graph = await asyncio.to_thread(
            _derived, env, tools, out, server_descriptions(specs), previous if unchanged else None,
            (progress or Progress()).embedded,
        )
        report.seconds = round(time.perf_counter() - started, 2)
        _write(out, report, tools)
    return report


def _derived(
    env: Environment,
    tools: list[ToolSpec],
    out: Path,
    descriptions: dict[str, str],
    unchanged_from: BuildReport | None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[str, str]:
    """Index and graph: kept as they are when the tool list did not change and both are on disk."""
    folder = out / INDEX_DIR
    have_both = (folder / "meta.json").is_file() and (folder / GRAPH_FILE).is_file()
    if unchanged_from is not None and have_both and unchanged_from.index.startswith(("built", "unchanged")):
        return _unchanged(unchanged_from.index), _unchanged(unchanged_from.graph)
    return build_search_for(env, tools, folder, descriptions, progress)


def _unchanged(status: str) -> str:
    return status if status.startswith("unchanged") else f"unchanged ({status})"


def summary(report: BuildReport) -> dict[str, Any]:
    """What `--json` prints: counts per server and per stage, and totals."""
    servers: dict[str, Any] = {}
    totals = {"unavailable": 0, "available": 0, "invocable": 0, "usable": 0}
    for s in report.servers:
        counts = s.stage_counts()
        live = s.kind != "catalog"
        if live:
            for key, n in counts.items():
                totals[key] += n
        servers[s.server] = {
            "kind": s.kind,
            "started": s.started,
            "tools": len(s.tools),
            "stages": counts if live else {"schema_only": len(s.tools)},
            "reused": s.reused,
            "seconds": round((s.total_ms or 0) / 1000, 2),
            "reason": s.reason if not s.started else None,
        }
    all_tools = [t for s in report.servers for t in s.tools]
    return {
        "servers": servers,
        "stages": totals,
        "tools": {
            "total": len(all_tools),
            "live": sum(t.availability == "live" for t in all_tools),
            "schema_only": sum(t.availability == "schema-only" for t in all_tools),
        },
        "servers_started": sum(s.started for s in report.servers),
        "servers_total": len(report.servers),
        "index": report.index,
        "graph": report.graph,
        "seconds": report.seconds,
    }
