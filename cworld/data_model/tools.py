"""Tools, servers and tool results: what crosses the boundary between agents, backends and the registry."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cworld.data_model.versioning import Versioned

ErrorClass = Literal[
    "invalid_args",
    "not_found",
    "auth",
    "rate_limit",
    "timeout",
    "unavailable",
    "server_crash",
    "business",
    "infra",
]
"""Why a tool call failed. `server_crash` and `infra` are never the agent's fault."""

INFRA_ERROR_CLASSES: frozenset[str] = frozenset({"server_crash", "infra"})

ServerKind = Literal["sandbox", "real", "catalog"]
Transport = Literal["stdio", "http", "memory", "catalog"]
Availability = Literal["live", "schema-only"]


class ToolAnnotations(BaseModel):
    """MCP tool annotations (hints). `None` means the server did not say."""

    model_config = ConfigDict(extra="allow")

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolSpec(Versioned):
    """One tool as the registry knows it. `id` is `server/name`, unique across an environment."""

    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations = Field(default_factory=ToolAnnotations)
    category: str | None = None
    availability: Availability = "live"
    server_kind: ServerKind = "sandbox"

    @property
    def id(self) -> str:
        return f"{self.server}/{self.name}"

    @property
    def is_read_only(self) -> bool:
        return bool(self.annotations.read_only_hint)


class InstallSpec(BaseModel):
    """How `cworld servers install` gets a real server into the workspace."""

    model_config = ConfigDict(extra="forbid")

    npm: str | None = None
    pypi: str | None = None
    pip_extra: list[str] = Field(default_factory=list, description="extra requirements for the server's venv, e.g. 'mcp<2'")
    entry: str | None = Field(None, description="console script (pypi) or JS entry relative to the npm package")


class ServerSpec(BaseModel):
    """One entry of `registry/servers.yaml`. Credentials are env var NAMES, never values."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: ServerKind
    transport: Transport = "stdio"
    description: str = ""
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="non-secret env values; may use {scratch} placeholders")
    credentials: list[str] = Field(default_factory=list, description="names of env vars holding secrets")
    url: str | None = None
    app: str | None = Field(None, description="sandbox app name (kind=sandbox)")
    catalog: str | None = Field(None, description="path of a schema-only catalog (kind=catalog)")
    category_hints: list[str] = Field(default_factory=list)
    tool_categories: dict[str, str] = Field(default_factory=dict, description="tool name -> card, explicit")
    install: InstallSpec | None = None
    probe_args: dict[str, dict[str, Any]] = Field(default_factory=dict)
    timeout_s: float = 30.0
    needs: list[str] = Field(default_factory=list, description="local services the server needs, e.g. 'postgres'")


class ToolCall(BaseModel):
    """A call an agent makes. `id` pairs the call with its result in exports."""

    id: str
    tool: str = Field(description="tool id, `server/name`")
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(BaseModel):
    """What a tool returned, normalized across MCP transports, the World Engine and injected faults."""

    content: list[dict[str, Any]] = Field(default_factory=list, description="MCP content blocks, e.g. {type: text, text}")
    structured_content: dict[str, Any] | None = None
    is_error: bool = False
    error_class: ErrorClass | None = None
    meta: dict[str, Any] = Field(default_factory=dict, description="latency_ms, source (live/engine/fault), fallback...")

    @property
    def text(self) -> str:
        """All text blocks joined; the structured content as JSON when there is no text."""
        parts = [str(b.get("text", "")) for b in self.content if b.get("type") == "text"]
        if parts:
            return "\n".join(parts)
        if self.structured_content is not None:
            return json.dumps(self.structured_content, ensure_ascii=False)
        return ""

    @property
    def is_infra_error(self) -> bool:
        return self.is_error and self.error_class in INFRA_ERROR_CLASSES

    @classmethod
    def ok(cls, structured: dict[str, Any] | None = None, text: str | None = None, **meta: Any) -> ToolResult:
        if text is None:
            text = json.dumps(structured, ensure_ascii=False) if structured is not None else ""
        return cls(content=[{"type": "text", "text": text}], structured_content=structured, meta=meta)

    @classmethod
    def error(cls, error_class: ErrorClass, message: str, **meta: Any) -> ToolResult:
        return cls(content=[{"type": "text", "text": message}], is_error=True, error_class=error_class, meta=meta)
