"""Validate one server of the manifest end to end: start it, list its tools, probe them.

Each kind starts differently: a sandbox app runs in memory in a throwaway session (so destructive tools
change nothing that lasts), a real server is launched against its scratch targets and services, a
catalog is read from its file. A server whose tools and manifest entry hash as before keeps its previous
results (stage (i) is still checked: the server must start and list the same tools).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model import ServerSpec, ToolSpec
from cworld.environment import Environment
from cworld.errors import ContentError
from cworld.mcp import Connection, ServerStartError
from cworld.registry.harvest.netns import Isolation, network_isolation
from cworld.registry.install import entry_path
from cworld.registry.launch import LaunchContext, resolve
from cworld.registry.manifest import load_catalog
from cworld.registry.probe_args import ValueBank
from cworld.registry.services import ServiceUnavailable
from cworld.registry.validate import ServerValidation, ToolValidation, schema_only_results, validate_tools

#: Part of every content hash: bump it when validation rules change, so old results are not reused.
VALIDATOR_VERSION = "1"
SANDBOX_SEED = 0

log = logging.getLogger("cworld.registry")


@dataclass
class Hooks:
    """Progress callbacks: tools listed for a server, one tool validated."""

    on_listed: Callable[[str, int], None] = lambda server, n: None
    on_tool: Callable[[ToolValidation], None] = lambda v: None


@dataclass
class ServerOutcome:
    validation: ServerValidation
    tools: list[ToolSpec] = field(default_factory=list)


def content_hash(spec: ServerSpec, tools: list[ToolSpec], code: str = "") -> str:
    """Manifest entry + tool list + which credentials are set (names, never values) + validator version,
    plus `code`: a digest of a sandbox app's source, whose behaviour can change under the same schemas."""
    payload = {
        "spec": spec.model_dump(mode="json"),
        "tools": [t.model_dump(mode="json") for t in tools],
        "credentials_set": sorted(n for n in spec.credentials if os.environ.get(n)),
        "validator": VALIDATOR_VERSION,
        "code": code,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def source_digest(*folders: Path) -> str:
    """A digest of every file in the folders (caches aside): a sandbox app's package, the framework it runs
    on and the knowledge base its state is sampled from."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _categorized(spec: ServerSpec, tools: list[ToolSpec], fallback: str | None = None) -> list[ToolSpec]:
    """Tool categories: explicit per tool in the manifest, else the app's, else the server's first hint."""
    hint = fallback or (spec.category_hints[0] if spec.category_hints else None)
    return [
        t.model_copy(update={"category": spec.tool_categories.get(t.name) or t.category or hint})
        for t in tools
    ]


def _reusable(previous: ServerValidation | None, digest: str, tools: list[ToolSpec]) -> bool:
    return (
        previous is not None
        and previous.started
        and previous.content_hash == digest
        and [t.tool for t in previous.tools] == [t.name for t in tools]
    )


def _apply_availability(tools: list[ToolSpec], results: list[ToolValidation]) -> list[ToolSpec]:
    by_name = {r.tool: r.availability for r in results}
    return [t.model_copy(update={"availability": by_name.get(t.name, t.availability)}) for t in tools]


async def check_catalog(env: Environment, spec: ServerSpec) -> ServerOutcome:
    tools = _categorized(spec, load_catalog(env, spec))
    results = schema_only_results(tools, "schema-only catalog: described, not runnable here")
    validation = ServerValidation(
        server=spec.id,
        kind=spec.kind,
        started=False,
        reason="schema-only catalog",
        content_hash=content_hash(spec, tools),
        tools=results,
    )
    return ServerOutcome(validation, tools)


@dataclass
class Check:
    """How one server is checked: the time budget, the previous results to reuse, progress callbacks."""

    timeout_s: float
    previous: ServerValidation | None = None
    force: bool = False
    """Probe again even when the previous results could be reused."""
    hooks: Hooks = field(default_factory=Hooks)
    offline: bool = False
    """Start a stdio server in a network namespace of its own (harvested servers: `harvest/netns.py`)."""

    def connect(self, spec: ServerSpec, server: Any = None) -> Connection:
        return Connection.from_spec(spec, server=server, handshake_timeout_s=self.timeout_s,
                                    default_timeout_s=self.timeout_s, max_restarts=1)


async def _run_live(
    conn: Connection,
    spec: ServerSpec,
    check: Check,
    *,
    has_scratch: bool,
    bank: ValueBank,
    edges: list[tuple[str, str]],
    category: str | None = None,
    hash_spec: ServerSpec | None = None,
    code: str = "",
) -> ServerOutcome:
    """Start, list, then probe (or reuse): shared by sandbox apps and real servers."""
    hooks, previous = check.hooks, check.previous
    started = time.perf_counter()
    try:
        await conn.start()
    except ServerStartError as err:
        return ServerOutcome(
            ServerValidation(
                server=spec.id, kind=spec.kind, started=False, reason=str(err), start_ms=_ms(started)
            )
        )
    start_ms = _ms(started)
    listed_at = time.perf_counter()
    tools = _categorized(spec, await conn.list_tools(), category)
    list_ms = _ms(listed_at)
    hooks.on_listed(spec.id, len(tools))
    digest = content_hash(hash_spec or spec, tools, code)
    if not check.force and _reusable(previous, digest, tools):
        assert previous is not None
        for result in previous.tools:
            hooks.on_tool(result)
        validation = previous.model_copy(update={"reused": True, "start_ms": start_ms, "list_ms": list_ms})
        return ServerOutcome(validation, _apply_availability(tools, previous.tools))
    results = await validate_tools(
        conn,
        spec,
        tools,
        timeout_s=check.timeout_s,
        has_scratch=has_scratch,
        bank=bank,
        edges=edges,
        on_tool=hooks.on_tool,
    )
    validation = ServerValidation(
        server=spec.id,
        kind=spec.kind,
        started=True,
        reason="started and listed tools",
        content_hash=digest,
        start_ms=start_ms,
        list_ms=list_ms,
        tools=results,
    )
    return ServerOutcome(validation, _apply_availability(tools, results))


async def check_sandbox(spec: ServerSpec, check: Check) -> ServerOutcome:
    """In memory, in a session made for this check alone and dropped after it."""
    from cworld.sandbox.catalog import all_apps, app_by_name
    from cworld.sandbox.framework import SandboxSession
    from cworld.sandbox.framework.server import app_prerequisites, build_server

    try:
        app_cls = app_by_name(spec.app or "")
    except KeyError as exc:
        raise ContentError(f"servers.yaml: server '{spec.id}': {exc.args[0]}") from None
    session = SandboxSession(seed=SANDBOX_SEED, apps=all_apps())
    bank = ValueBank(now=session.clock.now())
    bank.seed(session.state.get(app_cls.name, {}))
    edges = [
        (e.before.split("/", 1)[1], e.after.split("/", 1)[1])
        for e in app_prerequisites(app_cls)
        if e.before.startswith(f"{app_cls.name}/") and e.after.startswith(f"{app_cls.name}/")
    ]
    framework = Path(inspect.getfile(SandboxSession)).parent
    code = source_digest(Path(inspect.getfile(app_cls)).parent, framework, framework.parent / "kb")
    async with check.connect(spec, build_server(session, app_cls.name)) as conn:
        return await _run_live(conn, spec, check, has_scratch=True, bank=bank, edges=edges,
                               category=app_cls.category, code=code)


def uses_scratch(spec: ServerSpec) -> bool:
    text = " ".join([spec.command or "", *spec.args, *spec.env.values(), spec.url or ""])
    return "{scratch" in text


async def check_real(spec: ServerSpec, ctx: LaunchContext, check: Check) -> ServerOutcome:
    """Launched against scratch targets and local services made for this run."""
    entry = entry_path(spec, ctx.servers_dir)
    if not spec.command and entry is not None and not entry.exists():
        reason = f"not installed ({entry} is missing); run `cworld servers install`"
        return ServerOutcome(ServerValidation(server=spec.id, kind=spec.kind, started=False, reason=reason))
    try:
        resolved = await asyncio.to_thread(resolve, spec, ctx)
    except ServiceUnavailable as exc:
        return ServerOutcome(
            ServerValidation(server=spec.id, kind=spec.kind, started=False, reason=f"unavailable: {exc}")
        )
    if resolved.transport == "stdio" and not resolved.command:
        return ServerOutcome(
            ServerValidation(
                server=spec.id,
                kind=spec.kind,
                started=False,
                reason="no command to launch; run `cworld servers install`",
            )
        )
    isolation = offline_launch(resolved) if check.offline else None
    if isolation is not None:
        argv = isolation.wrap([resolved.command or "", *resolved.args])
        resolved = resolved.model_copy(update={"command": argv[0], "args": argv[1:]})
    conn = check.connect(resolved)
    try:
        outcome = await _run_live(conn, resolved, check, has_scratch=uses_scratch(spec), bank=ValueBank(), edges=[],
                                  hash_spec=spec)
    finally:
        await conn.close()
    if isolation is not None:
        outcome.validation.reason += " (offline: no network beyond its loopback)"
    return outcome


def offline_launch(spec: ServerSpec) -> Isolation | None:
    """The network namespace a stdio server is validated in; None (said once in the log) where none can be
    made, or for an HTTP server (it runs elsewhere)."""
    if spec.transport != "stdio":
        return None
    isolation = network_isolation()
    if not isolation.offline:
        _say_once(f"{isolation.reason}: harvested servers are validated with this machine's network")
        return None
    return isolation


@functools.cache
def _say_once(line: str) -> None:
    log.warning(line)


async def check_server(env: Environment, spec: ServerSpec, ctx: LaunchContext, check: Check | None = None
                       ) -> ServerOutcome:
    """Validate one server (default: under the spec's own timeout, nothing to reuse); anything that goes
    wrong becomes a result for that server, never an exception."""
    check = check or Check(spec.timeout_s)
    started = time.perf_counter()
    try:
        if spec.kind == "catalog":
            outcome = await check_catalog(env, spec)
        elif spec.kind == "sandbox":
            outcome = await check_sandbox(spec, check)
        else:
            outcome = await check_real(spec, ctx, check)
    except Exception as exc:  # one broken server never stops the build: its failure is its result
        reason = f"validation failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        outcome = ServerOutcome(
            ServerValidation(server=spec.id, kind=spec.kind, started=False, reason=reason)
        )
    outcome.validation.total_ms = _ms(started)
    return outcome


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 1)
