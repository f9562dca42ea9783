"""`cworld servers install|status`: the real MCP servers in the workspace."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from cworld.cli.common import echo_json, environment, json_option, workspace
from cworld.registry.install import InstallOutcome, install_servers, installed_status
from cworld.registry.manifest import load_manifest


@click.group("servers")
def command() -> None:
    """Install and inspect the real MCP servers of the manifest (registry/servers.yaml)."""


@command.command("install")
@click.option("--only", multiple=True, metavar="ID", help="Install only this server (repeatable).")
@click.option("--force", is_flag=True, help="Reinstall even when the stamp says it is installed.")
@click.option("--harvested", metavar="NAME", default=None,
              help="Install a harvested server instead, validate it offline, keep it live if a tool is usable.")
@json_option
@click.pass_context
def install(ctx: click.Context, only: tuple[str, ...], force: bool, harvested: str | None, as_json: bool) -> None:
    """npm servers into <workspace>/servers/npm, each PyPI server into its own venv; skips installed ones."""
    ws = workspace(ctx)
    if harvested:
        _install_harvested(ctx, harvested, as_json)
        return
    console = Console(stderr=True)

    def report(o: InstallOutcome) -> None:
        if not as_json:
            style = {"installed": "green", "skipped": "dim", "failed": "red"}[o.status]
            console.print(f"[{style}]{o.status:9}[/] {o.server:14} {o.seconds:6.1f}s  {o.detail}")

    outcomes = install_servers(
        load_manifest(environment(ctx)),
        ws.root / "servers",
        only=list(only) or None,
        force=force,
        on_done=report,
    )
    if as_json:
        echo_json([o.as_dict() for o in outcomes])
    failed = [o.server for o in outcomes if o.status == "failed"]
    if failed:
        raise click.ClickException(
            f"{len(failed)} server(s) failed to install: {', '.join(failed)}; the others are installed"
        )


@command.command("status")
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Which real servers are installed in the workspace, and whether their version matches the manifest."""
    data = installed_status(environment(ctx), workspace(ctx))
    if as_json:
        echo_json(data)
        return
    table = Table(title="real MCP servers")
    table.add_column("server")
    table.add_column("status")
    for sid, line in data.items():
        table.add_row(sid, line)
    Console().print(table)


def _install_harvested(ctx: click.Context, name: str, as_json: bool) -> None:
    import asyncio

    from cworld.registry.harvest.live import install_harvested

    done = asyncio.run(install_harvested(environment(ctx), workspace(ctx), name))
    counts = done.validation.stage_counts()
    if as_json:
        echo_json({"server": name, "kept": done.kept, "stages": counts, "reason": done.validation.reason})
        return
    verdict = ("[green]kept: it runs live with `cworld registry build --harvested`[/green]" if done.kept
               else "[red]not kept: no tool was usable offline; it stays schema-only[/red]")
    Console().print(f"{name}: {len(done.validation.tools)} tools, {counts['usable']} usable, "
                    f"{counts['invocable']} invocable, {counts['available']} available; {verdict}")
