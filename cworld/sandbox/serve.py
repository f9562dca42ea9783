"""Serve one sandbox app as a standalone MCP server (stdio or streamable HTTP), for any MCP client.

The served app lives in a full session (every app, one clock), seeded like an episode, so its state is
exactly what an in-memory run with the same seed sees.
"""

from __future__ import annotations

from typing import Literal

from cworld.errors import UsageError
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.server import SandboxServer, build_server
from cworld.sandbox.framework.session import SandboxSession

Transport = Literal["stdio", "http"]
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def make_server(app_name: str, seed: int = 0) -> SandboxServer:
    """The server for `app_name` over a fresh session; an unknown name is the user's error."""
    names = [a.name for a in all_apps()]
    if app_name not in names:
        raise UsageError(f"no sandbox app '{app_name}'; choose one of: {', '.join(names)} (see `cworld sandbox list`)")
    return build_server(SandboxSession(seed=seed, apps=all_apps()), app_name)


def serve(
    app_name: str,
    seed: int = 0,
    transport: Transport = "stdio",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
) -> None:
    """Block serving the app until the client goes away (stdio) or the process is stopped (http)."""
    server = make_server(app_name, seed)
    if transport == "stdio":
        server.run("stdio")
    elif transport == "http":
        server.run("streamable-http", host=host, port=port)
    else:
        raise UsageError(f"unknown transport '{transport}'; use stdio or http")
