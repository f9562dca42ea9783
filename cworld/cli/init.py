"""`cworld init DIR`: a new environment, copied from the selected (or packaged) one."""

from __future__ import annotations

from pathlib import Path

import click

from cworld.cli.common import environment
from cworld.environment import init_environment


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path))
@click.pass_context
def command(ctx: click.Context, directory: Path) -> None:
    """Create a new environment in DIRECTORY by copying the current one's content folders."""
    target = init_environment(directory, environment(ctx))
    click.echo(f"created environment at {target}")
    click.echo(f"use it with: cworld --env {target} ...  (or CWORLD_ENV={target})")
