"""Which tools the engine commands look at: the built registry when there is one, else what is known
without building: every sandbox app's tools, the schema-only catalogs of the manifest, and the real
servers' tool definitions recorded in the repo (`tests/fixtures/real_tools.json`, in a source checkout).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import ServerSpec, ToolSpec
from cworld.environment import Environment, Workspace
from cworld.errors import CworldError, UsageError

REAL_TOOLS_FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "real_tools.json"


@dataclass
class Toolset:
    tools: list[ToolSpec]
    source: str
    servers: dict[str, ServerSpec] = field(default_factory=dict)

    def find(self, tool_id: str) -> ToolSpec:
        """The tool `server/name`; a one-line error with the closest ids otherwise."""
        by_id = {t.id: t for t in self.tools}
        if tool_id in by_id:
            return by_id[tool_id]
        if "/" not in tool_id:
            raise UsageError(f"'{tool_id}' is not SERVER/TOOL (e.g. mail/list_messages)")
        close = difflib.get_close_matches(tool_id, list(by_id), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `cworld engine cards --json` lists the tools"
        raise UsageError(f"unknown tool '{tool_id}' in {self.source}{hint}")


def load_toolset(env: Environment, workspace: Workspace) -> Toolset:
    servers = _manifest(env)
    built = workspace.root / "registry" / "tools.jsonl"
    if built.is_file():
        from cworld.registry.build import load_tools

        return Toolset(load_tools(workspace), f"the built registry ({built})", servers)
    tools = sandbox_tools() + _catalog_tools(env, servers) + real_fixture_tools()
    return Toolset(tools, "sandbox apps, schema-only catalogs and the recorded real-server tools", servers)


def sandbox_tools() -> list[ToolSpec]:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import tool_specs

    return [t for app in all_apps() for t in tool_specs(app)]


def real_fixture_tools(path: Path = REAL_TOOLS_FIXTURE) -> list[ToolSpec]:
    if not path.is_file():
        return []
    return [ToolSpec.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]


def _manifest(env: Environment) -> dict[str, ServerSpec]:
    from cworld.registry.manifest import load_manifest

    try:
        return {s.id: s for s in load_manifest(env)}
    except CworldError:
        return {}


def _catalog_tools(env: Environment, servers: dict[str, ServerSpec]) -> list[ToolSpec]:
    from cworld.registry.manifest import load_catalog

    return [t for spec in servers.values() if spec.kind == "catalog" for t in load_catalog(env, spec)]
