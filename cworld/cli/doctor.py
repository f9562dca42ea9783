"""`cworld doctor`: is this machine ready, and what is configured?"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from cworld.cli.common import echo_json, environment, json_option, workspace
from cworld.doctor import report


@click.command("doctor")
@json_option
@click.option("--no-ping", is_flag=True, help="Do not call configured models to see whether they answer.")
@click.pass_context
def command(ctx: click.Context, as_json: bool, no_ping: bool) -> None:
    """Versions, embedding model, LLM roles (and whether each answers), installed real MCP servers."""
    data = report(environment(ctx), workspace(ctx), ping=not no_ping)
    if as_json:
        echo_json(data)
        return
    table = Table(title="cworld doctor", show_header=False)
    for key in ("cworld", "python", "platform", "environment", "workspace"):
        table.add_row(key, str(data[key]))
    for name, version in data["packages"].items():
        table.add_row(f"package {name}", version or "[red]missing[/red]")
    table.add_row("embedding", f"{data['embedding']['model']} ({data['embedding']['source']})")
    for role, value in data["llm_roles"].items():
        table.add_row(f"role {role}", str(value))
    for role, budget in data["llm_budgets"].items():
        table.add_row(f"budget {role}", f"{budget['max_tokens']:,} output tokens, {budget['timeout_s']:g} s per call "
                                        f"({budget['source']})")
    servers = data["real_servers"]
    if isinstance(servers, dict):
        for sid, status in servers.items():
            table.add_row(f"server {sid}", str(status))
    Console().print(table)
