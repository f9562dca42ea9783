"""Which tools an environment has, answered in one place: `environment_tools(env, workspace)`.

The tools come in layers. The sandbox apps' tools are always there (they run in-process). A built
registry (`cworld registry build`, `<workspace>/registry/tools.jsonl`) lists every validated tool of
the manifest. Without a build, what is known without starting a server stands in for it: the
manifest's schema-only catalogs and the real servers' listings recorded in the environment
(`registry/recorded/real_tools.json`).

Parts take the layers they need from the one `ToolList`: an episode (and the judge, report and
export that read it) `episode()`, the sandbox's tools with the built registry's (unbuilt: the
catalogs') over them; synthesis
`merged(recorded=False)`; the engine commands the whole list, `tools`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from cworld.data_model import ServerSpec, Task, ToolSpec, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.errors import CworldError, UsageError

RECORDED_TOOLS = Path("recorded") / "real_tools.json"
"""The real servers' tool listings, recorded from their MCP servers, under the environment's `registry/`."""


@cache
def _sandbox_specs() -> tuple[ToolSpec, ...]:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import tool_specs

    return tuple(spec for app in all_apps() for spec in tool_specs(app))


def sandbox_tools() -> dict[str, ToolSpec]:
    """Every sandbox app's tools, exactly as their MCP servers list them."""
    return {t.id: t for t in _sandbox_specs()}


def recorded_tools(env: Environment) -> list[ToolSpec]:
    """The real servers' recorded tool definitions; empty when the environment has none."""
    path = env.registry / RECORDED_TOOLS
    if not path.is_file():
        return []
    return [ToolSpec.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]


def by_id(tools: list[ToolSpec]) -> dict[str, ToolSpec]:
    return {t.id: t for t in tools}


@dataclass
class ToolList:
    """The environment's tools by layer; each layer is read on first use."""

    env: Environment | None
    workspace: Workspace | None

    @cached_property
    def sandbox(self) -> dict[str, ToolSpec]:
        return sandbox_tools()

    @property
    def built_path(self) -> Path | None:
        from cworld.registry.build import built_tools_path

        return built_tools_path(self.workspace) if self.workspace else None

    @cached_property
    def built(self) -> list[ToolSpec] | None:
        """The built registry's tools in their file's order; None when the registry was never built."""
        path = self.built_path
        return read_jsonl(path, ToolSpec) if path is not None and path.is_file() else None

    @cached_property
    def _manifest(self) -> tuple[dict[str, ServerSpec], str | None]:
        from cworld.registry.manifest import load_manifest

        if self.env is None:
            return {}, None
        try:
            return {s.id: s for s in load_manifest(self.env)}, None
        except CworldError as exc:
            return {}, str(exc)

    @property
    def servers(self) -> dict[str, ServerSpec]:
        """The manifest's servers by id; empty when there is no environment or its manifest is broken."""
        return self._manifest[0]

    @property
    def manifest_error(self) -> str | None:
        return self._manifest[1]

    @cached_property
    def catalogs(self) -> list[ToolSpec]:
        """The manifest's schema-only catalog tools."""
        from cworld.registry.manifest import load_catalog

        env = self.env
        if env is None:
            return []
        catalogs = [spec for spec in self.servers.values() if spec.kind == "catalog"]
        return [t for spec in catalogs for t in load_catalog(env, spec)]

    @cached_property
    def harvested(self) -> list[ToolSpec]:
        """The harvested catalog's tools (`registry/catalogs/harvested/`), read from its files: the pool
        `cworld synth --pool harvested` draws from when no build holds them."""
        from cworld.registry.harvest.catalog import harvested_specs
        from cworld.registry.manifest import load_catalog

        env = self.env
        if env is None:
            return []
        return [t for spec in harvested_specs(env, set(self.servers)) for t in load_catalog(env, spec)]

    @cached_property
    def recorded(self) -> list[ToolSpec]:
        return recorded_tools(self.env) if self.env is not None else []

    # --- views --------------------------------------------------------------------------------
    def episode(self, needed: Iterable[str] = ()) -> dict[str, ToolSpec]:
        """What an episode dispatches: the sandbox's tools with the built registry's (categories,
        availability) over them; unbuilt, the manifest's schema-only catalogs stand in for it (they need
        no server: the engine serves them in synthesized and hybrid mode, live mode refuses them as
        `unavailable`), so a task synthesis wrote over `merged()` finds every tool it names.

        `needed`: the tool ids the tasks to run name. When some are not there and the harvested catalog
        holds them (tasks of `cworld synth --pool harvested` with no `cworld registry build --harvested`),
        the harvested tools are added, every one: the pool those tasks were written over, which an agent's
        search ranks among."""
        tools = {**self.sandbox, **by_id(self.built or self.catalogs)}
        missing = {t for t in needed if t not in tools}
        if missing and missing & {t.id for t in self.harvested}:
            tools.update(by_id(self.harvested))
        return tools

    def tasks_tools(self, tasks: Iterable[Task]) -> dict[str, ToolSpec]:
        """`episode()` for these tasks: every tool id their public parts name."""
        return self.episode({tool for task in tasks for tool in task.public().tools})

    def merged(self, *, catalogs: bool = True, recorded: bool = True) -> dict[str, ToolSpec]:
        """`episode()` when built (an empty build counts as none); else the sandbox's tools plus the
        stand-ins asked for."""
        if self.built:
            return self.episode()
        extra = (self.catalogs if catalogs else []) + (self.recorded if recorded else [])
        return {**self.sandbox, **by_id(extra)}

    @cached_property
    def tools(self) -> list[ToolSpec]:
        """Every tool: the built registry as built, else the sandbox's, the catalogs' and the recorded."""
        if self.built is not None:
            return self.built
        return list(self.sandbox.values()) + self.catalogs + self.recorded

    @property
    def source(self) -> str:
        if self.built is not None:
            return f"the built registry ({self.built_path})"
        return "sandbox apps, schema-only catalogs and the recorded real-server tools"

    def find(self, tool_id: str) -> ToolSpec:
        """The tool `server/name` of `tools`; a one-line error with the closest ids otherwise."""
        found = by_id(self.tools)
        if tool_id in found:
            return found[tool_id]
        if "/" not in tool_id:
            raise UsageError(f"'{tool_id}' is not SERVER/TOOL (e.g. mail/list_messages)")
        close = difflib.get_close_matches(tool_id, list(found), n=3, cutoff=0.6)
        hint = (f"; did you mean {', '.join(close)}?" if close
                else "; `cworld engine cards --json` lists the tools")
        raise UsageError(f"unknown tool '{tool_id}' in {self.source}{hint}")


def environment_tools(env: Environment | None = None, workspace: Workspace | None = None) -> ToolList:
    """The environment's tools (see the module docstring); nothing is read until a layer is used."""
    return ToolList(env, workspace)
