"""What the registry reads about a sandbox app without starting it: `ToolSpec`s and prerequisite edges."""

from __future__ import annotations

from dataclasses import replace

from cworld.data_model.tools import ToolAnnotations, ToolSpec
from cworld.sandbox.framework.app import Prerequisite, SandboxApp
from cworld.sandbox.framework.binding import app_bindings


def tool_specs(app_cls: type[SandboxApp]) -> list[ToolSpec]:
    """One live `ToolSpec` per tool, with exactly the schemas and hints the MCP server lists."""
    specs = []
    for binding in app_bindings(app_cls):
        tool, meta = binding.tool, binding.meta
        specs.append(
            ToolSpec(
                server=app_cls.name,
                name=meta.name,
                description=meta.description,
                input_schema=dict(tool.parameters),
                output_schema=tool.output_schema,
                annotations=ToolAnnotations(
                    title=tool.annotations.title if tool.annotations else None,
                    read_only_hint=meta.read_only,
                    destructive_hint=meta.destructive,
                    idempotent_hint=meta.idempotent,
                    open_world_hint=meta.open_world,
                ),
                category=app_cls.category,
                availability="live",
                server_kind="sandbox",
            )
        )
    return specs


def tool_id(app_cls: type[SandboxApp], name: str) -> str:
    """`app/tool`; a name that already holds a `/` points into another app and is kept as is."""
    return name if "/" in name else f"{app_cls.name}/{name}"


def app_prerequisites(app_cls: type[SandboxApp]) -> list[Prerequisite]:
    """The app's declared edges with both ends as tool ids (`mail/search_contacts` -> `mail/send_email`)."""
    return [
        replace(edge, before=tool_id(app_cls, edge.before), after=tool_id(app_cls, edge.after))
        for edge in app_cls.prerequisites
    ]


def unknown_prerequisite_tools(app_cls: type[SandboxApp], known_ids: set[str] | None = None) -> list[str]:
    """Edge ends that name no tool: the app's own tools, plus `known_ids` for edges into other apps."""
    own = {tool_id(app_cls, b.meta.name) for b in app_bindings(app_cls)}
    known = own | (known_ids or set())
    ends = {end for e in app_prerequisites(app_cls) for end in (e.before, e.after)}
    return sorted(end for end in ends if end not in known)
