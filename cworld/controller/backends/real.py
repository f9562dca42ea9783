"""The real-server half of live mode: MCP servers from the manifest, with fresh scratch space per episode.

A server whose launch names `{scratch}` (a folder, a git repository, a SQLite file) gets its own copy
under `<workspace>/scratch/episodes/<task-agent-mode-policy>-s<seed>-p<pid>-<n>/`, so one episode's writes
never leak into the next or into a concurrent one; the servers are started per episode through the
episode's own `ServerPool`, and the scratch folder is removed when the episode closes (`keep_scratch`
keeps it for inspection). A crash mid-call comes back from the
connection as a `server_crash` result: an infrastructure error, retried by the runner, never the agent's.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model import ServerSpec, ToolResult, ToolSpec
from cworld.environment import Workspace
from cworld.mcp import Connection, ServerPool
from cworld.registry.launch import LaunchContext, resolve
from cworld.registry.services import Services, ServiceUnavailable


@dataclass
class LiveResources:
    """What episodes of one run may share: local services (PostgreSQL, the page server).

    Create one per run and pass it to every `build_controller`; without it each episode starts (and
    stops) the services it needs.
    """

    services: Services = field(default_factory=Services)

    def close(self) -> None:
        self.services.close()


_OPENED = itertools.count(1)
"""Numbers episodes opened in this process: two concurrent episodes never share a scratch folder."""


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:120] or "episode"


class RealServerBackend:
    mode = "live"

    def __init__(self, specs: Mapping[str, ServerSpec], workspace: Workspace, *, episode: str = "episode",
                 resources: LiveResources | None = None, max_restarts: int = 2, keep_scratch: bool = False) -> None:
        self.specs = dict(specs)
        self.workspace = workspace
        self.episode = _safe(episode)
        self.max_restarts = max_restarts
        self.keep_scratch = keep_scratch
        self._given = resources
        self.resources = resources or LiveResources()
        self.pool: ServerPool | None = None
        self.connections: dict[str, Connection] = {}
        """The episode's connection per server id (for diagnostics and tests)."""
        self.scratch_root: Path | None = None
        self._added: set[str] = set()
        self._lock = asyncio.Lock()
        self._ctx: LaunchContext | None = None

    async def open(self, seed: int) -> None:
        await self.close()
        unique = f"{self.episode}-s{seed}-p{os.getpid()}-{next(_OPENED)}"
        self.scratch_root = self.workspace.scratch / "episodes" / unique
        if self._given is None:
            self.resources = LiveResources()
        self._ctx = LaunchContext(self.workspace.root, self.workspace.servers, self.scratch_root,
                                  services=self.resources.services)
        self.pool = ServerPool()
        self._added = set()
        self.connections = {}

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        if self.pool is None:
            return ToolResult.error("not_found", f"not_found: the episode is not open; cannot call {tool.id}")
        refusal = await self._ensure(tool.server)
        if refusal is not None:
            return refusal
        return await self.pool.call(tool.server, tool.name, arguments)

    async def _ensure(self, server_id: str) -> ToolResult | None:
        """Resolve and register the server on first use in this episode; a failure is a result."""
        async with self._lock:
            if server_id in self._added:
                return None
            spec = self.specs.get(server_id)
            if spec is None:
                return ToolResult.error("not_found", f"not_found: no real MCP server '{server_id}' in the manifest")
            assert self._ctx is not None and self.pool is not None
            try:
                resolved = await asyncio.to_thread(resolve, spec, self._ctx)
            except ServiceUnavailable as exc:
                return ToolResult.error("unavailable", f"unavailable: {server_id}: {exc}", server=server_id)
            connection = Connection.from_spec(resolved, max_restarts=self.max_restarts)
            self.pool.add(connection)
            self.connections[server_id] = connection
            self._added.add(server_id)
            return None

    async def end_state(self) -> dict[str, Any] | None:
        """The files the episode's servers left in their scratch space (path -> size), for inspection."""
        if self.scratch_root is None or not self.scratch_root.is_dir():
            return None
        files = sorted(p for p in self.scratch_root.rglob("*") if p.is_file() and ".git" not in p.parts)
        return {str(p.relative_to(self.scratch_root)): p.stat().st_size for p in files}

    async def close(self) -> None:
        await self._close_pool()
        if self.scratch_root is not None and not self.keep_scratch:
            await asyncio.to_thread(shutil.rmtree, self.scratch_root, True)
        if self._given is None:
            await asyncio.to_thread(self.resources.close)

    async def _close_pool(self) -> None:
        if self.pool is not None:
            await self.pool.close_all()
            self.pool = None
