"""`cworld sandbox`: list the sandbox apps and stateless servers, serve one over stdio or HTTP."""

from __future__ import annotations

from typing import Any

import click

from cworld.cli.common import echo_json, json_option


@click.group("sandbox")
def command() -> None:
    """Our own MCP servers: stateful apps over one seeded world, and stateless tool servers."""


def _rows() -> list[dict[str, Any]]:
    from cworld.sandbox.catalog import all_apps

    return [
        {
            "name": app.name,
            "kind": "stateful" if app.stateful else "stateless",
            "category": app.category,
            "tools": len(app.tool_methods()),
            "description": app.description.strip().splitlines()[0] if app.description else "",
        }
        for app in all_apps()
    ]


def _print_table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="sandbox servers")
    for col, justify in (("name", "left"), ("kind", "left"), ("category", "left"), ("tools", "right")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    table.add_column("description", overflow="fold")
    for row in rows:
        table.add_row(row["name"], row["kind"], row["category"], str(row["tools"]), row["description"])
    total = sum(r["tools"] for r in rows)
    console = Console()
    console.print(table)
    console.print(f"{len(rows)} servers, {total} tools")


@command.command("list")
@json_option
def list_cmd(as_json: bool) -> None:
    """Show every sandbox server: stateful or stateless, category, tool count."""
    rows = _rows()
    if as_json:
        echo_json(rows)
    else:
        _print_table(rows)


@command.command("serve")
@click.argument("app")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the world the app starts in.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address (local only by default).")
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP port.")
def serve_cmd(app: str, seed: int, transport: str, host: str, port: int) -> None:
    """Serve APP as an MCP server until stopped (stdio: until the client closes the pipe)."""
    from cworld.sandbox.serve import serve

    if transport == "http":
        click.echo(f"serving sandbox app '{app}' (seed {seed}) at http://{host}:{port}/mcp", err=True)
    serve(app, seed=seed, transport=transport, host=host, port=port)  # type: ignore[arg-type]
