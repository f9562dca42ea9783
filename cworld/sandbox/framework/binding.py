"""Turn an app's `@tool` methods into MCP `Tool` registrations, without running anything.

The MCP SDK derives the input schema from a function's signature and the output schema from its return
annotation. Our tools are methods, often in modules with `from __future__ import annotations`, so the
signature is evaluated here once (strings resolved in the app's module) and handed to the SDK with `self`
dropped. The registered function is never invoked by the SDK: `SandboxServer.call_tool` runs the bound
method itself, so that ticking, checkpointing and error handling live in one place.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations

from cworld.sandbox.framework.app import SandboxApp
from cworld.sandbox.framework.tools import ToolMeta


@dataclass(frozen=True)
class ToolBinding:
    """One tool of one app class: its metadata, the method's attribute name and the SDK registration."""

    meta: ToolMeta
    attr: str
    tool: Tool

    @property
    def parameter_names(self) -> frozenset[str]:
        return frozenset(self.tool.parameters.get("properties", {}))


def method_signature(app_cls: type[SandboxApp], attr: str) -> inspect.Signature:
    """The method's signature with annotations evaluated and `self` dropped, as the agent sees it."""
    sig = inspect.signature(getattr(app_cls, attr), eval_str=True)
    params = list(sig.parameters.values())[1:]
    return sig.replace(parameters=params)


def _schema_function(name: str, doc: str, sig: inspect.Signature) -> Callable[..., Any]:
    """A stand-in carrying the signature the SDK reads; calling it is a bug (the server runs the method)."""

    def stand_in(**kwargs: Any) -> Any:
        raise RuntimeError(f"tool {name} must be called through SandboxServer.call_tool")

    stand_in.__signature__ = sig  # type: ignore[attr-defined]
    stand_in.__name__ = name
    stand_in.__qualname__ = name
    stand_in.__doc__ = doc
    stand_in.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()}
    stand_in.__annotations__["return"] = sig.return_annotation
    return stand_in


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def mcp_annotations(meta: ToolMeta) -> ToolAnnotations:
    return ToolAnnotations(
        title=_title(meta.name),
        read_only_hint=meta.read_only,
        destructive_hint=meta.destructive,
        idempotent_hint=meta.idempotent,
        open_world_hint=meta.open_world,
    )


def _make_tool(app_cls: type[SandboxApp], meta: ToolMeta, attr: str) -> Tool:
    sig = method_signature(app_cls, attr)
    fn = _schema_function(meta.name, meta.description, sig)
    tool = Tool.from_function(
        fn, name=meta.name, description=meta.description, annotations=mcp_annotations(meta), structured_output=True
    )
    # Unknown arguments are rejected by the server (a misspelt optional argument must not pass silently),
    # so the published schema says so too.
    tool.parameters["additionalProperties"] = False
    return tool


_BINDINGS: dict[type[SandboxApp], tuple[ToolBinding, ...]] = {}


def app_bindings(app_cls: type[SandboxApp]) -> tuple[ToolBinding, ...]:
    """Every tool of `app_cls`, in definition order. Cached: schemas depend on the class only."""
    found = _BINDINGS.get(app_cls)
    if found is None:
        found = tuple(ToolBinding(meta, attr, _make_tool(app_cls, meta, attr)) for meta, attr in app_cls.tool_methods())
        _BINDINGS[app_cls] = found
    return found
