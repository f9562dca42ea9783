"""Helpers the stateless-server tests share: one server per app, and calls that must succeed or fail."""

from __future__ import annotations

from cworld.sandbox.catalog import app_by_name
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server


def stateless_server(name: str) -> SandboxServer:
    return build_server(SandboxSession(0, [app_by_name(name)]), name)


def ok(server: SandboxServer, tool: str, **args: object) -> dict:
    result = server.call_tool_sync(tool, args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def fails(server: SandboxServer, tool: str, **args: object) -> str:
    result = server.call_tool_sync(tool, args)
    assert result.is_error, f"{tool} should fail: {result.structured_content}"
    assert result.meta["cworld"]["kind"] == "invalid", result.content[0].text
    return result.content[0].text
