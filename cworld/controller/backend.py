"""The one call path: `agent -> StateController -> Backend.call(tool, args) -> ToolResult`.

Live, synthesized and hybrid backends implement the same protocol; the controller does not know which
it has. A backend is opened once per episode (one isolated sandbox session / scratch space / simulated world).
"""

from __future__ import annotations

from typing import Any, Protocol

from cworld.data_model import ToolResult, ToolSpec


class Backend(Protocol):
    mode: str

    async def open(self, seed: int) -> None:
        """Start an isolated episode world for this seed."""
        ...

    async def call(self, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        """Run (or simulate) one call. Tool faults come back as error results; only cworld bugs raise."""
        ...

    async def end_state(self) -> dict[str, Any] | None:
        """The sandbox end state (live), or the simulated world state, for state-diff scoring."""
        ...

    async def close(self) -> None: ...
