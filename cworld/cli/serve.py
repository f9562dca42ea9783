"""`cworld serve`: an MCP server with `search_tools` and `call_tool` over the built registry."""

from __future__ import annotations

import asyncio
import os

import click

from cworld.cli.common import environment, workspace
from cworld.errors import UsageError
from cworld.registry.serve import RegistryService, run


@click.command("serve")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP port on 127.0.0.1.")
@click.option(
    "--token-env", metavar="NAME", help="Env var holding a bearer token that HTTP clients must send."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sandbox session.")
@click.option(
    "--timeout", "timeout_s", type=float, default=None, help="Seconds per tool call (default: each server's)."
)
@click.pass_context
def command(
    ctx: click.Context, transport: str, port: int, token_env: str | None, seed: int, timeout_s: float | None
) -> None:
    """Serve the registry over MCP: stdio, or streamable HTTP on 127.0.0.1:PORT/mcp."""
    token = None
    if token_env:
        token = os.environ.get(token_env)
        if not token:
            raise UsageError(
                f"--token-env {token_env}: that env var is not set; export it or drop --token-env"
            )
    if transport == "stdio" and token_env:
        raise UsageError(
            "--token-env applies to --transport http only; stdio is private to the client process"
        )
    service = RegistryService(environment(ctx), workspace(ctx), seed=seed, timeout_s=timeout_s)
    if transport == "http":
        click.echo(
            f"serving the registry on http://127.0.0.1:{port}/mcp"
            + (" (bearer token required)" if token else ""),
            err=True,
        )
    asyncio.run(run(service, transport, port, token))
