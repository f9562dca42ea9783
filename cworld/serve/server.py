"""The MCP face of served episodes: control tools, the episode's tools, observations as MCP results.

Tools a session sees:
- always `list_tasks` (the tasks' public part) and `start_episode(task, seed, mode, policy, access, agent)`,
  which returns the task as the user states it;
- during an episode, `submit(answer)` and the episode's callable tools under MCP names (`server/name` ->
  `server__name`, see `names.py`); in `search` access at first only `search_tools`, and every tool a search
  finds joins the list. Each change of the list is announced with `notifications/tools/list_changed`, on
  the response stream of the call that changed it;
- outside an episode, `search_tools` browses the whole built registry (when it is built).

A tool result is the observation the episode recorded: its content blocks, its structured content, and
`isError` for errors and injected faults; the user's mid-episode messages follow as text blocks
(`[user] ...`); `_meta.cworld` carries the turn, the error class, the interventions and the messages.

Sessions: an episode belongs to the MCP session whose calls started it (the per-connection state of the
SDK: one per HTTP `Mcp-Session-Id`, one for stdio). Episodes are stateful, so the server speaks the
handshake protocol era (2025-11-25 and before): it does not answer `server/discover`, and a client on
`mode="auto"` falls back to `initialize` by itself. When a session ends with its episode open, the episode
is stored as `abandoned` (see `episodes.py`).

What a client sees of the server: `serverInfo` names `cworld` and its package version, and the `logging`
capability sends the episode's events (faults injected, user messages, start and end) as log messages on
the response stream of the call they belong to (see `logs.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp.types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from cworld.data_model import ToolResult
from cworld.errors import CworldError
from cworld.rollout.driver import Step
from cworld.serve.browse import MAX_K, RegistryBrowse
from cworld.serve.episodes import Ended, EpisodeService, SessionState
from cworld.serve.logs import DEFAULT_LEVEL, entries, shown
from cworld.serve.names import ToolNames

LIST_TASKS, START, SUBMIT, SEARCH = "list_tasks", "start_episode", "submit", "search_tools"
CONTROL = frozenset({LIST_TASKS, START, SUBMIT, SEARCH})
SESSION_KEY = "cworld.session"
INSTRUCTIONS = (
    "cworld episodes. Call list_tasks, then start_episode with a task id: it returns the user's request and "
    "the task's tools appear in tools/list. Work with them; the user may add requirements between calls. "
    "End with submit(answer): it returns the reward."
)


class StartArgs(BaseModel):
    task: str = Field(description="the task id, from list_tasks")
    seed: int = Field(0, ge=0, description="the episode seed (faults, distractors)")
    mode: str | None = Field(None, description="live, synthesized or hybrid (default: the server's)")
    policy: str | None = Field(None, description="fault policy name (default: the server's)")
    access: str | None = Field(None, description="tool access: full, search or rag-K (default: the server's)")
    agent: str | None = Field(None, description="a name for the agent under test (it picks the fault timing)")


class SubmitArgs(BaseModel):
    answer: str = Field(description="the final answer to the user; ends the episode")


class SearchArgs(BaseModel):
    query: str = Field(description="what you want to do, in plain words", max_length=1000)
    k: int = Field(5, ge=1, le=MAX_K, description="how many tools to return")


@dataclass
class Served:
    """An MCP session's state: its episode and the MCP names its tools were given."""

    state: SessionState
    names: ToolNames = field(default_factory=lambda: ToolNames(reserved=frozenset(CONTROL)))
    announced: frozenset[str] = frozenset()
    log_level: types.LoggingLevel = DEFAULT_LEVEL


class EpisodeServer(Server[Any]):
    """Advertises `tools.listChanged` on every transport (the HTTP manager builds its own init options)."""

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      experimental_capabilities: dict[str, dict[str, Any]] | None = None,
                                      extensions: dict[str, dict[str, Any]] | None = None) -> InitializationOptions:
        return super().create_initialization_options(notification_options or NotificationOptions(tools_changed=True),
                                                     experimental_capabilities, extensions)


def build_server(service: EpisodeService, browse: RegistryBrowse | None = None) -> EpisodeServer:
    handlers = _Handlers(service, browse)
    server = EpisodeServer("cworld", version=package_version(), instructions=INSTRUCTIONS,
                           on_list_tools=handlers.list_tools, on_call_tool=handlers.call_tool)
    server.add_request_handler("server/discover", types.RequestParams, _no_discover)
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, handlers.set_log_level)
    return server


def package_version() -> str:
    """The installed cworld's version (what `serverInfo.version` tells a client); the source's when the
    package is run from a checkout that was never installed."""
    try:
        return version("cworld")
    except PackageNotFoundError:
        from cworld import __version__

        return __version__


async def _no_discover(ctx: ServerRequestContext[Any], params: types.RequestParams) -> types.DiscoverResult:
    raise MCPError(METHOD_NOT_FOUND, "cworld episodes are stateful: connect with the initialize handshake")


class _Handlers:
    def __init__(self, service: EpisodeService, browse: RegistryBrowse | None) -> None:
        self.service, self.browse = service, browse

    async def list_tools(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        served = self._served(ctx)
        tools = self._tools(served)
        served.announced = frozenset(t.name for t in tools)
        return types.ListToolsResult(tools=tools)

    async def set_log_level(self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
                            ) -> types.EmptyResult:
        self._served(ctx).log_level = params.level
        return types.EmptyResult()

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                        ) -> types.CallToolResult:
        served = self._served(ctx)
        arguments = dict(params.arguments or {})
        try:
            async with served.state.lock:
                was_open = served.state.open
                result = await self._call(served, params.name, arguments)
                await self._log(ctx, served, params.name, result, was_open)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            return _error(f"{params.name}: {where}: {first['msg']}")
        except CworldError as exc:
            return _error(str(exc))
        if frozenset(t.name for t in self._tools(served)) != served.announced:
            await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
        return result

    async def _log(self, ctx: ServerRequestContext[Any], served: Served, name: str, result: types.CallToolResult,
                   was_open: bool) -> None:
        """The call's episode events, at the session's level, before its result (same response stream)."""
        is_open = served.state.open
        for entry in entries(name, result, started=is_open and not was_open, ended=was_open and not is_open):
            if shown(entry, served.log_level):
                await ctx.session.send_notification(entry.notification(), related_request_id=ctx.request_id)

    # --- the calls ----------------------------------------------------------------------------------
    async def _call(self, served: Served, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        state = served.state
        if name == LIST_TASKS:
            tasks = self.service.list_tasks()
            return _ok({"tasks": tasks}, "\n".join(f"{t['id']}: {t['query']}" for t in tasks) or "no tasks")
        if name == START:
            start = StartArgs.model_validate(arguments)
            served.names = ToolNames(reserved=frozenset(CONTROL))
            first = await self.service.start(state, start.task, seed=start.seed, mode=start.mode,
                                             policy=start.policy, access=start.access, agent=start.agent)
            return _ok(self._started(served, first), _task_text(first))
        if name == SUBMIT:
            answer = SubmitArgs.model_validate(arguments).answer
            step, ended = await self.service.act(state, {"final": answer})
            return self._ended_result(ended)
        if name == SEARCH and not state.open:
            if self.browse is None:
                return _error("no episode is open and the registry is not built; call start_episode first")
            found = self.browse.search(**SearchArgs.model_validate(arguments).model_dump())
            return _ok(found.model_dump(mode="json"), json.dumps(found.model_dump(mode="json"))[:4000])
        if name == SEARCH:
            search = SearchArgs.model_validate(arguments)
            step, ended = await self.service.act(state, {"search": search.query, "k": search.k})
        else:
            tool_id = served.names.tool_id(name)
            step, ended = await self.service.act(state, {"tool": tool_id, "arguments": arguments})
        return self._ended_result(ended) if ended is not None else self._observed(served, step)

    def _started(self, served: Served, first: dict[str, Any]) -> dict[str, Any]:
        keep = ("episode_id", "task_id", "task", "constraints", "turn", "seed", "mode", "policy", "access", "agent",
                "max_turns", "user_messages")
        return {**{k: first[k] for k in keep}, "tools": [served.names.name(t["id"]) for t in first["tools"]]}

    def _observed(self, served: Served, step: Step) -> types.CallToolResult:
        assert step.raw is not None and step.raw.result is not None
        result, messages = step.raw.result, list(step.raw.user_messages)
        meta = {"turn": step.raw.turn, "error_class": result.error_class, "user_messages": messages,
                "interventions": step.interventions}
        structured = dict(result.structured_content) if isinstance(result.structured_content, dict) else None
        if structured is not None and result.meta.get("source") == "search":  # the view gains names, not the record
            structured["tools"] = [{**tool, "name": served.names.name(str(tool.get("id", "")))}
                                   for tool in structured.get("tools", [])]
        return _result(result, messages, structured, meta)

    def _ended_result(self, ended: Ended | None) -> types.CallToolResult:
        assert ended is not None
        summary = ended.summary(self.service.run)
        status = ended.trajectory.status
        text = f"episode {summary['episode_id']} ended ({status}); reward {summary['reward']:g}"
        if status == "infra_error":
            errors = ended.trajectory.infra_errors
            text += (f": the environment failed ({errors[0].message if errors else 'unknown'}); not counted "
                     "against you, start another episode")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=summary, is_error=status == "infra_error")

    # --- sessions and listings ----------------------------------------------------------------------
    def _served(self, ctx: ServerRequestContext[Any]) -> Served:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise MCPError(METHOD_NOT_FOUND, "cworld episodes are stateful: connect with the initialize handshake "
                                             "(mode='legacy' or 'auto')")
        connection = getattr(ctx.session, "_connection", None)  # the SDK's per-connection state (no public accessor)
        if connection is None:
            raise MCPError(METHOD_NOT_FOUND, "this MCP transport has no session to hold an episode")
        served = connection.state.get(SESSION_KEY)
        if served is None:
            state = SessionState(key=connection.session_id) if connection.session_id else SessionState()
            served = connection.state[SESSION_KEY] = Served(state)
            connection.exit_stack.push_async_callback(self.service.abandon, state)
        return served  # type: ignore[no-any-return]

    def _tools(self, served: Served) -> list[types.Tool]:
        tools = [_control(LIST_TASKS, "List the tasks: id, the user's request, its stated constraints.", None),
                 _control(START, "Start an episode of a task; returns the user's request. The task's tools then "
                                 "appear in tools/list.", StartArgs)]
        driver = served.state.driver if served.state.open else None
        if driver is None:
            if self.browse is not None:
                tools.append(_control(SEARCH, "Search the whole tool registry (outside an episode: browse only).",
                                      SearchArgs))
            return tools
        tools.append(_control(SUBMIT, "Give the final answer to the user; ends the episode and returns the reward.",
                              SubmitArgs))
        toolbox = driver.episode.toolbox
        if toolbox.offers_search:
            tools.append(_control(SEARCH, "Search for tools that can do something; found tools become callable.",
                                  SearchArgs))
        for spec in toolbox.visible():
            schema = spec.input_schema if spec.input_schema.get("type") == "object" else {"type": "object"}
            tools.append(types.Tool(name=served.names.name(spec.id), title=spec.id,
                                    description=spec.description or spec.name, input_schema=schema))
        return tools


def _control(name: str, description: str, args: type[BaseModel] | None) -> types.Tool:
    schema = args.model_json_schema() if args is not None else {"type": "object", "properties": {}}
    return types.Tool(name=name, description=description, input_schema=schema)


def _task_text(first: dict[str, Any]) -> str:
    lines = [first["task"], *[f"- {c}" for c in first["constraints"]], *[f"[user] {m}" for m in first["user_messages"]]]
    if first.get("context"):
        lines += ["", first["context"]]
    return "\n".join(lines)


def _ok(structured: dict[str, Any], text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _result(result: ToolResult, messages: list[str], structured: dict[str, Any] | None,
            meta: dict[str, Any]) -> types.CallToolResult:
    """The observation as an MCP result; a content block this SDK cannot carry falls back to its text."""
    extra = [{"type": "text", "text": f"[user] {m}"} for m in messages]
    content = (result.content or [{"type": "text", "text": result.text}]) + extra
    try:
        return types.CallToolResult.model_validate({"content": content, "structuredContent": structured,
                                                    "isError": result.is_error, "_meta": {"cworld": meta}})
    except ValueError:
        blocks = [types.TextContent(type="text", text=str(b.get("text", ""))) for b in
                  [{"text": result.text}, *extra]]
        return types.CallToolResult(content=list(blocks), structured_content=structured, is_error=result.is_error,
                                    _meta={"cworld": meta})
