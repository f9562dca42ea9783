"""The adapter from a sandbox app to a real MCP server: one `SandboxServer` per (session, app).

Every call goes through `SandboxServer.call_tool`, which owns the rules all apps share:

- arguments are validated against the schema first; a bad or unknown argument is an `invalid_args`
  error that names the field, and nothing changes (not even the clock);
- otherwise the call costs virtual time (`session.tick()`), then runs the app's method;
- a tool that is not read-only runs under a checkpoint of its own app's state (apps write only their
  own state; the clock and id counters are in the checkpoint too; the state's part is a journal of what
  the call touches, `journal.py`, not a copy of the whole state): an `AppError` (a business error) or
  a crash restores it, so a failed call changes no state; the error text is what the agent reads;
  the virtual time the failed call took is kept, as time passes for a person who gets an error;
- a Python exception inside a tool never escapes: it becomes an error result starting "internal error".

Calls are atomic with respect to other calls on the same session: the method is synchronous and runs
without yielding to the event loop, so servers of one session may be used concurrently.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from pydantic import ValidationError

from cworld.sandbox.framework.app import SandboxApp
from cworld.sandbox.framework.binding import ToolBinding, app_bindings
from cworld.sandbox.framework.session import CallCheckpoint, SandboxSession
from cworld.sandbox.framework.specs import app_prerequisites, tool_specs
from cworld.sandbox.framework.tools import ERROR_CLASS_OF_KIND, AppError

__all__ = [
    "SandboxServer",
    "app_prerequisites",
    "build_all",
    "build_server",
    "error_result",
    "tool_specs",
]

#: Key under a result's `_meta` where the server says what kind of error it returned.
META_KEY = "cworld"
INTERNAL_ERROR_PREFIX = "internal error"


def error_result(error_class: str, text: str, kind: str | None = None) -> CallToolResult:
    """An `isError` result; `_meta.cworld.error_class` maps onto cworld's ToolResult error classes."""
    meta = {META_KEY: {"error_class": error_class, "kind": kind or error_class}}
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True, _meta=meta)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validation_message(tool: str, exc: ValidationError) -> str:
    """One line naming every bad field, e.g. `invalid_args: send_message: page: Input should be ... (got 'x')`."""
    parts = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        got = "" if err["type"] == "missing" else f" (got {_shown(err.get('input'))})"
        parts.append(f"{field}: {err['msg']}{got}")
    return f"invalid_args: {tool}: " + "; ".join(parts) + ". Check the tool's input schema and call again."


class SandboxServer(MCPServer):
    """An MCPServer bound to one app of one session; see the module docstring for the call rules."""

    def __init__(self, session: SandboxSession, app: SandboxApp) -> None:
        bindings = app_bindings(type(app))
        super().__init__(
            name=app.name,
            title=app.title or app.name.capitalize(),
            description=app.description,
            instructions=_instructions(app),
            tools=[b.tool for b in bindings],
            log_level="WARNING",
        )
        self.session = session
        self.app = app
        self._bindings: dict[str, ToolBinding] = {b.meta.name: b for b in bindings}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        return self.call_tool_sync(name, arguments)

    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None) -> CallToolResult:
        """The whole call cycle, synchronously (also used directly by fast in-process runners)."""
        binding = self._bindings.get(name)
        if binding is None:
            known = ", ".join(sorted(self._bindings))
            return error_result("not_found", f"not_found: server '{self.app.name}' has no tool '{name}'; tools: {known}")
        arguments = arguments or {}
        unknown = sorted(set(arguments) - binding.parameter_names)
        if unknown:
            takes = ", ".join(sorted(binding.parameter_names)) or "no arguments"
            return error_result("invalid_args", f"invalid_args: {name}: unknown argument(s) {unknown}; it takes: {takes}")
        try:
            validated = binding.tool.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            return error_result("invalid_args", validation_message(name, exc))
        return self._run(binding, validated)

    def _run(self, binding: ToolBinding, validated: dict[str, Any]) -> CallToolResult:
        self.session.tick()
        checkpoint = None if binding.meta.read_only else self.session.begin_write(self.app.name)
        try:
            value = getattr(self.app, binding.attr)(**validated)
            return binding.tool.fn_metadata.convert_result(value)  # type: ignore[return-value]
        except AppError as exc:
            self._undo(checkpoint)
            return error_result(ERROR_CLASS_OF_KIND.get(exc.kind, "business"), str(exc), exc.kind)
        except Exception as exc:  # a bug in the app: reported as data, never raised into the transport
            self._undo(checkpoint)
            text = f"{INTERNAL_ERROR_PREFIX} in {self.app.name}/{binding.meta.name}: {type(exc).__name__}: {exc}"
            return error_result("server_crash", text, "internal")
        finally:
            if checkpoint is not None:
                self.session.end_write(checkpoint)

    def _undo(self, checkpoint: CallCheckpoint | None) -> None:
        if checkpoint is not None:
            self.session.undo_write(checkpoint)


def _instructions(app: SandboxApp) -> str:
    """The app description plus its ordering rules, so an agent reading only the server info knows them."""
    lines = [app.description.strip()]
    for edge in app.prerequisites:
        verb = "before" if edge.kind == "requires" else "to get what is needed by"
        via = f" (gives {edge.via})" if edge.via else ""
        note = f": {edge.note}" if edge.note else ""
        lines.append(f"- call {edge.before}{via} {verb} {edge.after}{note}")
    return "\n".join(lines)


def build_server(session: SandboxSession, app_name: str) -> SandboxServer:
    """The MCP server for one app of `session` (serve it, or talk to it in memory with `mcp.Client`)."""
    return SandboxServer(session, session.app(app_name))


def build_all(session: SandboxSession) -> dict[str, SandboxServer]:
    """A server for every app in the session, by app name; all share the session's state and clock."""
    return {name: build_server(session, name) for name in session.apps}
