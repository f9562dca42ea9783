"""The tools an episode can call, by id (`server/name`): the sandbox's, plus the built registry's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from cworld.data_model import ToolSpec
from cworld.environment import Workspace


@cache
def _sandbox_specs() -> tuple[ToolSpec, ...]:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.server import tool_specs

    return tuple(spec for app in all_apps() for spec in tool_specs(app))


def sandbox_tools() -> dict[str, ToolSpec]:
    """Every sandbox app's tools, exactly as their MCP servers list them."""
    return {t.id: t for t in _sandbox_specs()}


def registry_tools(workspace: Workspace) -> dict[str, ToolSpec]:
    """`<workspace>/registry/tools.jsonl` when the registry was built; empty otherwise."""
    from cworld.registry.build import load_tools

    if not (workspace.root / "registry" / "tools.jsonl").is_file():
        return {}
    return {t.id: t for t in load_tools(workspace)}


def environment_tools(workspace: Workspace | None = None) -> dict[str, ToolSpec]:
    """The registry's tools (with their categories and availability) over the sandbox's own listing."""
    tools = sandbox_tools()
    if workspace is not None:
        tools.update(registry_tools(workspace))
    return tools


def subset(tools: Mapping[str, ToolSpec], ids: Iterable[str]) -> dict[str, ToolSpec]:
    return {i: tools[i] for i in ids if i in tools}
