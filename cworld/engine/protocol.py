"""The World Engine protocol: predict a tool's response from the tool, the arguments and the session so far."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from cworld.data_model import ToolResult, ToolSpec


class LogEntry(BaseModel):
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: ToolResult


class SessionLog(BaseModel):
    """The calls and responses of one episode so far; the engine's memory of the simulated world."""

    seed: int = 0
    entries: list[LogEntry] = Field(default_factory=list)

    def record(self, tool: str, arguments: dict[str, Any], result: ToolResult) -> None:
        self.entries.append(LogEntry(tool=tool, arguments=arguments, result=result))


class WorldEngine(Protocol):
    name: str

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        """A realistic response; tool faults are ToolResults with is_error, never exceptions."""
        ...
